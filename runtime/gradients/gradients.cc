#include "runtime/gradients/gradients.h"

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "runtime/framework/str_util.h"
#include "runtime/gradients/gradient_registry.h"
#include "runtime/gradients/while_gradients.h"

namespace tensorweave {
namespace {

// A tensor as a hashable key: node id and output index.
int64_t Key(const NodeOutput& tensor) {
  return (static_cast<int64_t>(tensor.node->id()) << 32) | static_cast<uint32_t>(tensor.index);
}

class SymbolicGradientBuilder {
 public:
  SymbolicGradientBuilder(GradientScope& scope, const std::vector<NodeOutput>& outputs,
                          const std::vector<NodeOutput>& inputs,
                          const std::vector<NodeOutput>& grad_inputs,
                          std::vector<NodeOutput>* grad_outputs, bool allow_unreachable)
      : scope_(scope),
        graph_(*scope.graph()),
        outputs_(outputs),
        inputs_(inputs),
        grad_inputs_(grad_inputs),
        grad_outputs_(grad_outputs),
        allow_unreachable_(allow_unreachable),
        loops_(
            &scope, [this](const Node* exit) { return expected_exits_.count(exit) > 0; },
            [this](const Node* enter) {
              return reaching_[enter->id()] && backprops_.count(Key(ForwardInput(*enter, 0))) > 0;
            }) {}

  Status Run();

 private:
  Status Initialize();
  // By node id: whether some output is reachable from the node along data
  // edges (only such nodes can receive a gradient).
  std::vector<bool> NodesReachingOutputs() const;
  // Records `grad` as one of the gradients of `src`; a node whose outputs
  // have all their gradients becomes ready.
  void BackpropAlongEdge(const NodeOutput& grad, const NodeOutput& src);
  // The sum of the gradients recorded for `tensor` (NoGradient() if none).
  NodeOutput SumGradients(const NodeOutput& tensor);
  // Sends `grads[i]` to the producer of data input i of `node`.
  Status BackpropToInputs(const Node& node, const std::vector<NodeOutput>& grads);

  GradientScope& scope_;
  const Graph& graph_;
  const std::vector<NodeOutput>& outputs_;
  const std::vector<NodeOutput>& inputs_;
  const std::vector<NodeOutput>& grad_inputs_;
  std::vector<NodeOutput>* grad_outputs_;
  const bool allow_unreachable_;
  // Inputs no gradient can reach (allow_unreachable_ only): left out.
  std::vector<NodeOutput> reachable_inputs_;

  // Gradients received so far by each tensor on a path from the inputs; a
  // tensor absent here needs none.
  std::unordered_map<int64_t, std::vector<NodeOutput>> backprops_;
  // By node id: how many gradients the node still waits for.
  std::vector<int> pending_;
  std::deque<Node*> ready_;
  std::unordered_set<int> output_nodes_;
  // Each requested input tensor and its positions in grad_outputs_.
  std::unordered_map<int64_t, std::vector<size_t>> input_positions_;
  // By node id: whether some output is reachable from the node.
  std::vector<bool> reaching_;
  // Loop Exits that will receive a gradient.
  std::unordered_set<const Node*> expected_exits_;
  // Gradients of while loops, built once all of a loop's exits have theirs.
  WhileGradients loops_;
};

std::vector<bool> SymbolicGradientBuilder::NodesReachingOutputs() const {
  std::vector<bool> reaching(graph_.num_node_ids(), false);
  std::deque<const Node*> queue;
  for (const NodeOutput& output : outputs_) {
    if (!reaching[output.node->id()]) {
      reaching[output.node->id()] = true;
      queue.push_back(output.node);
    }
  }
  while (!queue.empty()) {
    const Node* node = queue.front();
    queue.pop_front();
    for (const Edge* edge : node->in_edges()) {
      if (edge->IsControlEdge() || reaching[edge->src()->id()]) continue;
      reaching[edge->src()->id()] = true;
      queue.push_back(edge->src());
    }
  }
  return reaching;
}

Status SymbolicGradientBuilder::Initialize() {
  if (outputs_.size() != grad_inputs_.size()) {
    return errors::InvalidArgument("Must specify a gradient input for each output.");
  }
  reaching_ = NodesReachingOutputs();
  const std::vector<bool>& reaching = reaching_;
  for (const NodeOutput& input : inputs_) {
    if (reaching[input.node->id()]) {
      reachable_inputs_.push_back(input);
    } else if (!allow_unreachable_) {
      return errors::InvalidArgument("Cannot compute the partial derivative for node '",
                                     input.node->name(),
                                     "' as it's unreachable from the output node(s).");
    }
  }
  grad_outputs_->assign(inputs_.size(), NoGradient());
  for (const NodeOutput& output : outputs_) output_nodes_.insert(output.node->id());
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (reaching[inputs_[i].node->id()]) input_positions_[Key(inputs_[i])].push_back(i);
  }

