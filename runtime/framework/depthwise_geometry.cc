#include "runtime/framework/depthwise_geometry.h"

#include <string>
#include <vector>

#include "runtime/framework/conv_geometry.h"

namespace tensorweave {
namespace {

// Attr values beyond int32 are never meaningful, and bounding them keeps
// the size arithmetic inside int64 (as in conv_geometry.cc).
constexpr int64_t kMaxWindowAttr = int64_t{1} << 31;

// Reads a 4-value attr (strides, dilations) and returns its row and column
// values; the batch and channel entries must be 1.
Status ReadSpatialPair(const NodeDef& node, const char* name, const DepthwiseAttrs& layout,
                       int64_t* rows, int64_t* cols) {
  std::vector<int64_t> values;
  TW_RETURN_IF_ERROR(GetNodeAttr(node, name, &values));
  if (values.size() != 4) {
    return errors::InvalidArgument(name, " must specify 4 dimensions, got ", values.size());
  }
  for (int64_t v : values) {
    if (v <= 0 || v > kMaxWindowAttr) {
      return errors::InvalidArgument(name, " must be positive (and below 2^31), got [",
                                     StrJoin(values, ","), "]");
    }
  }
  if (values[0] != 1 || values[layout.depth_dim()] != 1) {
    return errors::InvalidArgument("Current implementation does not yet support ", name,
                                   " in the batch and depth dimensions (", name, " = [",
                                   StrJoin(values, ","), "])");
  }
  *rows = values[layout.rows_dim()];
  *cols = values[layout.cols_dim()];
  return Status::OK();
}

Status ReadExplicitPaddings(const NodeDef& node, DepthwiseAttrs* out) {
  std::vector<int64_t> pads;
  if (FindNodeAttr(node, "explicit_paddings") != nullptr) {
    TW_RETURN_IF_ERROR(GetNodeAttr(node, "explicit_paddings", &pads));
  }
  if (out->padding != DepthwisePadding::kExplicit) {
    if (!pads.empty()) {
      return errors::InvalidArgument(
          "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT");
    }
    return Status::OK();
  }
  if (pads.size() != 8) {
    return errors::InvalidArgument("explicit_paddings attribute must contain 8 values, but got: ",
                                   pads.size());
  }
  for (int64_t p : pads) {
    if (p < 0 || p > kMaxWindowAttr) {
      return errors::InvalidArgument(
          "All elements of explicit_paddings must be nonnegative (and below 2^31), got [",
          StrJoin(pads, ","), "]");
    }
  }
  const int depth = out->depth_dim();
  if (pads[0] != 0 || pads[1] != 0 || pads[2 * depth] != 0 || pads[2 * depth + 1] != 0) {
    return errors::InvalidArgument(
        "Nonzero explicit padding in the batch or depth dimensions is not supported, got [",
        StrJoin(pads, ","), "]");
  }
  out->pad_top = pads[2 * out->rows_dim()];
  out->pad_bottom = pads[2 * out->rows_dim() + 1];
  out->pad_left = pads[2 * out->cols_dim()];
  out->pad_right = pads[2 * out->cols_dim() + 1];
  return Status::OK();
}

}  // namespace

Status ParseDepthwiseAttrs(const NodeDef& node, DepthwiseAttrs* out) {
  std::string data_format = "NHWC";
  if (FindNodeAttr(node, "data_format") != nullptr) {
    TW_RETURN_IF_ERROR(GetNodeAttr(node, "data_format", &data_format));
  }
  if (data_format != "NHWC" && data_format != "NCHW") {
    return errors::InvalidArgument("Invalid data format '", data_format, "'; use NHWC or NCHW");
  }
  out->nchw = data_format == "NCHW";
  TW_RETURN_IF_ERROR(ReadSpatialPair(node, "strides", *out, &out->stride_rows, &out->stride_cols));
  if (FindNodeAttr(node, "dilations") != nullptr) {
    TW_RETURN_IF_ERROR(
        ReadSpatialPair(node, "dilations", *out, &out->dilation_rows, &out->dilation_cols));
  }
  std::string padding;
  TW_RETURN_IF_ERROR(GetNodeAttr(node, "padding", &padding));
  if (padding == "SAME") {
    out->padding = DepthwisePadding::kSame;
  } else if (padding == "VALID") {
    out->padding = DepthwisePadding::kValid;
  } else if (padding == "EXPLICIT") {
    out->padding = DepthwisePadding::kExplicit;
  } else {
    return errors::InvalidArgument("padding must be SAME, VALID or EXPLICIT, got '", padding, "'");
  }
  return ReadExplicitPaddings(node, out);
}

Status DepthwiseOutputSize(const DepthwiseAttrs& attrs, bool rows, int64_t input, int64_t window,
                           int64_t* output, int64_t* pad_before) {
  if (input < 0 || window < 0) {
    *output = -1;
    *pad_before = -1;
    return Status::OK();
  }
  const int64_t stride = rows ? attrs.stride_rows : attrs.stride_cols;
  const int64_t dilation = rows ? attrs.dilation_rows : attrs.dilation_cols;
  if (attrs.padding != DepthwisePadding::kExplicit) {
    return WindowOutputSize(input, window, dilation, stride,
                            attrs.padding == DepthwisePadding::kSame, output, pad_before);
  }
  if (window == 0 || window > kMaxWindowAttr) {
    return errors::InvalidArgument("filter size ", window, " must be positive and below 2^31");
  }
  const int64_t before = rows ? attrs.pad_top : attrs.pad_left;
  const int64_t after = rows ? attrs.pad_bottom : attrs.pad_right;
  const int64_t effective = (window - 1) * dilation + 1;  // every term < 2^62
  const int64_t padded = input + before + after;          // input < 2^62 (a tensor dim)
  if (padded < effective) {
    return errors::InvalidArgument(
        "Computed output size would be negative: [input_size: ", input, ", padding: ", before, "+",
        after, ", effective_filter_size: ", effective, ", stride: ", stride, "]");
  }
  *output = (padded - effective) / stride + 1;
  *pad_before = before;
  return Status::OK();
}

Status ComputeDepthwiseGeometry(const TensorShape& input, const TensorShape& filter,
                                const DepthwiseAttrs& attrs, DepthwiseGeometry* g,
                                TensorShape* output_shape) {
  if (input.dims() != 4) {
    return errors::InvalidArgument("input must be 4-dimensional (", attrs.nchw ? "NCHW" : "NHWC",
                                   "), got ", input.DebugString());
  }
  if (filter.dims() != 4) {
    return errors::InvalidArgument(
        "filter must be 4-dimensional ([rows, cols, in_depth, depth_multiplier]), got ",
        filter.DebugString());
  }
  g->attrs = attrs;
  g->batch = input.dim_size(0);
  g->in_rows = input.dim_size(attrs.rows_dim());
  g->in_cols = input.dim_size(attrs.cols_dim());
  g->in_depth = input.dim_size(attrs.depth_dim());
  if (g->in_depth != filter.dim_size(2)) {
    return errors::InvalidArgument("input and filter must have the same depth: ", g->in_depth,
                                   " vs ", filter.dim_size(2), " (input ", input.DebugString(),
                                   ", filter ", filter.DebugString(), ")");
  }
  g->filter_rows = filter.dim_size(0);
  g->filter_cols = filter.dim_size(1);
  g->multiplier = filter.dim_size(3);
  if (g->filter_rows == 0 || g->filter_cols == 0) {
    return errors::InvalidArgument("filter must have non-empty spatial dimensions, got ",
                                   filter.DebugString());
  }
  if (!MultiplyWithoutOverflow(g->in_depth, g->multiplier, &g->out_depth)) {
    return errors::InvalidArgument("output depth ", g->in_depth, " x ", g->multiplier,
                                   " overflows int64");
  }
  TW_RETURN_IF_ERROR(
      DepthwiseOutputSize(attrs, true, g->in_rows, g->filter_rows, &g->out_rows, &g->pad_rows));
  TW_RETURN_IF_ERROR(
      DepthwiseOutputSize(attrs, false, g->in_cols, g->filter_cols, &g->out_cols, &g->pad_cols));
  if (attrs.nchw) {
    return TensorShape::Build({g->batch, g->out_depth, g->out_rows, g->out_cols}, output_shape);
  }
  return TensorShape::Build({g->batch, g->out_rows, g->out_cols, g->out_depth}, output_shape);
}

}  // namespace tensorweave
