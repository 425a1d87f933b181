#include "runtime/common_runtime/evaluate_constant.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runtime/common_runtime/session.h"
#include "runtime/framework/str_util.h"

namespace tensorweave {
namespace {

// Ops whose value is never a constant of the graph: they read feeds or
// belong to v1 loops and conditionals (whose frames a lone run cannot
// reproduce). Stateful ops are refused through their OpDef.
bool IsNeverConstant(const Node& node) {
  static const std::set<std::string> kOps = {"Placeholder",
                                             "PlaceholderV2",
                                             "PlaceholderWithDefault",
                                             "Enter",
                                             "RefEnter",
                                             "Exit",
                                             "RefExit",
                                             "Merge",
                                             "RefMerge",
                                             "Switch",
                                             "RefSwitch",
                                             "NextIteration",
                                             "RefNextIteration",
                                             "LoopCond"};
  return node.IsStateful() || kOps.count(node.type_string()) > 0;
}

// The ancestors of `start` (itself included) in id order; false when one
// of them is never constant or there are too many.
bool ConstantAncestors(const Node* start, std::vector<const Node*>* ancestors) {
  std::set<int> seen{start->id()};
  std::vector<const Node*> stack{start};
  while (!stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    if (IsNeverConstant(*node)) return false;
    ancestors->push_back(node);
    if (static_cast<int>(ancestors->size()) > kMaxConstantSubgraphNodes) return false;
    for (const Edge* edge : node->in_edges()) {
      const Node* source = edge->src();
      if (source->IsOp() && seen.insert(source->id()).second) stack.push_back(source);
    }
  }
  return true;
}

}  // namespace

Status TryEvaluateConstant(const Graph& graph, NodeOutput output, bool* evaluated, Tensor* result) {
  *evaluated = false;
  if (output.node == nullptr || output.index < 0 || output.index >= output.node->num_outputs()) {
    return errors::InvalidArgument("TryEvaluateConstant: no such output");
  }
  std::vector<const Node*> ancestors;
  if (!ConstantAncestors(output.node, &ancestors)) return Status::OK();

  GraphDef subgraph;
  *subgraph.mutable_versions() = graph.versions();
  std::set<int> ids;
  for (const Node* node : ancestors) ids.insert(node->id());
  for (int id : ids) *subgraph.add_node() = Graph::NodeDefWithInputs(graph.FindNodeId(id));
  if (!graph.flib_def().empty()) *subgraph.mutable_library() = graph.flib_def().ToProto();

  std::unique_ptr<Session> session;
  TW_RETURN_IF_ERROR(NewSession(SessionOptions(), &session));
  TW_RETURN_IF_ERROR(session->Create(subgraph));
  std::vector<Tensor> outputs;
  Status run = session->Run({}, {StrCat(output.node->name(), ":", output.index)}, {}, &outputs);
  Status closed = session->Close();
  TW_RETURN_IF_ERROR(run);
  TW_RETURN_IF_ERROR(closed);
  *result = std::move(outputs.at(0));
  *evaluated = true;
  return Status::OK();
}

}  // namespace tensorweave