  // Forward from the inputs: the tensors that need a gradient, and how many
  // gradients each node will receive (one per data edge to a node that
  // reaches the outputs; an output node stops the walk and receives one per
  // time it is named in `outputs`).
  pending_.assign(graph_.num_node_ids(), 0);
  std::unordered_set<const Node*> visited;
  std::deque<Node*> queue;
  for (const NodeOutput& input : reachable_inputs_) {
    if (visited.insert(input.node).second) queue.push_back(input.node);
  }
  while (!queue.empty()) {
    Node* node = queue.front();
    queue.pop_front();
    for (int i = 0; i < node->num_outputs(); ++i) backprops_[Key({node, i})];
    int expected = 0;
    if (output_nodes_.count(node->id()) == 0) {
      for (const Edge* edge : node->out_edges()) {
        if (edge->IsControlEdge() || !reaching[edge->dst()->id()]) continue;
        if (visited.insert(edge->dst()).second) queue.push_back(edge->dst());
        ++expected;
      }
    } else {
      for (const NodeOutput& output : outputs_) expected += output.node == node ? 1 : 0;
    }
    pending_[node->id()] = expected;
    if (expected > 0 && WhileGradients::IsLoopExit(*node)) expected_exits_.insert(node);
  }
  for (size_t i = 0; i < outputs_.size(); ++i) BackpropAlongEdge(grad_inputs_[i], outputs_[i]);
  return Status::OK();
}

void SymbolicGradientBuilder::BackpropAlongEdge(const NodeOutput& grad, const NodeOutput& src) {
  auto found = backprops_.find(Key(src));
  if (found == backprops_.end()) return;
  found->second.push_back(grad);
  if (--pending_[src.node->id()] == 0) ready_.push_back(src.node);
}

NodeOutput SymbolicGradientBuilder::SumGradients(const NodeOutput& tensor) {
  std::vector<NodeOutput> present;
  for (const NodeOutput& grad : backprops_[Key(tensor)]) {
    if (!IsNoGradient(grad)) present.push_back(grad);
  }
  if (present.empty()) return NoGradient();
  if (present.size() == 1) return present[0];
  return scope_.Op("AddN", {GradientArg::List(present)});
}

Status SymbolicGradientBuilder::BackpropToInputs(const Node& node,
                                                 const std::vector<NodeOutput>& grads) {
  for (const Edge* edge : node.in_edges()) {
    if (edge->IsControlEdge()) continue;
    if (edge->dst_input() >= static_cast<int>(grads.size())) {
      return errors::Internal("The gradient of ", node.type_string(), " node '", node.name(),
                              "' gave ", grads.size(), " input gradients for ", node.num_inputs(),
                              " inputs");
    }
    BackpropAlongEdge(grads[edge->dst_input()], {edge->src(), edge->src_output()});
  }
  return Status::OK();
}

Status SymbolicGradientBuilder::Run() {
  TW_RETURN_IF_ERROR(Initialize());
  while (!ready_.empty()) {
    Node* node = ready_.front();
    ready_.pop_front();
    const int num_outputs = node->num_outputs();
    std::vector<NodeOutput> grads(num_outputs);
    int num_absent = 0;
    for (int i = 0; i < num_outputs; ++i) {
      grads[i] = SumGradients({node, i});
      TW_RETURN_IF_ERROR(scope_.status());
      if (IsNoGradient(grads[i])) ++num_absent;
      auto requested = input_positions_.find(Key({node, i}));
      if (requested != input_positions_.end()) {
        for (size_t position : requested->second) (*grad_outputs_)[position] = grads[i];
      }
    }
    // Backpropagation ends at a node none of whose inputs needs a gradient.
    bool needs_more = false;
    for (const Edge* edge : node->in_edges()) {
      if (!edge->IsControlEdge() && backprops_.count(Key({edge->src(), edge->src_output()}))) {
        needs_more = true;
        break;
      }
    }
    if (!needs_more) continue;

    if (WhileGradients::IsLoopExit(*node)) {
      std::vector<std::pair<NodeOutput, NodeOutput>> entry_grads;
      TW_RETURN_IF_ERROR(loops_.AddExitGradient(*node, grads[0], &entry_grads));
      for (const auto& entry : entry_grads) BackpropAlongEdge(entry.second, entry.first);
      continue;
    }

    GradientFunction function = nullptr;
    if (num_absent < num_outputs) {
      TW_RETURN_IF_ERROR(GradientRegistry::Global()->Lookup(node->type_string(), &function));
    }
    if (function == nullptr) {
      // No gradient reaches the inputs: tell them, so they stop waiting.
      TW_RETURN_IF_ERROR(
          BackpropToInputs(*node, std::vector<NodeOutput>(node->num_inputs(), NoGradient())));
      continue;
    }
    // Some outputs have gradients and some not: the function gets zeros for
    // the others, as TensorFlow gives it.
    for (int i = 0; i < num_outputs; ++i) {
      if (IsNoGradient(grads[i])) grads[i] = scope_.ZerosLike({node, i});
    }
    std::vector<NodeOutput> input_grads;
    TW_RETURN_IF_ERROR(scope_.status());
    TW_RETURN_IF_ERROR(function(scope_, *node, grads, &input_grads));
    TW_RETURN_IF_ERROR(scope_.status());
    TW_RETURN_IF_ERROR(BackpropToInputs(*node, input_grads));
  }
  // A requested input whose node has outputs nobody asked about may still
  // wait for those: its requested outputs' gradients are complete anyway.
  for (const NodeOutput& input : reachable_inputs_) {
    if (pending_[input.node->id()] <= 0) continue;
    NodeOutput sum = SumGradients(input);
    TW_RETURN_IF_ERROR(scope_.status());
    for (size_t position : input_positions_[Key(input)]) (*grad_outputs_)[position] = sum;
  }
  return Status::OK();
}

// INVALID_ARGUMENT / OUT_OF_RANGE unless `tensor` is an output of a node of
// `graph`.
Status CheckTensor(const Graph& graph, const NodeOutput& tensor, const char* what, size_t i) {
  if (tensor.node == nullptr || graph.FindNodeId(tensor.node->id()) != tensor.node ||
      !tensor.node->IsOp()) {
    return errors::InvalidArgument(what, "[", i, "] is not an operation of this graph");
  }
  if (tensor.index < 0 || tensor.index >= tensor.node->num_outputs()) {
    return errors::OutOfRange(what, "[", i, "] names output ", tensor.index, " of '",
                              tensor.node->name(), "', which has ", tensor.node->num_outputs(),
                              " outputs");
  }
  return Status::OK();
}

Status CheckTensors(const Graph& graph, const std::vector<NodeOutput>& tensors, const char* what) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    TW_RETURN_IF_ERROR(CheckTensor(graph, tensors[i], what, i));
  }
  return Status::OK();
}

