// The elementwise chain fusion pass (elementwise_fusion.h).
#include "runtime/common_runtime/elementwise_fusion.h"

#include <string>
#include <unordered_set>
#include <vector>

#include "runtime/common_runtime/graph_rewrite_util.h"
#include "runtime/framework/node_def_util.h"

namespace tensorweave {
namespace {

// A float function _FusedUnaryChain runs.
bool IsFusable(const Node* node) {
  static const std::unordered_set<std::string> kFunctions = {"Exp",  "Log",   "Tanh", "Sigmoid",
                                                             "Sqrt", "Rsqrt", "Relu"};
  if (kFunctions.count(node->type_string()) == 0 || RequestsOtherThanCpu(node)) return false;
  DataType dtype = DT_INVALID;
  return GetNodeAttr(node->def(), "T", &dtype).ok() && dtype == DT_FLOAT;
}

// The next function of a chain through `node`: its only consumer, when
// `node` may disappear into the fused node. Null otherwise.
Node* NextInChain(const Node* node, const GraphOptimizerOptions& options) {
  if (MustKeep(node, options)) return nullptr;
  const Edge* only = nullptr;
  for (const Edge* edge : node->out_edges()) {
    if (edge->IsControlEdge()) {
      if (edge->dst()->IsSink()) continue;
      return nullptr;
    }
    if (only != nullptr) return nullptr;
    only = edge;
  }
  if (only == nullptr || !IsFusable(only->dst())) return nullptr;
  if (only->dst()->requested_device() != node->requested_device()) return nullptr;
  return only->dst();
}

// Whether `node` starts a chain: no fusable producer would take it in.
bool StartsChain(const Node* node, const GraphOptimizerOptions& options) {
  const NodeOutput input = DataInput(node, 0);
  return input.node == nullptr || !IsFusable(input.node) ||
         NextInChain(input.node, options) != node;
}

Status Fuse(Graph* graph, const std::vector<Node*>& chain) {
  Node* last = chain.back();
  NodeDef def;
  def.set_name(last->name());
  def.set_op("_FusedUnaryChain");
  def.set_device(last->requested_device());
  SetAttrValue(DT_FLOAT, &(*def.mutable_attr())["T"]);
  AttrValue::ListValue* ops = (*def.mutable_attr())["ops"].mutable_list();
  std::vector<Node*> controls;
  for (Node* node : chain) {
    ops->add_s(node->type_string());
    for (Node* control : ControlInputs(node)) controls.push_back(control);
  }
  const NodeOutput input = DataInput(chain.front(), 0);
  TW_RETURN_IF_ERROR(ReplaceNode(graph, last, def, {input}, controls));
  // The rest fed only each other and the replaced last node.
  for (size_t i = 0; i + 1 < chain.size(); ++i) graph->RemoveNode(chain[i]);
  return Status::OK();
}

}  // namespace

Status FuseUnaryChains(const GraphOptimizerOptions& options, Graph* graph, bool* changed) {
  *changed = false;
  // Chains are found first and fused after: fusing removes nodes.
  std::vector<std::vector<Node*>> chains;
  for (Node* node : graph->op_nodes()) {
    if (!IsFusable(node) || !StartsChain(node, options)) continue;
    std::vector<Node*> chain = {node};
    for (Node* next = NextInChain(node, options); next != nullptr;
         next = NextInChain(next, options)) {
      chain.push_back(next);
    }
    if (chain.size() >= 2) chains.push_back(std::move(chain));
  }
  for (const std::vector<Node*>& chain : chains) {
    TW_RETURN_IF_ERROR(Fuse(graph, chain));
    *changed = true;
  }
  return Status::OK();
}

}  // namespace tensorweave
