// Neural-network ops: activations and their gradients, softmax and the
// cross-entropy losses, BiasAdd(Grad), L2Loss and BatchMatMulV2. Attr names
// and defaults follow TensorFlow; the allowed dtypes are the ones the kernels
// implement (type_lists.h). Convolution and pooling are in nn_conv_ops.cc.
#include <algorithm>

#include "runtime/framework/op_def.h"
#include "runtime/framework/shape_inference.h"
#include "runtime/ops/type_lists.h"

namespace tensorweave {
namespace {

using shape_inference::InferenceContext;

Status SoftmaxShape(InferenceContext* c) {
  PartialTensorShape logits;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(0, 1, &logits));
  c->set_output(0, logits);
  return Status::OK();
}

// The bias length must match the channel dim: the last one for NHWC, dim 1
// for NCHW.
Status BiasAddShape(InferenceContext* c) {
  PartialTensorShape value, bias;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(0, 2, &value));
  TW_RETURN_IF_ERROR(c->WithRank(1, 1, &bias));
  std::string data_format;
  TW_RETURN_IF_ERROR(c->GetAttr("data_format", &data_format));
  if (value.unknown_rank()) {
    c->set_output(0, value);
    return Status::OK();
  }
  const int channel = data_format == "NCHW" ? 1 : value.dims() - 1;
  std::vector<int64_t> dims = value.dim_sizes();
  const int64_t bias_size = bias.dim_size(0);
  if (dims[channel] >= 0 && bias_size >= 0 && dims[channel] != bias_size) {
    return c->Error("Must provide as many biases as the channel dimension of the input tensor: ",
                    bias.DebugString(), " vs. ", value.DebugString(), " (", data_format, ")");
  }
  if (dims[channel] < 0) dims[channel] = bias_size;
  PartialTensorShape out;
  TW_RETURN_IF_ERROR(PartialTensorShape::Build(dims, &out));
  c->set_output(0, out);
  return Status::OK();
}

// Both inputs of an activation gradient have the shape of the output.
Status ActivationGradShape(InferenceContext* c) {
  PartialTensorShape merged;
  Status status = c->input(0).MergeWith(c->input(1), &merged);
  if (!status.ok()) {
    return c->Error("gradients and features must have the same shape: ", c->input(0).DebugString(),
                    " vs. ", c->input(1).DebugString());
  }
  c->set_output(0, merged);
  return Status::OK();
}

// loss [batch] and backprop [batch, classes] from features and labels of
// one shape [batch, classes]; as in TensorFlow 1.x, a single row of either
// broadcasts over the other's batch.
Status SoftmaxCrossEntropyShape(InferenceContext* c) {
  PartialTensorShape features, labels;
  TW_RETURN_IF_ERROR(c->WithRank(0, 2, &features));
  TW_RETURN_IF_ERROR(c->WithRank(1, 2, &labels));
  const int64_t feature_rows = features.dim_size(0), label_rows = labels.dim_size(0);
  const int64_t feature_classes = features.dim_size(1), label_classes = labels.dim_size(1);
  const bool rows_conflict = feature_rows >= 0 && label_rows >= 0 && feature_rows != label_rows &&
                             feature_rows != 1 && label_rows != 1;
  const bool classes_conflict =
      feature_classes >= 0 && label_classes >= 0 && feature_classes != label_classes;
  if (rows_conflict || classes_conflict) {
    return c->Error("logits and labels must be same size: logits_size=", features.DebugString(),
                    " labels_size=", labels.DebugString());
  }
  int64_t batch = -1;
  if (feature_rows >= 0 && label_rows >= 0) {
    batch = feature_rows == 1 ? label_rows : feature_rows;
  } else if (feature_rows > 1 || label_rows > 1) {
    batch = std::max(feature_rows, label_rows);  // the known one, unless it is 1
  }
  const int64_t classes = feature_classes >= 0 ? feature_classes : label_classes;
  PartialTensorShape loss, backprop;
  TW_RETURN_IF_ERROR(PartialTensorShape::Build({batch}, &loss));
  TW_RETURN_IF_ERROR(PartialTensorShape::Build({batch, classes}, &backprop));
  c->set_output(0, loss);
  c->set_output(1, backprop);
  return Status::OK();
}