Status AddGradientsUnchecked(GradientScope& scope, const std::vector<NodeOutput>& outputs,
                             const std::vector<NodeOutput>& inputs,
                             const std::vector<NodeOutput>* grad_inputs,
                             std::vector<NodeOutput>* grad_outputs) {
  if (grad_inputs != nullptr) {
    return AddSymbolicGradients(scope, outputs, inputs, *grad_inputs, grad_outputs);
  }
  std::vector<NodeOutput> ones;
  for (const NodeOutput& output : outputs) ones.push_back(scope.Op("OnesLike", {output}));
  TW_RETURN_IF_ERROR(scope.status());
  return AddSymbolicGradients(scope, outputs, inputs, ones, grad_outputs);
}

}  // namespace

Status AddSymbolicGradients(GradientScope& scope, const std::vector<NodeOutput>& outputs,
                            const std::vector<NodeOutput>& inputs,
                            const std::vector<NodeOutput>& grad_inputs,
                            std::vector<NodeOutput>* grad_outputs) {
  if (outputs.empty()) {
    grad_outputs->assign(inputs.size(), NoGradient());
    if (inputs.empty()) return Status::OK();
    return errors::InvalidArgument("Cannot compute the partial derivative for node '",
                                   inputs[0].node->name(),
                                   "' as it's unreachable from the output node(s).");
  }
  SymbolicGradientBuilder builder(scope, outputs, inputs, grad_inputs, grad_outputs,
                                  /*allow_unreachable=*/false);
  return builder.Run();
}

