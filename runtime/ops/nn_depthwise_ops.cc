// Depthwise convolution ops: DepthwiseConv2dNative and its two backprops,
// with TensorFlow's inputs, attrs, defaults and shape functions. The window
// arithmetic is runtime/framework/depthwise_geometry.h, shared with the
// kernels (runtime/kernels/depthwise_conv_op.cc, depthwise_conv_grad_op.cc).
#include <vector>

#include "runtime/framework/depthwise_geometry.h"
#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"
#include "runtime/ops/type_lists.h"

namespace tensorweave {
namespace {

using shape_inference::InferenceContext;

// A status with the node named (its code kept).
Status NameNode(InferenceContext* c, const Status& status) {
  if (status.ok()) return status;
  return Status(status.code(), StrCat(status.message(), " (node '", c->node_def().name(), "', op ",
                                      c->node_def().op(), ")"));
}

Status DepthwiseConv2dNativeShape(InferenceContext* c) {
  DepthwiseAttrs attrs;
  TW_RETURN_IF_ERROR(NameNode(c, ParseDepthwiseAttrs(c->node_def(), &attrs)));
  PartialTensorShape input, filter;
  TW_RETURN_IF_ERROR(c->WithRank(0, 4, &input));
  TW_RETURN_IF_ERROR(c->WithRank(1, 4, &filter));
  const int64_t in_depth = input.dim_size(attrs.depth_dim());
  const int64_t filter_depth = filter.dim_size(2);
  if (in_depth >= 0 && filter_depth >= 0 && in_depth != filter_depth) {
    return c->Error("input and filter must have the same depth: ", in_depth, " vs ", filter_depth,
                    " (input ", input.DebugString(), ", filter ", filter.DebugString(), ")");
  }
  const int64_t depth = in_depth >= 0 ? in_depth : filter_depth;
  const int64_t multiplier = filter.dim_size(3);
  int64_t out_depth = -1;
  if (depth >= 0 && multiplier >= 0 && !MultiplyWithoutOverflow(depth, multiplier, &out_depth)) {
    return c->Error("output depth ", depth, " x ", multiplier, " overflows int64");
  }
  int64_t rows = -1, cols = -1, pad = 0;
  if (filter.dim_size(0) == 0 || filter.dim_size(1) == 0) {
    return c->Error("filter must have non-empty spatial dimensions, got ", filter.DebugString());
  }
  TW_RETURN_IF_ERROR(NameNode(c, DepthwiseOutputSize(attrs, true, input.dim_size(attrs.rows_dim()),
                                                     filter.dim_size(0), &rows, &pad)));
  TW_RETURN_IF_ERROR(NameNode(c, DepthwiseOutputSize(attrs, false, input.dim_size(attrs.cols_dim()),
                                                     filter.dim_size(1), &cols, &pad)));
  PartialTensorShape out;
  const int64_t batch = input.dim_size(0);
  TW_RETURN_IF_ERROR(
      PartialTensorShape::Build(attrs.nchw ? std::vector<int64_t>{batch, out_depth, rows, cols}
                                           : std::vector<int64_t>{batch, rows, cols, out_depth},
                                &out));
  c->set_output(0, out);
  return Status::OK();
}

// A backprop's output is the 4-D shape held in its int32 sizes input.
Status ShapeFromSizesInput(InferenceContext* c, int sizes_input) {
  DepthwiseAttrs attrs;
  TW_RETURN_IF_ERROR(NameNode(c, ParseDepthwiseAttrs(c->node_def(), &attrs)));
  PartialTensorShape sizes;
  TW_RETURN_IF_ERROR(c->WithRank(sizes_input, 1, &sizes));
  if (sizes.dim_size(0) >= 0 && sizes.dim_size(0) != 4) {
    return c->Error("input ", sizes_input, " must hold 4 sizes, got shape ", sizes.DebugString());
  }
  PartialTensorShape out;
  TW_RETURN_IF_ERROR(shape_fns::ShapeFromInputTensor(c, sizes_input, &out));
  if (out.unknown_rank()) out = PartialTensorShape::UnknownDims(4);
  c->set_output(0, out);
  return Status::OK();
}

Status BackpropInputShape(InferenceContext* c) { return ShapeFromSizesInput(c, 0); }
Status BackpropFilterShape(InferenceContext* c) { return ShapeFromSizesInput(c, 1); }

}  // namespace

REGISTER_OP("DepthwiseConv2dNative")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("strides: list(int)")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(DepthwiseConv2dNativeShape)
    .Doc(
        "Convolves each input channel with its own [rows, cols] filters: filter "
        "[rows, cols, in_depth, multiplier] gives in_depth * multiplier output channels.");

REGISTER_OP("DepthwiseConv2dNativeBackpropInput")
    .Input("input_sizes: int32")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("strides: list(int)")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(BackpropInputShape)
    .Doc("The gradient of DepthwiseConv2dNative with respect to its input, of shape input_sizes.");

REGISTER_OP("DepthwiseConv2dNativeBackpropFilter")
    .Input("input: T")
    .Input("filter_sizes: int32")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("strides: list(int)")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(BackpropFilterShape)
    .Doc(
        "The gradient of DepthwiseConv2dNative with respect to its filter, of shape "
        "filter_sizes.");

}  // namespace tensorweave
