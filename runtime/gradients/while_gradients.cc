#include "runtime/gradients/while_gradients.h"

#include <unordered_map>

#include "runtime/framework/str_util.h"
#include "runtime/gradients/gradient_registry.h"
#include "runtime/gradients/gradients.h"
#include "runtime/graph/control_flow.h"

namespace tensorweave {
namespace {

// The scope of the iteration counter added to a forward loop.
constexpr char kForwardCounterScope[] = "/ForwardLoopCounter/";

// The nodes of one forward loop, one entry per loop variable.
struct ForwardLoop {
  std::string frame_name;
  int64_t parallel_iterations = 10;
  Node* loop_cond = nullptr;
  std::vector<Node*> enters, merges, switches, exits, identities, next_iterations;
  // Enters of loop invariants (is_constant) into the frame.
  std::vector<Node*> constant_enters;
};

Node* InputNode(const Node& node, int index) {
  const Edge* edge = nullptr;
  return node.input_edge(index, &edge).ok() ? edge->src() : nullptr;
}

// The consumer of output `index` of `node` of type `type`, or null.
Node* ConsumerOfType(const Node& node, int index, const std::string& type) {
  for (const Edge* edge : node.out_edges()) {
    if (edge->src_output() == index && edge->dst()->type_string() == type) return edge->dst();
  }
  return nullptr;
}

Status LoopError(const Node& exit, const std::string& what) {
  return errors::InvalidArgument("The while loop of '", exit.name(), "' is malformed: ", what);
}

// Finds the loop `exit` ends, in the shape TF_NewWhile (and TensorFlow's
// BuildWhileLoop) gives it.
Status FindForwardLoop(const Graph& graph, const Node& exit, ForwardLoop* loop) {
  Node* exit_switch = InputNode(exit, 0);
  if (exit_switch == nullptr || exit_switch->type_string() != "Switch") {
    return LoopError(exit, "its Exit is not fed by a Switch");
  }
  loop->loop_cond = InputNode(*exit_switch, 1);
  if (loop->loop_cond == nullptr || loop->loop_cond->type_string() != "LoopCond") {
    return LoopError(exit, "its Switch is not driven by a LoopCond");
  }
  for (const Edge* edge : loop->loop_cond->out_edges()) {
    Node* loop_switch = edge->dst();
    if (edge->IsControlEdge() || loop_switch->type_string() != "Switch") continue;
    Node* merge = InputNode(*loop_switch, 0);
    if (merge == nullptr || merge->type_string() != "Merge" || merge->num_inputs() != 2) {
      return LoopError(exit, "a loop Switch is not fed by a two-input Merge");
    }
    Node* enter = InputNode(*merge, 0);
    Node* next = InputNode(*merge, 1);
    if (enter != nullptr && enter->type_string() == "NextIteration") std::swap(enter, next);
    // The iteration counter an earlier gradient added to this loop is not
    // one of its variables.
    if (enter != nullptr && enter->name().find(kForwardCounterScope) != std::string::npos) continue;
    if (enter == nullptr || enter->type_string() != "Enter" || next == nullptr ||
        next->type_string() != "NextIteration") {
      return LoopError(exit, "a loop Merge does not join an Enter and a NextIteration");
    }
    Node* loop_exit = ConsumerOfType(*loop_switch, 0, "Exit");
    Node* identity = ConsumerOfType(*loop_switch, 1, "Identity");
    if (loop_exit == nullptr || identity == nullptr) {
      return LoopError(exit, "a loop Switch lacks its Exit or its body Identity");
    }
    loop->enters.push_back(enter);
    loop->merges.push_back(merge);
    loop->switches.push_back(loop_switch);
    loop->exits.push_back(loop_exit);
    loop->identities.push_back(identity);
    loop->next_iterations.push_back(next);
  }
  if (loop->enters.empty()) return LoopError(exit, "it has no loop variables");
  TW_RETURN_IF_ERROR(GetNodeAttr(loop->enters[0]->def(), "frame_name", &loop->frame_name));
  TW_RETURN_IF_ERROR(
      GetNodeAttr(loop->enters[0]->def(), "parallel_iterations", &loop->parallel_iterations));
  for (Node* node : graph.op_nodes()) {
    std::string frame;
    bool is_constant = false;
    if (node->type_string() != "Enter" || !GetNodeAttr(node->def(), "frame_name", &frame).ok() ||
        frame != loop->frame_name) {
      continue;
    }
    if (GetNodeAttr(node->def(), "is_constant", &is_constant).ok() && is_constant) {
      loop->constant_enters.push_back(node);
    }
  }
  return Status::OK();
}

// Builds the loop gradient for one forward loop.
class LoopGradientBuilder {
 public:
  LoopGradientBuilder(GradientScope* scope, const ForwardLoop& loop, const ControlFlowInfo& info,
                      int forward_frame)
      : scope_(*scope), loop_(loop), info_(info), forward_frame_(forward_frame) {}

