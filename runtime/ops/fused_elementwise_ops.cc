// _FusedUnaryChain: a chain of float elementwise functions of one tensor
// (x -> Exp -> Tanh ...) that the elementwise fusion pass
// (common_runtime/elementwise_fusion.h) makes of single-consumer chains, so
// the data goes through memory once. Internal, as TensorFlow's _Fused* ops
// are: graphs do not ask for it, the optimizer writes it.
#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"

namespace tensorweave {

REGISTER_OP("_FusedUnaryChain")
    .Input("x: T")
    .Output("y: T")
    .Attr("T: {float}")
    .Attr("ops: list(string) >= 1")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc(
        "y = ops[n-1](...ops[1](ops[0](x))) elementwise, each op one of Exp, Log, Tanh, "
        "Sigmoid, Sqrt, Rsqrt and Relu.");

}  // namespace tensorweave
