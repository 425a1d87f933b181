// Inference batch-norm folding. A batch norm in inference mode is an affine
// map per output channel, y = x * factor + (offset - mean * factor) with
// factor = scale / sqrt(variance + epsilon); after a Conv2D,
// DepthwiseConv2dNative or MatMul whose filter is a Const read by nothing
// else, the factor goes into the filter and the rest becomes a BiasAdd:
//   FusedBatchNorm{,V2,V3}(conv(x, W), scale, offset, mean, variance), is_training=false
//     → BiasAdd(conv(x, W * factor), offset - mean * factor)
// and the unfused form Keras freezes (after constant folding made its
// factor and shift constants):
//   AddV2(Mul(conv(x, W), factor), shift) → BiasAdd(conv(x, W * factor), shift)
// The new filter and bias are built as constant expressions of the old
// constants, which the constant folding after this pass evaluates; the
// batch norm (or Mul, Add) keeps its name as the BiasAdd (or is bypassed).
// Only NHWC (channels last) layouts, float dtypes, and per-channel
// constants of exactly the channel count (or a scalar factor) fold.
#include <unordered_map>

#include "runtime/common_runtime/graph_optimizer.h"
#include "runtime/common_runtime/graph_rewrite_util.h"
#include "runtime/framework/node_def_util.h"
#include "runtime/graph/algorithm.h"

namespace tensorweave {
namespace {

// A Const's shape without parsing its value.
bool ConstShape(const Node* node, TensorShape* shape) {
  if (node == nullptr || !IsConstOp(node)) return false;
  const AttrValue* value = FindNodeAttr(node->def(), "value");
  return value != nullptr && TensorShape::FromProto(value->tensor().tensor_shape(), shape).ok();
}

std::string StringAttr(const Node* node, const char* name, const char* fallback) {
  std::string value;
  return GetNodeAttr(node->def(), name, &value).ok() ? value : fallback;
}

bool BoolAttr(const Node* node, const char* name, bool fallback) {
  bool value = false;
  return GetNodeAttr(node->def(), name, &value).ok() ? value : fallback;
}

class BatchNormFolder {
 public:
  BatchNormFolder(const GraphOptimizerOptions& options, Graph* graph)
      : options_(options), graph_(graph) {}

  Status Run(bool* changed) {
    // Topological, so a Mul folded into its convolution leaves the Add after
    // it reading the convolution by the time the Add is looked at.
    std::vector<Node*> order;
    TW_RETURN_IF_ERROR(TopologicalOrder(*graph_, &order));
    std::vector<int> ids;
    for (Node* node : order) {
      if (node->IsOp()) ids.push_back(node->id());
    }
    for (int id : ids) {
      Node* node = graph_->FindNodeId(id);
      if (node == nullptr || MustKeep(node, options_)) continue;
      const std::string& type = node->type_string();
      bool done = false;
      if (type == "FusedBatchNorm" || type == "FusedBatchNormV2" || type == "FusedBatchNormV3") {
        TW_RETURN_IF_ERROR(FoldFusedBatchNorm(node, &done));
      } else if (type == "Mul") {
        TW_RETURN_IF_ERROR(FoldScale(node, &done));
      } else if (type == "Add" || type == "AddV2") {
        TW_RETURN_IF_ERROR(AddToBiasAdd(node, &done));
      }
      if (done) *changed = true;
    }
    RemoveDeadNodes(graph_, options_, dead_candidates_);
    return Status::OK();
  }

 private:
  // A constant's shape: a Const's, or one of the constant expressions this
  // pass built.
  bool KnownConstShape(const Node* node, TensorShape* shape) const {
    if (node == nullptr) return false;
    auto built = built_shapes_.find(node->id());
    if (built != built_shapes_.end()) {
      *shape = built->second;
      return true;
    }
    return ConstShape(node, shape);
  }

  // A convolution or MatMul in NHWC with a constant filter that only it
  // reads, optionally followed by a BiasAdd of a constant: what a per-channel
  // scale or shift after it can fold into.
  struct Producer {
    Node* conv = nullptr;
    Node* filter = nullptr;
    TensorShape filter_shape;
    int64_t channels = 0;
    Node* bias_add = nullptr;  // null: the consumer reads the convolution
    Node* bias = nullptr;
  };

  // Whether `node` (output 0 read by `consumer` alone) may be rewritten.
  bool Rewritable(const Node* node, int index, const Node* consumer) const {
    return node != nullptr && index == 0 && NumConsumers(node, 0) == 1 &&
           !MustKeep(node, options_) && !MustKeepName(node) && node->output_type(0) == DT_FLOAT &&
           ControlInputs(node).empty() && node->requested_device() == consumer->requested_device();
  }