// features [batch, classes], labels [batch].
Status SparseSoftmaxCrossEntropyShape(InferenceContext* c) {
  PartialTensorShape features, labels;
  TW_RETURN_IF_ERROR(c->WithRank(0, 2, &features));
  TW_RETURN_IF_ERROR(c->WithRank(1, 1, &labels));
  int64_t batch = features.dim_size(0);
  const int64_t label_batch = labels.dim_size(0);
  if (batch >= 0 && label_batch >= 0 && batch != label_batch) {
    return c->Error("logits and labels must have the same first dimension, got logits shape ",
                    features.DebugString(), " and labels shape ", labels.DebugString());
  }
  if (batch < 0) batch = label_batch;
  PartialTensorShape loss, backprop;
  TW_RETURN_IF_ERROR(PartialTensorShape::Build({batch}, &loss));
  TW_RETURN_IF_ERROR(PartialTensorShape::Build({batch, features.dim_size(1)}, &backprop));
  c->set_output(0, loss);
  c->set_output(1, backprop);
  return Status::OK();
}

// The bias gradient has the length of the channel dimension.
Status BiasAddGradShape(InferenceContext* c) {
  PartialTensorShape grad;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(0, 2, &grad));
  std::string data_format;
  TW_RETURN_IF_ERROR(c->GetAttr("data_format", &data_format));
  int64_t channels = -1;
  if (!grad.unknown_rank()) {
    channels = grad.dim_size(data_format == "NCHW" ? 1 : grad.dims() - 1);
  }
  PartialTensorShape out;
  TW_RETURN_IF_ERROR(PartialTensorShape::Build({channels}, &out));
  c->set_output(0, out);
  return Status::OK();
}

// [..., m, k] x [..., k, n] -> [broadcast(...), m, n], with adj_x / adj_y
// swapping the last two dimensions of x / y.
Status BatchMatMulV2Shape(InferenceContext* c) {
  PartialTensorShape x, y;
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(0, 2, &x));
  TW_RETURN_IF_ERROR(c->WithRankAtLeast(1, 2, &y));
  if (x.unknown_rank() || y.unknown_rank()) {
    c->set_output(0, PartialTensorShape());
    return Status::OK();
  }
  bool adj_x = false, adj_y = false;
  TW_RETURN_IF_ERROR(c->GetAttr("adj_x", &adj_x));
  TW_RETURN_IF_ERROR(c->GetAttr("adj_y", &adj_y));
  const int xr = x.dims(), yr = y.dims();
  const int64_t m = x.dim_size(adj_x ? xr - 1 : xr - 2);
  const int64_t x_inner = x.dim_size(adj_x ? xr - 2 : xr - 1);
  const int64_t y_inner = y.dim_size(adj_y ? yr - 1 : yr - 2);
  const int64_t n = y.dim_size(adj_y ? yr - 2 : yr - 1);
  if (x_inner >= 0 && y_inner >= 0 && x_inner != y_inner) {
    return c->Error("Matrix size-incompatible: In[0]: ", x.DebugString(),
                    ", In[1]: ", y.DebugString(), " (adj_x=", adj_x, ", adj_y=", adj_y, ")");
  }
  std::vector<int64_t> x_batch(x.dim_sizes().begin(), x.dim_sizes().end() - 2);
  std::vector<int64_t> y_batch(y.dim_sizes().begin(), y.dim_sizes().end() - 2);
  PartialTensorShape x_batch_shape, y_batch_shape, batch;
  TW_RETURN_IF_ERROR(PartialTensorShape::Build(x_batch, &x_batch_shape));
  TW_RETURN_IF_ERROR(PartialTensorShape::Build(y_batch, &y_batch_shape));
  Status status = shape_fns::BroadcastShapes(x_batch_shape, y_batch_shape, &batch);
  if (!status.ok()) {
    return c->Error("In[0] and In[1] must have broadcastable batch dimensions: ", x.DebugString(),
                    " vs. ", y.DebugString());
  }
  std::vector<int64_t> dims = batch.dim_sizes();
  dims.push_back(m);
  dims.push_back(n);
  PartialTensorShape out;
  TW_RETURN_IF_ERROR(PartialTensorShape::Build(dims, &out));
  c->set_output(0, out);
  return Status::OK();
}

}  // namespace

