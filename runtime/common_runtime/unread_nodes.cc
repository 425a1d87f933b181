// Part of TensorFlow's dependency optimization: a node whose outputs nobody
// reads, only waits for (its consumers are all control edges), becomes a
// NoOp waiting for its former inputs. Running it would compute a value only
// to drop it; what its control consumers need is the ordering, which the
// NoOp keeps.
//
// Training graphs are full of such nodes: gradients() groups the gradients
// of an op's inputs (gate_gradients=GATE_OP, a tuple over a group_deps
// NoOp), so the gradient with respect to a placeholder or a constant, which
// no update reads, still runs through the group's control edges: the input
// gradient of the first layer (a Conv2DBackpropInput or a MatMul of the
// batch's size) and the reductions for dropout's constant scale. TensorFlow
// converts them (Grappler's SafeToConvertToNoOp); so do we, under the same
// switch (RewriterConfig.dependency_optimization).
//
// Kept as they are: stateful nodes, signature endpoints, preserved targets,
// checks (CheckNumerics, Assert), control-flow ops (their outputs carry
// deadness), nodes reading an output of a Switch (a cond's pivot: only its
// data edge says which branch it belongs to), function calls (their bodies
// may have effects the op's definition does not declare), nodes with ref,
// resource or variant outputs or ref inputs, reads of a variable's ref
// output, and nodes that read from
// another requested device (their edges would become cross-device control
// edges).
#include <algorithm>
#include <unordered_set>
#include <vector>

#include "runtime/common_runtime/graph_optimizer.h"
#include "runtime/common_runtime/graph_rewrite_util.h"
#include "runtime/framework/op_def.h"
#include "runtime/graph/algorithm.h"
#include "runtime/graph/control_flow.h"

namespace tensorweave {
namespace {

// Some edge leaves `node` and every one that does (but SINK's) is a control
// edge.
bool OnlyWaitedFor(const Node* node) {
  bool waited_for = false;
  for (const Edge* edge : node->out_edges()) {
    if (edge->dst()->IsSink()) continue;
    if (!edge->IsControlEdge()) return false;
    waited_for = true;
  }
  return waited_for;
}

bool MayBecomeNoOp(const Node* node, const GraphOptimizerOptions& options) {
  if (MustKeep(node, options) || node->type_string() == "NoOp" || IsControlFlowOp(node)) {
    return false;
  }
  // Checks whose point is the error they may raise, not their value.
  const std::string& type = node->type_string();
  if (type == "CheckNumerics" || type == "CheckNumericsV2" || type == "Assert") return false;
  if (OpRegistry::Global()->LookUp(node->type_string()) == nullptr) return false;  // a function
  if (HasNonValueOutput(node)) return false;
  for (DataType dtype : node->input_types()) {
    if (IsRefType(dtype)) return false;
  }
  for (const Edge* edge : node->in_edges()) {
    if (!edge->src()->IsOp()) continue;
    if (edge->src()->requested_device() != node->requested_device()) return false;
    // Reading one output of a Switch is what makes the node run only in
    // that branch (a cond's pivot Identity); a control edge from the Switch
    // would fire in either branch.
    if (!edge->IsControlEdge() && IsSwitchOp(edge->src())) return false;
    // A read of a variable (a ref output, as a variable's `read` Identity
    // takes it) stays, as Grappler keeps Identities of Variables: its
    // point may be the FailedPrecondition an uninitialized variable raises
    // (tf.assert_variables_initialized groups such reads).
    if (!edge->IsControlEdge() && IsRefType(edge->src()->output_type(edge->src_output()))) {
      return false;
    }
  }
  return OnlyWaitedFor(node);
}

}  // namespace

Status ConvertUnreadNodesToNoOps(const GraphOptimizerOptions& options, Graph* graph,
                                 bool* changed) {
  std::vector<Node*> order;
  TW_RETURN_IF_ERROR(TopologicalOrder(*graph, &order));
  // Consumers first: a node turned into a NoOp leaves its inputs only
  // waited for, and they are visited after it.
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    Node* node = *it;
    if (!node->IsOp() || !MayBecomeNoOp(node, options)) continue;
    std::vector<Node*> waits_for;
    std::unordered_set<const Node*> seen;
    for (const Edge* edge : node->in_edges()) {
      if (edge->src()->IsOp() && seen.insert(edge->src()).second) {
        waits_for.push_back(edge->src());
      }
    }
    NodeDef no_op;
    no_op.set_name(node->name());
    no_op.set_op("NoOp");
    no_op.set_device(node->requested_device());
    TW_RETURN_IF_ERROR(ReplaceNode(graph, node, no_op, {}, waits_for));
    *changed = true;
  }
  return Status::OK();
}

}  // namespace tensorweave