  bool FindProducer(NodeOutput input, const Node* consumer, Producer* producer) const {
    if (!Rewritable(input.node, input.index, consumer)) return false;
    Node* conv = input.node;
    if (conv->type_string() == "BiasAdd") {
      producer->bias_add = conv;
      producer->bias = DataInput(conv, 1).node;
      TensorShape bias_shape;
      NodeOutput conv_output = DataInput(conv, 0);
      if (StringAttr(conv, "data_format", "NHWC") != "NHWC" ||
          !KnownConstShape(producer->bias, &bias_shape) || bias_shape.dims() != 1 ||
          NumConsumers(producer->bias, 0) != 1 || MustKeep(producer->bias, options_) ||
          !Rewritable(conv_output.node, conv_output.index, conv)) {
        return false;
      }
      conv = conv_output.node;
    }
    const std::string& type = conv->type_string();
    NodeOutput weights = DataInput(conv, 1);
    TensorShape& shape = producer->filter_shape;
    if (weights.node == nullptr || !KnownConstShape(weights.node, &shape) ||
        NumConsumers(weights.node, 0) != 1 || MustKeep(weights.node, options_)) {
      return false;
    }
    if (type == "Conv2D" || type == "DepthwiseConv2dNative") {
      if (StringAttr(conv, "data_format", "NHWC") != "NHWC" || shape.dims() != 4) return false;
      producer->channels =
          type == "Conv2D" ? shape.dim_size(3) : shape.dim_size(2) * shape.dim_size(3);
    } else if (type == "MatMul") {
      if (shape.dims() != 2 || BoolAttr(conv, "transpose_b", false)) return false;
      producer->channels = shape.dim_size(1);
    } else {
      return false;
    }
    if (producer->bias_add != nullptr) {
      TensorShape bias_shape;
      KnownConstShape(producer->bias, &bias_shape);
      if (bias_shape.dim_size(0) != producer->channels) return false;
    }
    producer->conv = conv;
    producer->filter = weights.node;
    return true;
  }

  // Whether a constant of `shape` holds one value per channel of the
  // producer's output without changing that output's shape when broadcast
  // against it: [C], or [1, ..., 1, C] of at most the output's rank
  // (Keras reshapes its batch-norm vectors to [1, 1, 1, C]).
  static bool PerChannel(const TensorShape& shape, const Producer& producer) {
    const int output_rank = producer.conv->type_string() == "MatMul" ? 2 : 4;
    if (shape.dims() < 1 || shape.dims() > output_rank ||
        shape.dim_size(shape.dims() - 1) != producer.channels) {
      return false;
    }
    for (int i = 0; i + 1 < shape.dims(); ++i) {
      if (shape.dim_size(i) != 1) return false;
    }
    return true;
  }

  // `value` (a per-channel constant of `shape`) as a vector [C].
  NodeOutput AsChannelVector(NodeOutput value, const TensorShape& shape, int64_t channels,
                             const Node* near) {
    if (shape.dims() == 1) return value;
    Tensor dims;
    if (!Tensor::Allocate(DT_INT32, TensorShape({1}), &dims).ok()) return NodeOutput();
    dims.data<int32_t>()[0] = static_cast<int32_t>(channels);
    Node* dims_node = Constant(near, dims);
    NodeDef reshape;
    reshape.set_op("Reshape");
    SetAttrValue(DT_FLOAT, &(*reshape.mutable_attr())["T"]);
    SetAttrValue(DT_INT32, &(*reshape.mutable_attr())["Tshape"]);
    Node* reshaped =
        dims_node == nullptr ? nullptr : AddNode(reshape, near, {value, {dims_node, 0}});
    if (reshaped == nullptr) return NodeOutput();
    built_shapes_[reshaped->id()] = TensorShape({channels});
    return {reshaped, 0};
  }

  // Replaces input `slot` of `node` by `value`.
  Status Rewire(Node* node, int slot, NodeOutput value) {
    const Edge* edge = nullptr;
    TW_RETURN_IF_ERROR(node->input_edge(slot, &edge));
    graph_->RemoveEdge(edge);
    return graph_->AddEdge(value.node, value.index, node, slot);
  }

  Node* AddNode(NodeDef def, const Node* near, const std::vector<NodeOutput>& inputs) {
    def.set_name(graph_->NewName(near->name()));
    def.set_device(near->requested_device());
    Node* added = nullptr;
    if (!graph_->AddNode(def, &added).ok()) return nullptr;
    added->set_assigned_device_name(near->assigned_device_name());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!graph_->AddEdge(inputs[i].node, inputs[i].index, added, static_cast<int>(i)).ok()) {
        graph_->RemoveNode(added);
        return nullptr;
      }
    }
    return added;
  }

