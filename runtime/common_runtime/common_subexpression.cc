// Common subexpression elimination: two nodes with the same op, the same
// attrs, the same data inputs (in order; either order for commutative ops),
// the same control inputs and the same requested and assigned device compute
// the same value, so the later one's consumers read the earlier one and the
// later one goes.
//
// Never merged: stateful nodes (two RandomUniform draw different numbers,
// two Assigns both happen), signature endpoints, control-flow ops (their
// frames and dead tensors are per node), preserved nodes, and a fetched
// node that would lose its name (the other one may still be kept in its
// place). Consts are compared by value up to kMaxComparedConstBytes; larger
// ones are left alone (hashing them would cost more than merging saves).
#include <algorithm>
#include <unordered_map>

#include "runtime/common_runtime/graph_optimizer.h"
#include "runtime/common_runtime/graph_rewrite_util.h"
#include "runtime/framework/str_util.h"
#include "runtime/graph/algorithm.h"
#include "runtime/graph/control_flow.h"

namespace tensorweave {
namespace {

constexpr size_t kMaxComparedConstBytes = 64 << 10;

bool IsCommutative(const std::string& type) {
  static const std::unordered_set<std::string> kCommutative = {"Add",
                                                               "AddV2",
                                                               "Mul",
                                                               "Maximum",
                                                               "Minimum",
                                                               "Equal",
                                                               "NotEqual",
                                                               "LogicalAnd",
                                                               "LogicalOr",
                                                               "BitwiseAnd",
                                                               "BitwiseOr",
                                                               "BitwiseXor",
                                                               "SquaredDifference"};
  return kCommutative.count(type) > 0;
}

// The canonical text of everything that decides a node's value, or false
// when the node must not be merged.
bool NodeSignature(const Node* node, std::string* key) {
  if (node->IsStateful() || IsSignatureEndpoint(node) || IsControlFlowOp(node) ||
      node->num_outputs() == 0) {
    return false;
  }
  std::string attrs;
  std::vector<std::string> names;
  for (const auto& attr : node->def().attr()) names.push_back(attr.first);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    // "_class" and the like only steer placement, which the devices below cover.
    if (!name.empty() && name[0] == '_') continue;
    const AttrValue& value = node->def().attr().at(name);
    if (value.has_tensor() && static_cast<size_t>(value.ByteSizeLong()) > kMaxComparedConstBytes) {
      return false;
    }
    std::string bytes;
    value.SerializeToString(&bytes);  // deterministic for our attr values (no maps)
    attrs += StrCat(name, "=", bytes.size(), ":", bytes, ";");
  }
  std::vector<std::string> data_inputs(node->num_inputs());
  std::vector<std::string> controls;
  for (const Edge* edge : node->in_edges()) {
    if (edge->IsControlEdge()) {
      if (edge->src()->IsOp()) controls.push_back(StrCat(edge->src()->id()));
    } else {
      data_inputs[edge->dst_input()] = StrCat(edge->src()->id(), ":", edge->src_output());
    }
  }
  if (IsCommutative(node->type_string())) std::sort(data_inputs.begin(), data_inputs.end());
  std::sort(controls.begin(), controls.end());
  *key = StrCat(node->type_string(), "|", node->requested_device(), "|",
                node->assigned_device_name(), "|", attrs, "|");
  for (const std::string& input : data_inputs) *key += input + ",";
  *key += "|";
  for (const std::string& control : controls) *key += control + ",";
  return true;
}

}  // namespace

Status EliminateCommonSubexpressions(const GraphOptimizerOptions& options, Graph* graph,
                                     bool* changed) {
  std::vector<Node*> order;
  TW_RETURN_IF_ERROR(TopologicalOrder(*graph, &order));
  std::unordered_map<std::string, Node*> seen;
  std::string key;
  for (Node* node : order) {
    if (!node->IsOp() || options.preserved_nodes.count(node->name()) > 0) continue;
    if (!NodeSignature(node, &key)) continue;
    auto inserted = seen.emplace(key, node);
    if (inserted.second) continue;
    Node* kept = inserted.first->second;
    if (MustKeepName(node)) {
      // The fetched duplicate stays; the earlier one may give way to it
      // unless it is fetched too. Later duplicates then merge into this one.
      if (MustKeepName(kept)) continue;
      for (int i = 0; i < kept->num_outputs(); ++i) {
        TW_RETURN_IF_ERROR(ForwardConsumers(graph, NodeOutput{kept, i}, NodeOutput{node, i}));
      }
      inserted.first->second = node;
      std::vector<int> kept_id = {kept->id()};
      RemoveDeadNodes(graph, options, kept_id);
    } else {
      for (int i = 0; i < node->num_outputs(); ++i) {
        TW_RETURN_IF_ERROR(ForwardConsumers(graph, NodeOutput{node, i}, NodeOutput{kept, i}));
      }
      std::vector<int> node_id = {node->id()};
      RemoveDeadNodes(graph, options, node_id);
    }
    *changed = true;
  }
  return Status::OK();
}

}  // namespace tensorweave
