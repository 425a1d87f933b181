// Geometry of depthwise 2-D convolution, shared by the shape functions of
// DepthwiseConv2dNative and its two backprops and by their CPU kernels.
//
//   DepthwiseAttrs attrs;
//   TW_RETURN_IF_ERROR(ParseDepthwiseAttrs(node_def, &attrs));
//   DepthwiseGeometry g;
//   TensorShape output_shape;
//   TW_RETURN_IF_ERROR(ComputeDepthwiseGeometry(input.shape(), filter.shape(), attrs, &g,
//                                               &output_shape));
//
// A depthwise filter is [rows, cols, in_depth, multiplier]: each input
// channel c is convolved with its own `multiplier` filters, giving output
// channels c * multiplier + m (out_depth = in_depth * multiplier).
//
// Unlike runtime/framework/conv_geometry.h (Conv2D, pooling), these attrs
// take data_format NCHW and padding EXPLICIT (`explicit_paddings`, 8 values:
// before/after for each dimension in data_format order). SAME and VALID use
// the same output-size arithmetic as Conv2D (WindowOutputSize). TensorFlow's
// own CPU kernel refuses NCHW and dilations; its GPU kernel and its shape
// function take them, and so do ours.
#ifndef TENSORWEAVE_FRAMEWORK_DEPTHWISE_GEOMETRY_H_
#define TENSORWEAVE_FRAMEWORK_DEPTHWISE_GEOMETRY_H_

#include <cstdint>

#include "runtime/framework/node_def_util.h"
#include "runtime/framework/status.h"
#include "runtime/framework/tensor_shape.h"

namespace tensorweave {

enum class DepthwisePadding { kSame, kValid, kExplicit };

// The attrs of one depthwise node, validated.
struct DepthwiseAttrs {
  int64_t stride_rows = 1, stride_cols = 1;
  int64_t dilation_rows = 1, dilation_cols = 1;
  DepthwisePadding padding = DepthwisePadding::kValid;
  // EXPLICIT only: padding before/after the rows and the columns.
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  bool nchw = false;

  // Positions of the batch, row, column and channel dimensions of a
  // 4-D tensor in this node's data_format.
  int rows_dim() const { return nchw ? 2 : 1; }
  int cols_dim() const { return nchw ? 3 : 2; }
  int depth_dim() const { return nchw ? 1 : 3; }
};

// Reads strides, dilations, padding, explicit_paddings and data_format.
// Wrong lengths, non-positive values, a stride, dilation or padding over
// the batch or channel dimension, negative paddings, explicit_paddings
// without EXPLICIT (or EXPLICIT without 8 values) are INVALID_ARGUMENT.
Status ParseDepthwiseAttrs(const NodeDef& node, DepthwiseAttrs* out);

// The output size and the padding before the first element of one spatial
// dimension; -1 for both when `input` is unknown (-1). INVALID_ARGUMENT when
// the window does not fit.
Status DepthwiseOutputSize(const DepthwiseAttrs& attrs, bool rows, int64_t input, int64_t window,
                           int64_t* output, int64_t* pad_before);

// The geometry of one depthwise op on concrete shapes, in NHWC terms
// whatever the data_format.
struct DepthwiseGeometry {
  int64_t batch, in_rows, in_cols, in_depth;
  int64_t filter_rows, filter_cols, multiplier, out_depth;
  int64_t out_rows, out_cols;
  int64_t pad_rows, pad_cols;  // padding before the first row / column
  DepthwiseAttrs attrs;
};

// Checks the input shape (in data_format) against a [rows, cols, in_depth,
// multiplier] filter shape and computes the output shape (in data_format).
Status ComputeDepthwiseGeometry(const TensorShape& input, const TensorShape& filter,
                                const DepthwiseAttrs& attrs, DepthwiseGeometry* geometry,
                                TensorShape* output_shape);

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_DEPTHWISE_GEOMETRY_H_
