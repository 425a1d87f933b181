// Convolution and pooling ops: Conv2D, Conv2DBackpropInput,
// Conv2DBackpropFilter, MaxPool(V2), MaxPoolGrad(V2), MaxPoolGradGrad(V2),
// MaxPoolWithArgmax, MaxPoolGradWithArgmax, AvgPool and AvgPoolGrad, with
// TensorFlow's inputs, attrs and shape functions. The window arithmetic is
// runtime/framework/conv_geometry.h, shared with the kernels.
#include "runtime/framework/conv_geometry.h"
#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"
#include "runtime/ops/type_lists.h"

namespace tensorweave {
namespace {

using shape_inference::InferenceContext;

// A status from the shared geometry helpers, with the node named (its code
// kept, so UNIMPLEMENTED stays UNIMPLEMENTED).
Status NameNode(InferenceContext* c, const Status& status) {
  if (status.ok()) return status;
  return Status(status.code(), StrCat(status.message(), " (node '", c->node_def().name(), "', op ",
                                      c->node_def().op(), ")"));
}

// One output dimension, -1 when the input dimension is unknown.
Status OutputDim(InferenceContext* c, const WindowAttrs& attrs, bool rows, int64_t input,
                 int64_t window, int64_t dilation, int64_t* output) {
  int64_t pad = 0;
  return NameNode(c, SpatialOutputSize(attrs, rows, input, window, dilation, output, &pad));
}

// [batch, rows, cols, depth] laid out in the data_format of `attrs`.
Status BuildInDataFormat(const WindowAttrs& attrs, int64_t batch, int64_t rows, int64_t cols,
                         int64_t depth, PartialTensorShape* out) {
  if (attrs.nchw) return PartialTensorShape::Build({batch, depth, rows, cols}, out);
  return PartialTensorShape::Build({batch, rows, cols, depth}, out);
}

Status Conv2DShape(InferenceContext* c) {
  WindowAttrs attrs;
  TW_RETURN_IF_ERROR(NameNode(c, ParseWindowAttrs(c->node_def(), false, &attrs)));
  PartialTensorShape input, filter;
  TW_RETURN_IF_ERROR(c->WithRank(0, 4, &input));
  TW_RETURN_IF_ERROR(c->WithRank(1, 4, &filter));
  // An input depth that is a multiple of the filter's is a grouped
  // convolution (in_depth / filter_depth groups), as in TensorFlow.
  const int64_t in_depth = input.dim_size(attrs.depth_dim()), filter_depth = filter.dim_size(2);
  if (in_depth >= 0 && filter_depth >= 0 && in_depth != filter_depth) {
    if (filter_depth == 0 || in_depth % filter_depth != 0) {
      return c->Error("input depth must equal filter depth: ", in_depth, " vs ", filter_depth,
                      " (or be a multiple of it, for a grouped convolution) (input ",
                      input.DebugString(), ", filter ", filter.DebugString(), ")");
    }
    const int64_t groups = in_depth / filter_depth, out_depth = filter.dim_size(3);
    if (out_depth >= 0 && out_depth % groups != 0) {
      return c->Error("output depth must be evenly divisible by number of groups: ", out_depth,
                      " vs ", groups,
                      " (input depth must equal filter depth, or be a multiple of it for a "
                      "grouped convolution: input ",
                      input.DebugString(), ", filter ", filter.DebugString(), ")");
    }
  }
  int64_t rows = -1, cols = -1;
  TW_RETURN_IF_ERROR(OutputDim(c, attrs, true, input.dim_size(attrs.rows_dim()), filter.dim_size(0),
                               attrs.dilation_rows, &rows));
  TW_RETURN_IF_ERROR(OutputDim(c, attrs, false, input.dim_size(attrs.cols_dim()),
                               filter.dim_size(1), attrs.dilation_cols, &cols));
  PartialTensorShape out;
  TW_RETURN_IF_ERROR(
      BuildInDataFormat(attrs, input.dim_size(0), rows, cols, filter.dim_size(3), &out));
  c->set_output(0, out);
  return Status::OK();
}

// The output of a backprop op is the shape held in its int32 sizes input.
Status ShapeFromSizesInput(InferenceContext* c, int sizes_input, bool has_ksize = false) {
  WindowAttrs attrs;
  TW_RETURN_IF_ERROR(NameNode(c, ParseWindowAttrs(c->node_def(), has_ksize, &attrs)));
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

// Conv2DBackpropInput's input_sizes holds 4 sizes, or TensorFlow's 2
// spatial ones (batch from out_backprop, depth from the filter).
Status Conv2DBackpropInputShape(InferenceContext* c) {
  WindowAttrs attrs;
  TW_RETURN_IF_ERROR(NameNode(c, ParseWindowAttrs(c->node_def(), false, &attrs)));
  PartialTensorShape sizes;
  TW_RETURN_IF_ERROR(c->WithRank(0, 1, &sizes));
  if (sizes.dim_size(0) >= 0 && sizes.dim_size(0) != 4 && sizes.dim_size(0) != 2) {
    return c->Error("input_sizes must hold 4 (or 2) sizes, got shape ", sizes.DebugString());
  }
  PartialTensorShape values;
  TW_RETURN_IF_ERROR(shape_fns::ShapeFromInputTensor(c, 0, &values));
  PartialTensorShape out = PartialTensorShape::UnknownDims(4);
  if (!values.unknown_rank() && values.dims() == 4) {
    out = values;
  } else if (!values.unknown_rank() && values.dims() == 2) {
    PartialTensorShape filter, out_backprop;
    TW_RETURN_IF_ERROR(c->WithRank(1, 4, &filter));
    TW_RETURN_IF_ERROR(c->WithRank(2, 4, &out_backprop));
    TW_RETURN_IF_ERROR(BuildInDataFormat(attrs, out_backprop.dim_size(0), values.dim_size(0),
                                         values.dim_size(1), filter.dim_size(2), &out));
  }
  c->set_output(0, out);
  return Status::OK();
}
Status Conv2DBackpropFilterShape(InferenceContext* c) { return ShapeFromSizesInput(c, 1); }

Status PoolShapeWithAttrs(InferenceContext* c, const WindowAttrs& attrs) {
  TW_RETURN_IF_ERROR(NameNode(c, CheckPoolPaddingSize(attrs)));
  PartialTensorShape input;
  TW_RETURN_IF_ERROR(c->WithRank(0, 4, &input));
  int64_t rows = -1, cols = -1;
  TW_RETURN_IF_ERROR(
      OutputDim(c, attrs, true, input.dim_size(attrs.rows_dim()), attrs.ksize_rows, 1, &rows));
  TW_RETURN_IF_ERROR(
      OutputDim(c, attrs, false, input.dim_size(attrs.cols_dim()), attrs.ksize_cols, 1, &cols));
  PartialTensorShape out;
  TW_RETURN_IF_ERROR(BuildInDataFormat(attrs, input.dim_size(0), rows, cols,
                                       input.dim_size(attrs.depth_dim()), &out));
  c->set_output(0, out);
  return Status::OK();
}

Status PoolShape(InferenceContext* c) {
  WindowAttrs attrs;
  TW_RETURN_IF_ERROR(NameNode(c, ParseWindowAttrs(c->node_def(), true, &attrs)));
  return PoolShapeWithAttrs(c, attrs);
}

Status MaxPoolGradShape(InferenceContext* c) {
  WindowAttrs attrs;
  TW_RETURN_IF_ERROR(NameNode(c, ParseWindowAttrs(c->node_def(), true, &attrs)));
  PartialTensorShape input;
  TW_RETURN_IF_ERROR(c->WithRank(0, 4, &input));
  c->set_output(0, input);
  return Status::OK();
}

Status AvgPoolGradShape(InferenceContext* c) { return ShapeFromSizesInput(c, 0, true); }

// MaxPoolV2: ksize and strides are inputs 1 and 2; with their values
// unknown only the rank (and batch, for NHWC/NCHW the depth) are.
Status MaxPoolV2Shape(InferenceContext* c) {
  WindowAttrs attrs;
  TW_RETURN_IF_ERROR(NameNode(c, ParseWindowLayoutAttrs(c->node_def(), &attrs)));
  const Tensor* ksize = c->input_tensor(1);
  const Tensor* strides = c->input_tensor(2);
  if (ksize == nullptr || strides == nullptr) {
    PartialTensorShape input;
    TW_RETURN_IF_ERROR(c->WithRank(0, 4, &input));
    PartialTensorShape out;
    TW_RETURN_IF_ERROR(BuildInDataFormat(attrs, input.dim_size(0), -1, -1,
                                         input.dim_size(attrs.depth_dim()), &out));
    c->set_output(0, out);
    return Status::OK();
  }
  if (ksize->dims() != 1 || strides->dims() != 1) {
    return c->Error("ksize and strides must be vectors, got shapes ", ksize->shape().DebugString(),
                    " and ", strides->shape().DebugString());
  }
  std::vector<int64_t> ksize_values(ksize->data<int32_t>(),
                                    ksize->data<int32_t>() + ksize->NumElements());
  std::vector<int64_t> stride_values(strides->data<int32_t>(),
                                     strides->data<int32_t>() + strides->NumElements());
  TW_RETURN_IF_ERROR(NameNode(c, SetPoolWindow(ksize_values, stride_values, &attrs)));
  return PoolShapeWithAttrs(c, attrs);
}

// MaxPoolGradV2: the shape of orig_input, the window inputs' values read by
// the kernel.
Status MaxPoolGradV2Shape(InferenceContext* c) {
  WindowAttrs attrs;
  TW_RETURN_IF_ERROR(NameNode(c, ParseWindowLayoutAttrs(c->node_def(), &attrs)));
  PartialTensorShape input;
  TW_RETURN_IF_ERROR(c->WithRank(0, 4, &input));
  c->set_output(0, input);
  return Status::OK();
}

// MaxPoolGradGrad's output has the shape of orig_output (input 1).
Status MaxPoolGradGradShape(InferenceContext* c) {
  PartialTensorShape output;
  TW_RETURN_IF_ERROR(c->WithRank(1, 4, &output));
  c->set_output(0, output);
  return Status::OK();
}

Status MaxPoolWithArgmaxShape(InferenceContext* c) {
  TW_RETURN_IF_ERROR(PoolShape(c));
  c->set_output(1, c->output(0));
  return Status::OK();
}

}  // namespace

REGISTER_OP("Conv2D")
    .Input("input: T")
    .Input("filter: T")
    .Output("output: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(Conv2DShape)
    .Doc(
        "2-D convolution of an NHWC or NCHW input with an [rows, cols, in_depth, out_depth] "
        "filter.");

REGISTER_OP("Conv2DBackpropInput")
    .Input("input_sizes: int32")
    .Input("filter: T")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(Conv2DBackpropInputShape)
    .Doc("The gradient of Conv2D with respect to its input, of shape input_sizes.");

REGISTER_OP("Conv2DBackpropFilter")
    .Input("input: T")
    .Input("filter_sizes: int32")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("strides: list(int)")
    .Attr("use_cudnn_on_gpu: bool = true")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("dilations: list(int) = [1, 1, 1, 1]")
    .SetShapeFn(Conv2DBackpropFilterShape)
    .Doc("The gradient of Conv2D with respect to its filter, of shape filter_sizes.");

REGISTER_OP("MaxPool")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: {" TW_ARITHMETIC_TYPES ", " TW_HALF_FLOAT_TYPES "} = DT_FLOAT")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
    .SetShapeFn(PoolShape)
    .Doc("The maximum of each window of an NHWC or NCHW input.");

REGISTER_OP("MaxPoolGrad")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID', 'EXPLICIT'}")
    .Attr("explicit_paddings: list(int) = []")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {" TW_ARITHMETIC_TYPES ", " TW_HALF_FLOAT_TYPES "} = DT_FLOAT")
    .SetShapeFn(MaxPoolGradShape)
    .Doc("Routes each window's gradient to the (first) maximum of orig_input in it.");

REGISTER_OP("MaxPoolV2")
    .Input("input: T")
    .Input("ksize: int32")
    .Input("strides: int32")
    .Output("output: T")
    .Attr("T: {" TW_ARITHMETIC_TYPES "} = DT_FLOAT")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
    .SetShapeFn(MaxPoolV2Shape)
    .Doc("MaxPool with ksize and strides given as input tensors.");

REGISTER_OP("MaxPoolGradV2")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Input("ksize: int32")
    .Input("strides: int32")
    .Output("output: T")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {" TW_ARITHMETIC_TYPES "} = DT_FLOAT")
    .SetShapeFn(MaxPoolGradV2Shape)
    .Doc("MaxPoolGrad with ksize and strides given as input tensors.");

REGISTER_OP("MaxPoolGradGrad")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {" TW_ARITHMETIC_TYPES "}")
    .SetShapeFn(MaxPoolGradGradShape)
    .Doc(
        "The gradient of MaxPoolGrad: each window takes grad (shaped like orig_input) at its "
        "first maximum.");

REGISTER_OP("MaxPoolGradGradV2")
    .Input("orig_input: T")
    .Input("orig_output: T")
    .Input("grad: T")
    .Input("ksize: int32")
    .Input("strides: int32")
    .Output("output: T")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {" TW_ARITHMETIC_TYPES "}")
    .SetShapeFn(MaxPoolGradGradShape)
    .Doc("MaxPoolGradGrad with ksize and strides given as input tensors.");

REGISTER_OP("MaxPoolWithArgmax")
    .Input("input: T")
    .Output("output: T")
    .Output("argmax: Targmax")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("Targmax: {int32, int64} = DT_INT64")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("include_batch_in_index: bool = false")
    .Attr("T: {" TW_ARITHMETIC_TYPES "}")
    .SetShapeFn(MaxPoolWithArgmaxShape)
    .Doc("MaxPool of an NHWC input, with the flat input index of each maximum.");

REGISTER_OP("MaxPoolGradWithArgmax")
    .Input("input: T")
    .Input("grad: T")
    .Input("argmax: Targmax")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("include_batch_in_index: bool = false")
    .Attr("Targmax: {int32, int64}")
    .Attr("T: {" TW_ARITHMETIC_TYPES "}")
    .SetShapeFn(MaxPoolGradShape)
    .Doc("Adds each grad element into the input position its argmax names.");

REGISTER_OP("AvgPool")
    .Input("value: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(PoolShape)
    .Doc("The mean of each window of an NHWC or NCHW input (padding excluded from the count).");

REGISTER_OP("AvgPoolGrad")
    .Input("orig_input_shape: int32")
    .Input("grad: T")
    .Output("output: T")
    .Attr("ksize: list(int) >= 4")
    .Attr("strides: list(int) >= 4")
    .Attr("padding: {'SAME', 'VALID'}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(AvgPoolGradShape)
    .Doc("Spreads each window's gradient evenly over the window's input elements.");

}  // namespace tensorweave