REGISTER_OP("ReluGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr("T: {" TW_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(ActivationGradShape)
    .Doc("gradients where features > 0, else 0.");

REGISTER_OP("Relu6")
    .Input("features: T")
    .Output("activations: T")
    .Attr("T: {" TW_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("min(max(features, 0), 6) elementwise.");

REGISTER_OP("Relu6Grad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr("T: {" TW_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(ActivationGradShape)
    .Doc("gradients where 0 < features < 6, else 0.");

REGISTER_OP("Elu")
    .Input("features: T")
    .Output("activations: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("features if > 0, else exp(features) - 1.");

REGISTER_OP("EluGrad")
    .Input("gradients: T")
    .Input("outputs: T")
    .Output("backprops: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(ActivationGradShape)
    .Doc("gradients if outputs > 0, else gradients * (outputs + 1).");

REGISTER_OP("Selu")
    .Input("features: T")
    .Output("activations: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("scale * features if > 0, else scale * alpha * (exp(features) - 1).");

REGISTER_OP("SeluGrad")
    .Input("gradients: T")
    .Input("outputs: T")
    .Output("backprops: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(ActivationGradShape)
    .Doc("gradients * scale if outputs > 0, else gradients * (outputs + scale * alpha).");

REGISTER_OP("Softplus")
    .Input("features: T")
    .Output("activations: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("log(exp(features) + 1) elementwise.");

REGISTER_OP("SoftplusGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(ActivationGradShape)
    .Doc("gradients * sigmoid(features).");

REGISTER_OP("LeakyRelu")
    .Input("features: T")
    .Output("activations: T")
    .Attr("alpha: float = 0.2")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "} = DT_FLOAT")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("features if > 0, else alpha * features.");

REGISTER_OP("LeakyReluGrad")
    .Input("gradients: T")
    .Input("features: T")
    .Output("backprops: T")
    .Attr("alpha: float = 0.2")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "} = DT_FLOAT")
    .SetShapeFn(ActivationGradShape)
    .Doc("gradients if features > 0, else alpha * gradients.");

REGISTER_OP("LogSoftmax")
    .Input("logits: T")
    .Output("logsoftmax: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(SoftmaxShape)
    .Doc("logits - log(sum(exp(logits))) along the last dimension.");

REGISTER_OP("SoftmaxCrossEntropyWithLogits")
    .Input("features: T")
    .Input("labels: T")
    .Output("loss: T")
    .Output("backprop: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(SoftmaxCrossEntropyShape)
    .Doc(
        "Per-row cross entropy of softmax(features) against label distributions, and its "
        "gradient softmax(features) - labels.");

REGISTER_OP("SparseSoftmaxCrossEntropyWithLogits")
    .Input("features: T")
    .Input("labels: Tlabels")
    .Output("loss: T")
    .Output("backprop: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("Tlabels: {int32, int64} = DT_INT64")
    .SetShapeFn(SparseSoftmaxCrossEntropyShape)
    .Doc(
        "Per-row cross entropy of softmax(features) against class indices in [0, classes), "
        "and its gradient.");

REGISTER_OP("L2Loss")
    .Input("t: T")
    .Output("output: T")
    .Attr("T: {" TW_FLOAT_TYPES "}")
    .SetShapeFn(shape_fns::ScalarShape)
    .Doc("sum(t ** 2) / 2.");

REGISTER_OP("BiasAddGrad")
    .Input("out_backprop: T")
    .Output("output: T")
    .Attr("T: {" TW_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .SetShapeFn(BiasAddGradShape)
    .Doc("Sums out_backprop over every dimension but the channel one.");

REGISTER_OP("BatchMatMulV2")
    .Input("x: T")
    .Input("y: T")
    .Output("output: T")
    .Attr("T: {" TW_ARITHMETIC_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("adj_x: bool = false")
    .Attr("adj_y: bool = false")
    // TensorFlow 2.21 marks the products its gradient builds; they compute
    // the same matrix product (a hint for its GPU kernels only).
    .Attr("grad_x: bool = false")
    .Attr("grad_y: bool = false")
    .SetShapeFn(BatchMatMulV2Shape)
    .Doc(
        "Matrix products over broadcast batch dimensions; adj_x / adj_y take the adjoint of "
        "each matrix of x / y.");

REGISTER_OP("Relu")
    .Input("features: T")
    .Output("activations: T")
    .Attr("T: {" TW_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(shape_fns::UnchangedShape)
    .Doc("max(features, 0) elementwise.");

REGISTER_OP("Softmax")
    .Input("logits: T")
    .Output("softmax: T")
    .Attr("T: {" TW_FLOAT_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .SetShapeFn(SoftmaxShape)
    .Doc("exp(logits) / sum(exp(logits)) along the last dimension.");

REGISTER_OP("BiasAdd")
    .Input("value: T")
    .Input("bias: T")
    .Output("output: T")
    .Attr("T: {" TW_NUMBER_TYPES ", " TW_HALF_FLOAT_TYPES "}")
    .Attr("data_format: {'NHWC', 'NCHW'} = 'NHWC'")
    .SetShapeFn(BiasAddShape)
    .Doc("Adds a 1-D bias along the channel dimension of value.");

}  // namespace tensorweave