Status AddSymbolicGradientsOfReachable(GradientScope& scope, const std::vector<NodeOutput>& outputs,
                                       const std::vector<NodeOutput>& inputs,
                                       const std::vector<NodeOutput>& grad_inputs,
                                       std::vector<NodeOutput>* grad_outputs) {
  if (outputs.empty()) {
    grad_outputs->assign(inputs.size(), NoGradient());
    return Status::OK();
  }
  SymbolicGradientBuilder builder(scope, outputs, inputs, grad_inputs, grad_outputs,
                                  /*allow_unreachable=*/true);
  return builder.Run();
}

Status AddGradients(Graph* graph, ShapeRefiner* refiner, const std::string* prefix,
                    const std::vector<NodeOutput>& outputs, const std::vector<NodeOutput>& inputs,
                    const std::vector<NodeOutput>* grad_inputs,
                    std::vector<NodeOutput>* grad_outputs) {
  TW_RETURN_IF_ERROR(CheckTensors(*graph, outputs, "y"));
  TW_RETURN_IF_ERROR(CheckTensors(*graph, inputs, "x"));
  if (grad_inputs != nullptr) {
    TW_RETURN_IF_ERROR(CheckTensors(*graph, *grad_inputs, "dx"));
    if (grad_inputs->size() != outputs.size()) {
      return errors::InvalidArgument("Must specify a gradient input for each output.");
    }
  }
  std::string scope_name;
  if (prefix == nullptr) {
    scope_name = UniqueScopeName(*graph, "gradients");
  } else {
    std::string user;
    if (ScopeNameInUse(*graph, *prefix, &user)) {
      return errors::InvalidArgument(
          "prefix [", *prefix, "] conflicts with existing node in the graph named [", user, "]");
    }
    scope_name = *prefix;
  }
  const int first_new_id = graph->num_node_ids();
  GradientScope scope(graph, refiner, scope_name);
  Status status = AddGradientsUnchecked(scope, outputs, inputs, grad_inputs, grad_outputs);
  if (!status.ok()) {
    // All or nothing: the nodes this call added go again, newest first.
    for (int id = graph->num_node_ids() - 1; id >= first_new_id; --id) {
      Node* node = graph->FindNodeId(id);
      if (node == nullptr) continue;
      refiner->RemoveNode(node);
      graph->RemoveNode(node);
    }
    grad_outputs->assign(inputs.size(), NoGradient());
  }
  return status;
}

}  // namespace tensorweave
