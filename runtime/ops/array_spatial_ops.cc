// Ops that pad or rearrange spatial dimensions: MirrorPad (and its
// gradient MirrorPadGrad), SpaceToDepth, DepthToSpace, SpaceToBatchND and
// BatchToSpaceND. Names, attrs and defaults follow TensorFlow.
#include "runtime/framework/node_def_util.h"
#include "runtime/framework/op_def.h"
#include "runtime/ops/array_shape_ops.h"
#include "runtime/ops/index_vector.h"
#include "runtime/ops/type_lists.h"

namespace tensorweave {
namespace {

using array_shape_fns::SetOutputDims;
using shape_inference::InferenceContext;

// The known [rank, 2] paddings of input i, or empty when unknown.
Status KnownPaddings(InferenceContext* c, int i, std::vector<int64_t>* values) {
  values->clear();
  const Tensor* tensor = c->input_tensor(i);
  if (tensor == nullptr) return Status::OK();
  if (tensor->dims() != 2 || tensor->dim_size(1) != 2) {
    return c->Error("paddings must be a matrix with 2 columns, got ",
                    tensor->shape().DebugString());
  }
  Tensor flat;
  if (!flat.CopyFrom(*tensor, TensorShape({tensor->NumElements()}))) {
    return c->Error("could not read paddings");
  }
  Status status = ReadIndexVector(flat, "paddings", values);
  return status.ok() ? status : c->Error(status.message());
}

// MirrorPad (sign +1) adds the paddings to each dim, MirrorPadGrad (-1)
// removes them.
template <int kSign>
Status MirrorPadShape(InferenceContext* c) {
  PartialTensorShape paddings_shape;
  TW_RETURN_IF_ERROR(c->WithRank(1, 2, &paddings_shape));
  const PartialTensorShape& input = c->input(0);
  int rank = input.dims();
  if (rank < 0 && !paddings_shape.unknown_rank())
    rank = static_cast<int>(paddings_shape.dim_size(0));
  std::vector<int64_t> pads;
  TW_RETURN_IF_ERROR(KnownPaddings(c, 1, &pads));
  std::string mode;
  TW_RETURN_IF_ERROR(c->GetAttr("mode", &mode));
  const int64_t edge = mode == "REFLECT" ? 1 : 0;  // REFLECT leaves the edge element out
  if (rank < 0) {
    c->set_output(0, PartialTensorShape());
    return Status::OK();
  }
  if (!pads.empty() && static_cast<int>(pads.size()) != 2 * rank) {
    return c->Error("The first dimension of paddings must be the rank of inputs ", rank,
                    ", got paddings of ", pads.size() / 2, " rows");
  }
  std::vector<int64_t> dims(rank, -1);
  for (int d = 0; d < rank && !pads.empty(); ++d) {
    if (pads[2 * d] < 0 || pads[2 * d + 1] < 0) {
      return c->Error("Paddings must be non-negative: ", pads[2 * d], " ", pads[2 * d + 1]);
    }
    const int64_t size = input.unknown_rank() ? -1 : input.dim_size(d);
    if (size < 0) continue;
    dims[d] = size + kSign * (pads[2 * d] + pads[2 * d + 1]);
    // The size the mirror reflects: the input's, or the gradient's result.
    const int64_t mirrored = kSign > 0 ? size : dims[d];
    if (dims[d] < 0 || pads[2 * d] > mirrored - edge || pads[2 * d + 1] > mirrored - edge) {
      return c->Error("paddings must be no greater than the dimension size", edge ? " minus 1" : "",
                      " (", mode, "): ", pads[2 * d], ", ", pads[2 * d + 1], " for dimension ", d,
                      " of size ", mirrored);
    }
  }
  return SetOutputDims(c, 0, dims);
}

// SpaceToDepth (kToDepth) and DepthToSpace, NHWC.
template <bool kToDepth>
Status SpaceDepthShape(InferenceContext* c) {
  PartialTensorShape input;
  TW_RETURN_IF_ERROR(c->WithRank(0, 4, &input));
  int64_t block;
  TW_RETURN_IF_ERROR(c->GetAttr("block_size", &block));
  if (input.unknown_rank()) {
    c->set_output(0, PartialTensorShape::UnknownDims(4));
    return Status::OK();
  }
  std::vector<int64_t> dims = input.dim_sizes();
  std::string format;
  TW_RETURN_IF_ERROR(c->GetAttr("data_format", &format));
  const int h = format == "NHWC" ? 1 : 2, w = h + 1, depth = format == "NHWC" ? 3 : 1;
  if (kToDepth) {
    for (int d : {h, w}) {
      if (dims[d] >= 0 && dims[d] % block != 0) {
        return c->Error("Image dimension ", dims[d], " should be divisible by block_size: ", block);
      }
      if (dims[d] >= 0) dims[d] /= block;
    }
    if (dims[depth] >= 0) dims[depth] *= block * block;
  } else {
    if (dims[depth] >= 0 && dims[depth] % (block * block) != 0) {
      return c->Error("Input depth dimension ", dims[depth],
                      " should be divisible by: ", block * block);
    }
    if (dims[depth] >= 0) dims[depth] /= block * block;
    for (int d : {h, w}) {
      if (dims[d] >= 0) dims[d] *= block;
    }
  }
  return SetOutputDims(c, 0, dims);
}

// SpaceToBatchND and BatchToSpaceND: the batch and the block-shaped dims
// change; the shapes are known when input, block_shape and the paddings
// (crops) all are, and the kernels check every value.
Status SpaceBatchShape(InferenceContext* c) {
  PartialTensorShape block_shape, paddings;
  TW_RETURN_IF_ERROR(c->WithRank(1, 1, &block_shape));
  TW_RETURN_IF_ERROR(c->WithRank(2, 2, &paddings));
  const PartialTensorShape& input = c->input(0);
  c->set_output(0, input.unknown_rank() ? PartialTensorShape()
                                        : PartialTensorShape::UnknownDims(input.dims()));
  return Status::OK();
}

}  // namespace

REGISTER_OP("MirrorPad")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: {" TW_PLAIN_TYPES "}")
    .Attr("Tpaddings: {" TW_INDEX_TYPES "} = DT_INT32")
    .Attr("mode: {'REFLECT', 'SYMMETRIC'}")
    .SetShapeFn(MirrorPadShape<1>)
    .Doc(
        "Pads each dim with its mirror image: without the edge element (REFLECT) or with it "
        "(SYMMETRIC).");

REGISTER_OP("MirrorPadGrad")
    .Input("input: T")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: {" TW_ARITHMETIC_TYPES "}")
    .Attr("Tpaddings: {" TW_INDEX_TYPES "} = DT_INT32")
    .Attr("mode: {'REFLECT', 'SYMMETRIC'}")
    .SetShapeFn(MirrorPadShape<-1>)
    .Doc(
        "The gradient of MirrorPad: each padded element's value added back to the element it "
        "mirrors.");

REGISTER_OP("SpaceToDepth")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: {" TW_PLAIN_TYPES "}")
    .Attr("block_size: int >= 2")
    .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
    .SetShapeFn(SpaceDepthShape<true>)
    .Doc("Moves each block_size x block_size spatial block into the depth dimension.");

REGISTER_OP("DepthToSpace")
    .Input("input: T")
    .Output("output: T")
    .Attr("T: {" TW_PLAIN_TYPES "}")
    .Attr("block_size: int >= 2")
    .Attr("data_format: {'NHWC', 'NCHW', 'NCHW_VECT_C'} = 'NHWC'")
    .SetShapeFn(SpaceDepthShape<false>)
    .Doc(
        "Moves depth values into block_size x block_size spatial blocks (SpaceToDepth's "
        "inverse).");

REGISTER_OP("SpaceToBatchND")
    .Input("input: T")
    .Input("block_shape: Tblock_shape")
    .Input("paddings: Tpaddings")
    .Output("output: T")
    .Attr("T: {" TW_PLAIN_TYPES "}")
    .Attr("Tblock_shape: {" TW_INDEX_TYPES "} = DT_INT32")
    .Attr("Tpaddings: {" TW_INDEX_TYPES "} = DT_INT32")
    .SetShapeFn(SpaceBatchShape)
    .Doc(
        "Zero-pads the spatial dims, splits them into blocks and moves the block offsets into "
        "the batch dimension.");

REGISTER_OP("BatchToSpaceND")
    .Input("input: T")
    .Input("block_shape: Tblock_shape")
    .Input("crops: Tcrops")
    .Output("output: T")
    .Attr("T: {" TW_PLAIN_TYPES "}")
    .Attr("Tblock_shape: {" TW_INDEX_TYPES "} = DT_INT32")
    .Attr("Tcrops: {" TW_INDEX_TYPES "} = DT_INT32")
    .SetShapeFn(SpaceBatchShape)
    .Doc("SpaceToBatchND's inverse: batch blocks back into the spatial dims, then cropped.");

}  // namespace tensorweave