  Node* Binary(const char* op, const Node* near, NodeOutput a, NodeOutput b) {
    NodeDef def;
    def.set_op(op);
    SetAttrValue(DT_FLOAT, &(*def.mutable_attr())["T"]);
    return AddNode(def, near, {a, b});
  }

  Node* Constant(const Node* near, const Tensor& value) {
    return AddNode(ConstNodeDef("", "", value), near, {});
  }

  // The producer's filter (and bias) times factor, with factor reshaped to
  // the filter's channel layout.
  Status ScaleProducer(const Producer& producer, NodeOutput factor, bool scalar_factor) {
    const TensorShape& shape = producer.filter_shape;
    Node* conv = producer.conv;
    NodeOutput aligned = factor;
    if (conv->type_string() == "DepthwiseConv2dNative" && !scalar_factor) {
      Tensor dims;
      TW_RETURN_IF_ERROR(Tensor::Allocate(DT_INT32, TensorShape({2}), &dims));
      dims.data<int32_t>()[0] = static_cast<int32_t>(shape.dim_size(2));
      dims.data<int32_t>()[1] = static_cast<int32_t>(shape.dim_size(3));
      Node* dims_node = Constant(conv, dims);
      NodeDef reshape;
      reshape.set_op("Reshape");
      SetAttrValue(DT_FLOAT, &(*reshape.mutable_attr())["T"]);
      SetAttrValue(DT_INT32, &(*reshape.mutable_attr())["Tshape"]);
      Node* reshaped =
          dims_node == nullptr ? nullptr : AddNode(reshape, conv, {factor, {dims_node, 0}});
      if (reshaped == nullptr) return errors::Internal("Could not reshape a batch-norm factor");
      aligned = {reshaped, 0};
    }
    Node* scaled = Binary("Mul", conv, {producer.filter, 0}, aligned);
    if (scaled == nullptr) return errors::Internal("Could not scale a filter");
    built_shapes_[scaled->id()] = shape;
    TW_RETURN_IF_ERROR(Rewire(conv, 1, {scaled, 0}));
    if (producer.bias_add != nullptr) {
      Node* bias = Binary("Mul", producer.bias_add, {producer.bias, 0}, factor);
      if (bias == nullptr) return errors::Internal("Could not scale a bias");
      built_shapes_[bias->id()] = TensorShape({producer.channels});
      TW_RETURN_IF_ERROR(Rewire(producer.bias_add, 1, {bias, 0}));
    }
    return Status::OK();
  }

  // `node` becomes BiasAdd(conv, bias) under its own name.
  Status ToBiasAdd(Node* node, NodeOutput conv, NodeOutput bias) {
    NodeDef def;
    def.set_name(node->name());
    def.set_op("BiasAdd");
    def.set_device(node->requested_device());
    SetAttrValue(DT_FLOAT, &(*def.mutable_attr())["T"]);
    SetAttrValue(std::string("NHWC"), &(*def.mutable_attr())["data_format"]);
    return ReplaceNode(graph_, node, def, {conv, bias}, ControlInputs(node));
  }

  Status FoldFusedBatchNorm(Node* node, bool* done) {
    if (BoolAttr(node, "is_training", true) || StringAttr(node, "data_format", "NHWC") != "NHWC" ||
        node->output_type(0) != DT_FLOAT || node->input_type(1) != DT_FLOAT) {
      return Status::OK();
    }
    for (int i = 1; i < node->num_outputs(); ++i) {
      if (NumConsumers(node, i) != 0) return Status::OK();
    }
    Producer producer;
    if (!FindProducer(DataInput(node, 0), node, &producer)) return Status::OK();
    NodeOutput params[4];  // scale, offset, mean, variance
    for (int i = 0; i < 4; ++i) {
      params[i] = DataInput(node, i + 1);
      TensorShape shape;
      if (!ConstShape(params[i].node, &shape) || shape.dims() != 1 ||
          shape.dim_size(0) != producer.channels) {
        return Status::OK();
      }
    }
    float epsilon = 0.001f;
    (void)GetNodeAttr(node->def(), "epsilon", &epsilon);  // absent: the default
    Tensor epsilon_value;
    TW_RETURN_IF_ERROR(Tensor::Allocate(DT_FLOAT, TensorShape(), &epsilon_value));
    epsilon_value.data<float>()[0] = epsilon;
    Node* epsilon_node = Constant(node, epsilon_value);
    Node* shifted = epsilon_node ? Binary("AddV2", node, params[3], {epsilon_node, 0}) : nullptr;
    NodeDef rsqrt;
    rsqrt.set_op("Rsqrt");
    SetAttrValue(DT_FLOAT, &(*rsqrt.mutable_attr())["T"]);
    Node* inverse = shifted ? AddNode(rsqrt, node, {{shifted, 0}}) : nullptr;
    Node* factor = inverse ? Binary("Mul", node, params[0], {inverse, 0}) : nullptr;
    Node* moved = factor ? Binary("Mul", node, params[2], {factor, 0}) : nullptr;
    Node* shift = moved ? Binary("Sub", node, params[1], {moved, 0}) : nullptr;
    if (shift == nullptr) return errors::Internal("Could not build the folded batch norm");
    TW_RETURN_IF_ERROR(ScaleProducer(producer, {factor, 0}, false));
    built_shapes_[shift->id()] = TensorShape({producer.channels});
    TW_RETURN_IF_ERROR(ShiftIntoBias(node, producer, {shift, 0}));
    *done = true;
    return Status::OK();
  }

