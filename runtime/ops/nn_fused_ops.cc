// TensorFlow's fused ops as its grappler writes them into graphs, and as
// the conv fusion pass (common_runtime/conv_fusion.h) makes them:
// _FusedConv2D (a Conv2D followed by the ops named in fused_ops, e.g.
// ["BiasAdd", "Relu"], whose extra inputs are `args`) and _FusedMatMul
// (the same after a MatMul) and _FusedDepthwiseConv2dNative (the same after
// a DepthwiseConv2dNative). Inputs and attrs are TensorFlow 2.21's; the
// shapes are those of the Conv2D / MatMul / DepthwiseConv2dNative they
// replace, whose registered shape functions compute them. The dtypes are those with CPU kernels:
// TensorFlow's defs also admit half, int8 and qint8 (_FusedConv2D) and half
// and bfloat16 (_FusedMatMul), which its CPU runs through oneDNN builds
// only (and _FusedDepthwiseConv2dNative half and bfloat16); here such a
// node is refused at import instead of failing at its first run.
#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"

namespace tensorweave {
namespace {

using shape_inference::InferenceContext;

// The output shape of the op `unfused` (Conv2D or MatMul), whose inputs and
// attrs the fused op starts with.
Status UnfusedShape(const char* unfused, InferenceContext* c) {
  const OpDef* op_def = OpRegistry::Global()->LookUp(unfused);
  if (op_def == nullptr || !op_def->shape_fn) {
    return errors::Internal("no shape function registered for ", unfused);
  }
  return op_def->shape_fn(c);
}

}  // namespace

REGISTER_OP("_FusedConv2D")
    .Input("input: T")
    .Input("filter: T")
    .Input("args: TArgs")
    .Input("host_args: num_host_args * float")
    .Output("output: T")
    .Attr("T: {float, double}")
    .Attr("TArgs: list(type) >= 1")
    .Attr("num_args: int >= 0")
    .Attr("num_host_args: int >= 0 = 0")
    .Attr("strides: list(int)")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
    .Attr("filter_format: {'HWIO', 'OIHW', 'OIHW_VECT_I'} = 'HWIO'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("fused_ops: list(string) = []")
    .Attr("epsilon: float = 0.0001")
    .Attr("leakyrelu_alpha: float = 0.2")
    .SetShapeFn([](InferenceContext* c) { return UnfusedShape("Conv2D", c); })
    .Doc(
        "Conv2D followed by fused_ops (BiasAdd or FusedBatchNorm, or BiasAdd then Add, then "
        "optionally Relu, Relu6, Elu or LeakyRelu) in one kernel; `args` are the bias, the bias "
        "and the tensor Add adds (the output's shape), or the batch norm's scale, offset, mean "
        "and variance.");

REGISTER_OP("_FusedMatMul")
    .Input("a: T")
    .Input("b: T")
    .Input("args: num_args * T")
    .Output("product: T")
    .Attr("transpose_a: bool = false")
    .Attr("transpose_b: bool = false")
    .Attr("T: {float}")
    .Attr("num_args: int >= 0")
    .Attr("fused_ops: list(string) = []")
    .Attr("epsilon: float = 0.0001")
    .Attr("leakyrelu_alpha: float = 0.2")
    .SetShapeFn([](InferenceContext* c) { return UnfusedShape("MatMul", c); })
    .Doc(
        "MatMul followed by fused_ops (BiasAdd, then optionally Relu, Relu6, Elu or "
        "LeakyRelu) in one kernel; `args` holds the bias.");

REGISTER_OP("_FusedDepthwiseConv2dNative")
    .Input("input: T")
    .Input("filter: T")
    .Input("args: num_args * T")
    .Output("output: T")
    .Attr("T: {float, double}")
    .Attr("num_args: int >= 0")
    .Attr("strides: list(int)")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .Attr("fused_ops: list(string) = []")
    .Attr("epsilon: float = 0.0001")
    .Attr("leakyrelu_alpha: float = 0.2")
    .SetShapeFn([](InferenceContext* c) { return UnfusedShape("DepthwiseConv2dNative", c); })
    .Doc(
        "DepthwiseConv2dNative followed by fused_ops (BiasAdd or FusedBatchNorm, then "
        "optionally Relu, Relu6, Elu or LeakyRelu) in one kernel; `args` are the bias or the "
        "batch norm's scale, offset, mean and variance. EXPLICIT padding and "
        "explicit_paddings are ours (TensorFlow's op has neither): the remapper folds a Pad "
        "into the convolution before fusing it.");

}  // namespace tensorweave
