// _FusedUnaryChain: a chain of float elementwise steps on one tensor
// (x -> Mul 0.5 -> Exp -> Tanh ...) that the elementwise fusion pass
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
    .Attr("scalars: list(float) = []")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc(
        "y = ops[n-1](...ops[0](x)) elementwise. A step is a function (Exp, Log, Tanh, "
        "Sigmoid, Sqrt, Rsqrt, Relu) or an operation with the scalar scalars[i]: Add, Sub, "
        "Mul, RealDiv, Maximum, Minimum compute x (op) scalar, RSub and RRealDiv scalar (op) "
        "x. scalars is empty or holds one value per step (ignored for functions).");

}  // namespace tensorweave