  // `exit_grads`: one per loop variable. `invariants`: the constant Enters
  // whose gradient is wanted. Writes one gradient per loop variable, then
  // one per invariant.
  Status Build(const std::vector<NodeOutput>& exit_grads, const std::vector<Node*>& invariants,
               std::vector<NodeOutput>* entry_grads);

 private:
  struct Counter {
    Node* identity = nullptr;  // the count in each iteration
    Node* step = nullptr;      // the next count (pushes or pops come before it)
    NodeOutput exit;           // the final count
    NodeOutput predicate;      // the LoopCond output (backprop counter only)
  };

  NodeOutput Enter(NodeOutput value, const std::string& frame, bool is_constant) {
    return scope_.Op("Enter", {value},
                     {Attr("frame_name", frame), Attr("is_constant", is_constant),
                      Attr("parallel_iterations", loop_.parallel_iterations)});
  }
  // A loop variable: Enter -> Merge -> Switch(pred); returns the Merge (its
  // back edge is closed by CloseLoop), the Switch and the body Identity.
  void LoopVariable(NodeOutput initial, const std::string& frame, NodeOutput* merge,
                    Node** loop_switch, NodeOutput* identity, NodeOutput predicate);
  void CloseLoop(NodeOutput merge, NodeOutput next_value);
  Counter ForwardCounter();
  Counter BackpropCounter(NodeOutput count);
  // Replaces each read of a forward-loop value by the body gradient nodes
  // (ids from `first_id`) with a value the backprop frame may read.
  Status ReplaceForwardReads(int first_id, const Counter& forward, const Counter& backprop);
  Status BuildBackpropLoop(const Counter& forward, const Counter& backprop,
                           const std::vector<NodeOutput>& exit_grads,
                           const std::vector<Node*>& invariants,
                           std::vector<NodeOutput>* entry_grads);
  // The frame a consumer of `tensor` runs in.
  int ValueFrame(const NodeOutput& tensor) const;

