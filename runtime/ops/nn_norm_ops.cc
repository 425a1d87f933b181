// Batch normalization: FusedBatchNorm, FusedBatchNormV2, FusedBatchNormV3
// and their gradients, with TensorFlow's inputs, outputs, attrs and
// defaults. TensorFlow admits half and bfloat16 for x (T) and bfloat16 for
// the statistics (U) of V3; tensors here hold neither, so T and U are float,
// the one dtype TensorFlow's CPU kernels run besides half. The kernels are in
// runtime/kernels/fused_batch_norm_op.cc.
//
// Outputs of the forward ops, in training mode (is_training=true):
//   y                  normalized x
//   batch_mean         the running mean to keep: the batch mean when
//                      exponential_avg_factor == 1, else
//                      (1 - factor) * mean + factor * batch mean
//   batch_variance     the same for the variance, whose batch part has
//                      Bessel's correction (n / (n - 1))
//   reserve_space_1/2  the batch mean and the (biased) batch variance, what
//                      the gradient needs
//   reserve_space_3    (V3) a scalar nothing reads on CPU
// In inference mode y uses the given mean and variance, which come back as
// batch_mean and batch_variance.
#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"

namespace tensorweave {
namespace {

using shape_inference::InferenceContext;

// The rank x must have for a data_format attr: 4 for NHWC/NCHW, 5 for
// NDHWC/NCDHW; and where its channel dimension sits.
Status BatchNormLayout(InferenceContext* c, int* rank, bool* channels_first) {
  std::string data_format;
  TW_RETURN_IF_ERROR(c->GetAttr("data_format", &data_format));
  if (data_format == "NHWC" || data_format == "NCHW") {
    *rank = 4;
  } else if (data_format == "NDHWC" || data_format == "NCDHW") {
    *rank = 5;
  } else {
    return c->Error("Invalid data format string: ", data_format);
  }
  *channels_first = data_format[1] == 'C';
  return Status::OK();
}

// Merges the length of 1-D input i into the channel count (-1 unknown).
Status MergeChannelVector(InferenceContext* c, int i, int64_t* channels) {
  PartialTensorShape vector;
  TW_RETURN_IF_ERROR(c->WithRank(i, 1, &vector));
  const int64_t length = vector.unknown_rank() ? -1 : vector.dim_size(0);
  if (length < 0) return Status::OK();
  if (*channels >= 0 && *channels != length) {
    return c->Error("Dimensions must be equal, but are ", *channels, " and ", length, ": input ", i,
                    " has shape ", vector.DebugString());
  }
  *channels = length;
  return Status::OK();
}

// `shape` (of known rank) with its channel dimension set to `channels`
// when that is known.
Status WithChannels(const PartialTensorShape& shape, int rank, bool channels_first,
                    int64_t channels, PartialTensorShape* out) {
  if (shape.unknown_rank()) {
    *out = PartialTensorShape::UnknownDims(rank);
  } else {
    *out = shape;
  }
  std::vector<int64_t> dims = out->dim_sizes();
  dims[channels_first ? 1 : rank - 1] = channels;
  return PartialTensorShape::Build(dims, out);
}

Status VectorOf(int64_t length, PartialTensorShape* out) {
  return PartialTensorShape::Build({length}, out);
}

// Scale and offset (and, unless training with exponential_avg_factor 1,
// mean and variance) are vectors over the channels of x.
Status FusedBatchNormShape(InferenceContext* c) {
  int rank = 4;
  bool channels_first = false;
  TW_RETURN_IF_ERROR(BatchNormLayout(c, &rank, &channels_first));
  PartialTensorShape x;
  TW_RETURN_IF_ERROR(c->WithRank(0, rank, &x));
  bool is_training = true;
  float factor = 1.0f;
  TW_RETURN_IF_ERROR(c->GetAttr("is_training", &is_training));
  if (!c->GetAttr("exponential_avg_factor", &factor).ok()) factor = 1.0f;
  const int vector_inputs = is_training && factor == 1.0f ? 3 : 5;
  int64_t channels = x.unknown_rank() ? -1 : x.dim_size(channels_first ? 1 : rank - 1);
  for (int i = 1; i < vector_inputs; ++i) {
    TW_RETURN_IF_ERROR(MergeChannelVector(c, i, &channels));
  }
  PartialTensorShape y, vector;
  TW_RETURN_IF_ERROR(WithChannels(x, rank, channels_first, channels, &y));
  TW_RETURN_IF_ERROR(VectorOf(channels, &vector));
  c->set_output(0, y);
  for (int i = 1; i <= 4; ++i) c->set_output(i, vector);
  if (c->num_outputs() == 6) c->set_output(5, PartialTensorShape());  // V3's unused scalar
  return Status::OK();
}

// y_backprop and x have the layout's rank; scale and the two saved
// statistics are vectors over the channels. The last two outputs are
// empty vectors.
Status FusedBatchNormGradShape(InferenceContext* c) {
  int rank = 4;
  bool channels_first = false;
  TW_RETURN_IF_ERROR(BatchNormLayout(c, &rank, &channels_first));
  PartialTensorShape y_backprop, x;
  TW_RETURN_IF_ERROR(c->WithRank(0, rank, &y_backprop));
  TW_RETURN_IF_ERROR(c->WithRank(1, rank, &x));
  const int channel_dim = channels_first ? 1 : rank - 1;
  int64_t channels = y_backprop.unknown_rank() ? -1 : y_backprop.dim_size(channel_dim);
  const int64_t x_channels = x.unknown_rank() ? -1 : x.dim_size(channel_dim);
  if (channels >= 0 && x_channels >= 0 && channels != x_channels) {
    return c->Error("Dimensions must be equal, but are ", channels, " and ", x_channels,
                    ": y_backprop ", y_backprop.DebugString(), " vs. x ", x.DebugString());
  }
  if (channels < 0) channels = x_channels;
  for (int i = 2; i < 5; ++i) TW_RETURN_IF_ERROR(MergeChannelVector(c, i, &channels));
  PartialTensorShape x_backprop, vector, empty;
  TW_RETURN_IF_ERROR(WithChannels(y_backprop, rank, channels_first, channels, &x_backprop));
  TW_RETURN_IF_ERROR(VectorOf(channels, &vector));
  TW_RETURN_IF_ERROR(VectorOf(0, &empty));
  c->set_output(0, x_backprop);
  c->set_output(1, vector);
  c->set_output(2, vector);
  c->set_output(3, empty);
  c->set_output(4, empty);
  return Status::OK();
}

}  // namespace

REGISTER_OP("FusedBatchNorm")
    .Input("x: T")
    .Input("scale: T")
    .Input("offset: T")
    .Input("mean: T")
    .Input("variance: T")
    .Output("y: T")
    .Output("batch_mean: T")
    .Output("batch_variance: T")
    .Output("reserve_space_1: T")
    .Output("reserve_space_2: T")
    .Attr("T: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("exponential_avg_factor: float = 1.0")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormShape)
    .Doc("Batch normalization over every dimension but the channels.");

REGISTER_OP("FusedBatchNormV2")
    .Input("x: T")
    .Input("scale: U")
    .Input("offset: U")
    .Input("mean: U")
    .Input("variance: U")
    .Output("y: T")
    .Output("batch_mean: U")
    .Output("batch_variance: U")
    .Output("reserve_space_1: U")
    .Output("reserve_space_2: U")
    .Attr("T: {float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("exponential_avg_factor: float = 1.0")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormShape)
    .Doc("FusedBatchNorm with statistics of their own dtype U.");

REGISTER_OP("FusedBatchNormV3")
    .Input("x: T")
    .Input("scale: U")
    .Input("offset: U")
    .Input("mean: U")
    .Input("variance: U")
    .Output("y: T")
    .Output("batch_mean: U")
    .Output("batch_variance: U")
    .Output("reserve_space_1: U")
    .Output("reserve_space_2: U")
    .Output("reserve_space_3: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("exponential_avg_factor: float = 1.0")
    .Attr("data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormShape)
    .Doc("FusedBatchNormV2 with a third reserve space and 3-D (NDHWC/NCDHW) layouts.");

REGISTER_OP("FusedBatchNormGrad")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: T")
    .Input("reserve_space_1: T")
    .Input("reserve_space_2: T")
    .Output("x_backprop: T")
    .Output("scale_backprop: T")
    .Output("offset_backprop: T")
    .Output("reserve_space_3: T")
    .Output("reserve_space_4: T")
    .Attr("T: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormGradShape)
    .Doc(
        "Gradients of FusedBatchNorm for x, scale and offset; reserve_space_1/2 are the "
        "forward's batch mean and variance when training, else the population statistics.");

REGISTER_OP("FusedBatchNormGradV2")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: float")
    .Input("reserve_space_1: U")
    .Input("reserve_space_2: U")
    .Output("x_backprop: T")
    .Output("scale_backprop: U")
    .Output("offset_backprop: U")
    .Output("reserve_space_3: U")
    .Output("reserve_space_4: U")
    .Attr("T: {float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormGradShape)
    .Doc("Gradients of FusedBatchNormV2.");

REGISTER_OP("FusedBatchNormGradV3")
    .Input("y_backprop: T")
    .Input("x: T")
    .Input("scale: float")
    .Input("reserve_space_1: U")
    .Input("reserve_space_2: U")
    .Input("reserve_space_3: U")
    .Output("x_backprop: T")
    .Output("scale_backprop: U")
    .Output("offset_backprop: U")
    .Output("reserve_space_4: U")
    .Output("reserve_space_5: U")
    .Attr("T: {half, bfloat16, float}")
    .Attr("U: {float}")
    .Attr("epsilon: float = 0.0001")
    .Attr("data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC'")
    .Attr("is_training: bool = true")
    .SetShapeFn(FusedBatchNormGradShape)
    .Doc("Gradients of FusedBatchNormV3 (reserve_space_3 is not read on CPU).");

}  // namespace tensorweave
