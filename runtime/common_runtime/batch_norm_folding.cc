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
  // The producer feeding `input`, when it is a convolution or MatMul in
  // NHWC with a Const filter (returned too) that only it reads, whose
  // output only `consumer` reads. Sets the output channel count.
  bool FoldableProducer(NodeOutput input, const Node* consumer, Node** filter,
                        int64_t* channels) const {
    Node* producer = input.node;
    if (producer == nullptr || input.index != 0 || NumConsumers(producer, 0) != 1 ||
        MustKeep(producer, options_) || MustKeepName(producer) ||
        producer->output_type(0) != DT_FLOAT || !ControlInputs(producer).empty() ||
        producer->requested_device() != consumer->requested_device()) {
      return false;
    }
    const std::string& type = producer->type_string();
    NodeOutput weights = DataInput(producer, 1);
    TensorShape shape;
    if (weights.node == nullptr || !ConstShape(weights.node, &shape) ||
        NumConsumers(weights.node, 0) != 1 || MustKeep(weights.node, options_)) {
      return false;
    }
    if (type == "Conv2D" || type == "DepthwiseConv2dNative") {
      if (StringAttr(producer, "data_format", "NHWC") != "NHWC" || shape.dims() != 4) return false;
      *channels = type == "Conv2D" ? shape.dim_size(3) : shape.dim_size(2) * shape.dim_size(3);
    } else if (type == "MatMul") {
      if (shape.dims() != 2 || BoolAttr(producer, "transpose_b", false)) return false;
      *channels = shape.dim_size(1);
    } else {
      return false;
    }
    *filter = weights.node;
    return true;
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

  // filter * factor, with factor reshaped to the filter's channel layout.
  Status ScaleFilter(Node* producer, Node* filter, NodeOutput factor, bool scalar_factor) {
    TensorShape shape;
    ConstShape(filter, &shape);
    NodeOutput aligned = factor;
    if (producer->type_string() == "DepthwiseConv2dNative" && !scalar_factor) {
      Tensor dims;
      TW_RETURN_IF_ERROR(Tensor::Allocate(DT_INT32, TensorShape({2}), &dims));
      dims.data<int32_t>()[0] = static_cast<int32_t>(shape.dim_size(2));
      dims.data<int32_t>()[1] = static_cast<int32_t>(shape.dim_size(3));
      Node* dims_node = Constant(producer, dims);
      NodeDef reshape;
      reshape.set_op("Reshape");
      SetAttrValue(DT_FLOAT, &(*reshape.mutable_attr())["T"]);
      SetAttrValue(DT_INT32, &(*reshape.mutable_attr())["Tshape"]);
      Node* reshaped =
          dims_node == nullptr ? nullptr : AddNode(reshape, producer, {factor, {dims_node, 0}});
      if (reshaped == nullptr) return errors::Internal("Could not reshape a batch-norm factor");
      aligned = {reshaped, 0};
    }
    Node* scaled = Binary("Mul", producer, {filter, 0}, aligned);
    if (scaled == nullptr) return errors::Internal("Could not scale a filter");
    const Edge* edge = nullptr;
    TW_RETURN_IF_ERROR(producer->input_edge(1, &edge));
    graph_->RemoveEdge(edge);
    return graph_->AddEdge(scaled, 0, producer, 1);
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
    NodeOutput conv = DataInput(node, 0);
    Node* filter = nullptr;
    int64_t channels = 0;
    if (!FoldableProducer(conv, node, &filter, &channels)) return Status::OK();
    NodeOutput params[4];  // scale, offset, mean, variance
    for (int i = 0; i < 4; ++i) {
      params[i] = DataInput(node, i + 1);
      TensorShape shape;
      if (!ConstShape(params[i].node, &shape) || shape.dims() != 1 ||
          shape.dim_size(0) != channels) {
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
    Node* bias = moved ? Binary("Sub", node, params[1], {moved, 0}) : nullptr;
    if (bias == nullptr) return errors::Internal("Could not build the folded batch norm");
    TW_RETURN_IF_ERROR(ScaleFilter(conv.node, filter, {factor, 0}, false));
    dead_candidates_.push_back(filter->id());
    TW_RETURN_IF_ERROR(ToBiasAdd(node, conv, {bias, 0}));
    *done = true;
    return Status::OK();
  }

  // Mul(conv, factor) with a Const factor of one value per channel (or a
  // scalar): the factor goes into the filter and the Mul is bypassed.
  Status FoldScale(Node* node, bool* done) {
    if (node->output_type(0) != DT_FLOAT || MustKeepName(node) || !ControlInputs(node).empty()) {
      return Status::OK();
    }
    for (int conv_slot = 0; conv_slot < 2; ++conv_slot) {
      NodeOutput conv = DataInput(node, conv_slot), factor = DataInput(node, 1 - conv_slot);
      TensorShape shape;
      Node* filter = nullptr;
      int64_t channels = 0;
      if (!ConstShape(factor.node, &shape) || !FoldableProducer(conv, node, &filter, &channels)) {
        continue;
      }
      const bool scalar = shape.dims() == 0;
      if (!scalar && !(shape.dims() == 1 && shape.dim_size(0) == channels)) continue;
      TW_RETURN_IF_ERROR(ScaleFilter(conv.node, filter, factor, scalar));
      dead_candidates_.push_back(filter->id());
      TW_RETURN_IF_ERROR(ForwardConsumers(graph_, NodeOutput{node, 0}, conv));
      dead_candidates_.push_back(factor.node->id());
      graph_->RemoveNode(node);
      *done = true;
      return Status::OK();
    }
    return Status::OK();
  }

  // Add(conv, shift) with a Const shift of one value per channel: a BiasAdd,
  // which convolution fusion recognises.
  Status AddToBiasAdd(Node* node, bool* done) {
    if (node->output_type(0) != DT_FLOAT) return Status::OK();
    for (int conv_slot = 0; conv_slot < 2; ++conv_slot) {
      NodeOutput conv = DataInput(node, conv_slot), shift = DataInput(node, 1 - conv_slot);
      TensorShape shape;
      if (conv.node == nullptr || !ConstShape(shift.node, &shape) || shape.dims() != 1) continue;
      const std::string& type = conv.node->type_string();
      if (type != "Conv2D" && type != "DepthwiseConv2dNative" && type != "MatMul") continue;
      if (StringAttr(conv.node, "data_format", "NHWC") != "NHWC") continue;
      TensorShape filter_shape;
      if (!ConstShape(DataInput(conv.node, 1).node, &filter_shape)) continue;
      int64_t channels = -1;
      if (type == "Conv2D" && filter_shape.dims() == 4) channels = filter_shape.dim_size(3);
      if (type == "DepthwiseConv2dNative" && filter_shape.dims() == 4) {
        channels = filter_shape.dim_size(2) * filter_shape.dim_size(3);
      }
      if (type == "MatMul" && filter_shape.dims() == 2 &&
          !BoolAttr(conv.node, "transpose_b", false)) {
        channels = filter_shape.dim_size(1);
      }
      if (channels != shape.dim_size(0)) continue;
      TW_RETURN_IF_ERROR(ToBiasAdd(node, conv, shift));
      *done = true;
      return Status::OK();
    }
    return Status::OK();
  }

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