  GradientScope& scope_;
  const ForwardLoop& loop_;
  const ControlFlowInfo& info_;
  const int forward_frame_;
  std::string backprop_frame_;
  Node* body_anchor_ = nullptr;
};

int LoopGradientBuilder::ValueFrame(const NodeOutput& tensor) const {
  const int id = tensor.node->id();
  if (id >= static_cast<int>(info_.frame_of.size())) return -1;  // a node added here
  if (info_.enters_frame[id] >= 0) return info_.enters_frame[id];
  return info_.frame_of[id];
}

void LoopGradientBuilder::LoopVariable(NodeOutput initial, const std::string& frame,
                                       NodeOutput* merge, Node** loop_switch, NodeOutput* identity,
                                       NodeOutput predicate) {
  NodeOutput entered = Enter(initial, frame, /*is_constant=*/false);
  // The second Merge input is the back edge, wired once the body exists.
  *merge = scope_.Op("Merge", {GradientArg::List({entered, entered})});
  *loop_switch = scope_.AddNode("Switch", {*merge, predicate});
  *identity = scope_.Op("Identity", {GradientScope::OutputOf(*loop_switch, 1)});
}

void LoopGradientBuilder::CloseLoop(NodeOutput merge, NodeOutput next_value) {
  NodeOutput next = scope_.Op("NextIteration", {next_value});
  if (!scope_.status().ok()) return;
  Graph* graph = scope_.graph();
  const Edge* placeholder_edge = nullptr;
  scope_.UpdateStatus(merge.node->input_edge(1, &placeholder_edge));
  if (!scope_.status().ok()) return;
  graph->RemoveEdge(placeholder_edge);
  scope_.UpdateStatus(graph->AddEdge(next.node, 0, merge.node, 1));
}

LoopGradientBuilder::Counter LoopGradientBuilder::ForwardCounter() {
  Counter counter;
  scope_.set_frame_anchor(nullptr);
  NodeOutput merge, identity;
  Node* loop_switch = nullptr;
  LoopVariable(scope_.Int32(0), loop_.frame_name, &merge, &loop_switch, &identity,
               {loop_.loop_cond, 0});
  counter.exit = scope_.Op("Exit", {GradientScope::OutputOf(loop_switch, 0)});
  counter.identity = identity.node;
  scope_.set_frame_anchor(identity.node);
  NodeOutput next = scope_.Op("AddV2", {identity, scope_.Int32(1)});
  counter.step = next.node;
  CloseLoop(merge, next);
  scope_.set_frame_anchor(nullptr);
  return counter;
}

LoopGradientBuilder::Counter LoopGradientBuilder::BackpropCounter(NodeOutput count) {
  Counter counter;
  scope_.set_frame_anchor(nullptr);
  NodeOutput entered = Enter(count, backprop_frame_, /*is_constant=*/false);
  NodeOutput merge = scope_.Op("Merge", {GradientArg::List({entered, entered})});
  scope_.set_frame_anchor(merge.node);
  NodeOutput more = scope_.Op("Greater", {merge, scope_.Int32(0)});
  counter.predicate = scope_.Op("LoopCond", {more});
  Node* loop_switch = scope_.AddNode("Switch", {merge, counter.predicate});
  counter.exit = scope_.Op("Exit", {GradientScope::OutputOf(loop_switch, 0)});
  NodeOutput identity = scope_.Op("Identity", {GradientScope::OutputOf(loop_switch, 1)});
  counter.identity = identity.node;
  scope_.set_frame_anchor(identity.node);
  NodeOutput next = scope_.Op("Sub", {identity, scope_.Int32(1)});
  counter.step = next.node;
  CloseLoop(merge, next);
  scope_.set_frame_anchor(nullptr);
  return counter;
}

Status LoopGradientBuilder::ReplaceForwardReads(int first_id, const Counter& forward,
                                                const Counter& backprop) {
  Graph* graph = scope_.graph();
  const int last_id = graph->num_node_ids();
  // Collected first: the replacements add nodes and edges.
  struct Read {
    Node* dst;
    int dst_input;
    NodeOutput value;
  };
  std::vector<Read> reads;
  for (int id = first_id; id < last_id; ++id) {
    Node* node = graph->FindNodeId(id);
    if (node == nullptr) continue;
    for (const Edge* edge : node->in_edges()) {
      if (edge->IsControlEdge()) continue;
      NodeOutput value{edge->src(), edge->src_output()};
      if (ValueFrame(value) == forward_frame_) reads.push_back({node, edge->dst_input(), value});
    }
  }
  std::unordered_map<int64_t, NodeOutput> replacements;
  for (const Read& read : reads) {
    const int64_t key = (static_cast<int64_t>(read.value.node->id()) << 32) | read.value.index;
    auto found = replacements.find(key);
    NodeOutput replacement;
    if (found != replacements.end()) {
      replacement = found->second;
    } else {
      const Node& src = *read.value.node;
      bool is_constant = false;
      if (src.type_string() == "Const") {
        // A constant of the body: the same constant in the backprop frame.
        scope_.set_frame_anchor(body_anchor_);
        Tensor value;
        TW_RETURN_IF_ERROR(GetNodeAttr(src.def(), "value", &value));
        replacement = scope_.Const(value);
      } else if (src.type_string() == "Enter" &&
                 GetNodeAttr(src.def(), "is_constant", &is_constant).ok() && is_constant) {
        // A loop invariant: entered into the backprop frame as well.
        scope_.set_frame_anchor(nullptr);
        replacement = Enter(ForwardInput(src, 0), backprop_frame_, /*is_constant=*/true);
      } else {
        // A value of each iteration: pushed by the forward loop, popped in
        // reverse order by the backprop loop. Each push (pop) comes after
        // its iteration's count and before the next count, which keeps the
        // stack in iteration order whatever the parallel iterations.
        scope_.set_frame_anchor(nullptr);
        const DataType dtype = GradientScope::DType(read.value);
        NodeOutput stack =
            scope_.Op("StackV2", {scope_.Int32(-1)},
                      {Attr("elem_type", dtype),
                       Attr("stack_name", StrCat(loop_.frame_name, "/", src.name()))});
        NodeOutput forward_handle = Enter(stack, loop_.frame_name, /*is_constant=*/true);
        Node* push = scope_.AddNode("StackPushV2", {forward_handle, read.value});
        NodeOutput backprop_handle = Enter(stack, backprop_frame_, /*is_constant=*/true);
        Node* pop = scope_.AddNode("StackPopV2", {backprop_handle}, {Attr("elem_type", dtype)});
        TW_RETURN_IF_ERROR(scope_.status());
        graph->AddControlEdge(forward.identity, push);
        graph->AddControlEdge(push, forward.step);
        graph->AddControlEdge(backprop.identity, pop);
        graph->AddControlEdge(pop, backprop.step);
        replacement = {pop, 0};
      }
      TW_RETURN_IF_ERROR(scope_.status());
      replacements[key] = replacement;
    }
    const Edge* old_edge = nullptr;
    TW_RETURN_IF_ERROR(read.dst->input_edge(read.dst_input, &old_edge));
    graph->RemoveEdge(old_edge);
    TW_RETURN_IF_ERROR(
        graph->AddEdge(replacement.node, replacement.index, read.dst, read.dst_input));
  }
  return Status::OK();
}

Status LoopGradientBuilder::Build(const std::vector<NodeOutput>& exit_grads,
                                  const std::vector<Node*>& invariants,
                                  std::vector<NodeOutput>* entry_grads) {
  backprop_frame_ = StrCat(loop_.frame_name, "_backprop");
  const std::string outer_prefix = scope_.prefix();
  const std::string loop_prefix = StrCat(outer_prefix, "/", loop_.frame_name, "_grad");
  // Node names then contain kForwardCounterScope.
  scope_.set_prefix(StrCat(loop_prefix, "/ForwardLoopCounter"));
  const Counter forward = ForwardCounter();
  scope_.set_prefix(StrCat(loop_prefix, "/BackPropLoopCounter"));
  const Counter backprop = BackpropCounter(forward.exit);
  scope_.set_prefix(loop_prefix);
  Status status = BuildBackpropLoop(forward, backprop, exit_grads, invariants, entry_grads);
  scope_.set_prefix(outer_prefix);
  return status;
}

Status LoopGradientBuilder::BuildBackpropLoop(const Counter& forward, const Counter& backprop,
                                              const std::vector<NodeOutput>& exit_grads,
                                              const std::vector<Node*>& invariants,
                                              std::vector<NodeOutput>* entry_grads) {
  TW_RETURN_IF_ERROR(scope_.status());

  // The backprop loop: one variable per forward loop variable (its
  // gradient), then one accumulator per invariant.
  const size_t num_vars = loop_.enters.size();
  std::vector<NodeOutput> merges, identities;
  std::vector<Node*> switches;
  for (size_t i = 0; i < num_vars + invariants.size(); ++i) {
    NodeOutput initial =
        i < num_vars ? exit_grads[i] : scope_.ZerosLike(ForwardInput(*invariants[i - num_vars], 0));
    NodeOutput merge, identity;
    Node* loop_switch = nullptr;
    LoopVariable(initial, backprop_frame_, &merge, &loop_switch, &identity, backprop.predicate);
    merges.push_back(merge);
    switches.push_back(loop_switch);
    identities.push_back(identity);
  }
  TW_RETURN_IF_ERROR(scope_.status());

  // The body: the gradient of the forward body outputs (the NextIteration
  // inputs) with respect to its inputs (the Identities after the Switches)
  // and the invariants, seeded with this iteration's gradients.
  body_anchor_ = identities[0].node;
  const int first_body_id = scope_.graph()->num_node_ids();
  std::vector<NodeOutput> body_outputs, body_inputs, seeds;
  for (size_t i = 0; i < num_vars; ++i) {
    body_outputs.push_back(ForwardInput(*loop_.next_iterations[i], 0));
    body_inputs.push_back({loop_.identities[i], 0});
    seeds.push_back(identities[i]);
  }
  for (Node* invariant : invariants) body_inputs.push_back({invariant, 0});
  std::vector<NodeOutput> body_grads;
  scope_.set_frame_anchor(body_anchor_);
  const Status status =
      AddSymbolicGradientsOfReachable(scope_, body_outputs, body_inputs, seeds, &body_grads);
  scope_.set_frame_anchor(nullptr);
  TW_RETURN_IF_ERROR(status);
  TW_RETURN_IF_ERROR(ReplaceForwardReads(first_body_id, forward, backprop));

  scope_.set_frame_anchor(body_anchor_);
  for (size_t i = 0; i < merges.size(); ++i) {
    NodeOutput next;
    if (i < num_vars) {
      next = IsNoGradient(body_grads[i]) ? scope_.ZerosLike(identities[i]) : body_grads[i];
    } else if (IsNoGradient(body_grads[i])) {
      next = identities[i];
    } else {
      next = scope_.Op("AddV2", {identities[i], body_grads[i]});
    }
    CloseLoop(merges[i], next);
  }
  scope_.set_frame_anchor(nullptr);
  for (Node* loop_switch : switches) {
    entry_grads->push_back(scope_.Op("Exit", {GradientScope::OutputOf(loop_switch, 0)}));
  }
  return scope_.status();
}

}  // namespace

bool WhileGradients::IsLoopExit(const Node& node) { return node.type_string() == "Exit"; }

Status WhileGradients::AddExitGradient(
    const Node& exit, const NodeOutput& grad,
    std::vector<std::pair<NodeOutput, NodeOutput>>* entry_grads) {
  Graph* graph = scope_->graph();
  ForwardLoop loop;
  TW_RETURN_IF_ERROR(FindForwardLoop(*graph, exit, &loop));
  std::map<const Node*, NodeOutput>& received = exit_grads_[loop.frame_name];
  received[&exit] = grad;
  for (const Node* loop_exit : loop.exits) {
    if (expects_gradient_(loop_exit) && received.count(loop_exit) == 0) return Status::OK();
  }

  ControlFlowInfo info;
  TW_RETURN_IF_ERROR(BuildControlFlowInfo(*graph, &info));
  const int forward_frame = info.enters_frame[loop.enters[0]->id()];
  for (size_t f = 0; f < info.frames.size(); ++f) {
    if (info.frames[f].parent == forward_frame) {
      return errors::Unimplemented("The gradient of while loop '", loop.frame_name,
                                   "' is not supported: it contains the nested loop '",
                                   info.frames[f].name, "'");
    }
  }
  std::vector<NodeOutput> exit_grads;
  for (Node* loop_exit : loop.exits) {
    auto found = received.find(loop_exit);
    if (found != received.end() && !IsNoGradient(found->second)) {
      exit_grads.push_back(found->second);
    } else {
      exit_grads.push_back(scope_->ZerosLike({loop_exit, 0}));
    }
  }
  std::vector<Node*> invariants;
  for (Node* enter : loop.constant_enters) {
    if (needs_gradient_(enter)) invariants.push_back(enter);
  }
  std::vector<NodeOutput> grads;
  LoopGradientBuilder builder(scope_, loop, info, forward_frame);
  TW_RETURN_IF_ERROR(builder.Build(exit_grads, invariants, &grads));
  for (size_t i = 0; i < loop.enters.size(); ++i) {
    entry_grads->push_back({ForwardInput(*loop.enters[i], 0), grads[i]});
  }
  for (size_t i = 0; i < invariants.size(); ++i) {
    entry_grads->push_back({ForwardInput(*invariants[i], 0), grads[loop.enters.size() + i]});
  }
  return Status::OK();
}

}  // namespace tensorweave