  // `node` (adding `shift` per channel to the producer's output) becomes
  // BiasAdd(conv, shift), or BiasAdd(conv, bias + shift) after a BiasAdd.
  Status ShiftIntoBias(Node* node, const Producer& producer, NodeOutput shift) {
    NodeOutput bias = shift;
    if (producer.bias_add != nullptr) {
      // The BiasAdd's bias now, which ScaleProducer may have replaced.
      Node* sum = Binary("AddV2", node, DataInput(producer.bias_add, 1), shift);
      if (sum == nullptr) return errors::Internal("Could not add biases");
      built_shapes_[sum->id()] = TensorShape({producer.channels});
      bias = {sum, 0};
      dead_candidates_.push_back(producer.bias_add->id());
    }
    return ToBiasAdd(node, {producer.conv, 0}, bias);
  }

  // Mul(producer, factor) with a constant factor of one value per channel
  // (or a scalar): the factor goes into the filter (and bias), and the Mul
  // is bypassed.
  Status FoldScale(Node* node, bool* done) {
    if (node->output_type(0) != DT_FLOAT || MustKeepName(node) || !ControlInputs(node).empty()) {
      return Status::OK();
    }
    for (int slot = 0; slot < 2; ++slot) {
      NodeOutput input = DataInput(node, slot), factor = DataInput(node, 1 - slot);
      TensorShape shape;
      Producer producer;
      if (!KnownConstShape(factor.node, &shape) || !FindProducer(input, node, &producer)) {
        continue;
      }
      const bool scalar = shape.dims() == 0;
      if (!scalar && !PerChannel(shape, producer)) continue;
      NodeOutput vector = scalar ? factor : AsChannelVector(factor, shape, producer.channels, node);
      if (vector.node == nullptr) return errors::Internal("Could not reshape a scale");
      TW_RETURN_IF_ERROR(ScaleProducer(producer, vector, scalar));
      TW_RETURN_IF_ERROR(ForwardConsumers(graph_, NodeOutput{node, 0}, input));
      dead_candidates_.push_back(factor.node->id());
      graph_->RemoveNode(node);
      *done = true;
      return Status::OK();
    }
    return Status::OK();
  }

  // Add(producer, shift) with a constant shift of one value per channel: a
  // BiasAdd, which convolution fusion recognises.
  Status AddToBiasAdd(Node* node, bool* done) {
    if (node->output_type(0) != DT_FLOAT) return Status::OK();
    for (int slot = 0; slot < 2; ++slot) {
      NodeOutput input = DataInput(node, slot), shift = DataInput(node, 1 - slot);
      TensorShape shape;
      Producer producer;
      if (!KnownConstShape(shift.node, &shape) || !FindProducer(input, node, &producer) ||
          !PerChannel(shape, producer)) {
        continue;
      }
      NodeOutput vector = AsChannelVector(shift, shape, producer.channels, node);
      if (vector.node == nullptr) return errors::Internal("Could not reshape a shift");
      TW_RETURN_IF_ERROR(ShiftIntoBias(node, producer, vector));
      *done = true;
      return Status::OK();
    }
    return Status::OK();
  }

  std::unordered_map<int, TensorShape> built_shapes_;  // constant expressions built here
  const GraphOptimizerOptions& options_;
  Graph* graph_;
  std::vector<int> dead_candidates_;
};

}  // namespace

Status FoldBatchNorms(const GraphOptimizerOptions& options, Graph* graph, bool* changed) {
  BatchNormFolder folder(options, graph);
  return folder.Run(changed);
}

}  // namespace tensorweave
