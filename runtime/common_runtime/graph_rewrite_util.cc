#include "runtime/common_runtime/graph_rewrite_util.h"

#include <unordered_set>

#include "runtime/common_runtime/placer.h"
#include "runtime/framework/node_def_util.h"

namespace tensorweave {

bool IsConstOp(const Node* node) {
  const std::string& type = node->type_string();
  return type == "Const" || type == "HostConst";
}

bool IsSignatureEndpoint(const Node* node) {
  const std::string& type = node->type_string();
  return type == "_Arg" || type == "_Retval" || type == "_Send" || type == "_Recv" ||
         type == "_HostSend" || type == "_HostRecv";
}

bool IsFetched(const Node* node) {
  for (const Edge* edge : node->out_edges()) {
    if (edge->IsControlEdge()) continue;
    const std::string& type = edge->dst()->type_string();
    if (type == "_Retval" || type == "_Send" || type == "_HostSend") return true;
  }
  return false;
}

bool MustKeep(const Node* node, const GraphOptimizerOptions& options) {
  return !node->IsOp() || node->IsStateful() || IsSignatureEndpoint(node) ||
         options.preserved_nodes.count(node->name()) > 0;
}

bool MustKeepName(const Node* node) { return IsFetched(node); }

bool RequestsOtherThanCpu(const Node* node) {
  if (node->requested_device().empty()) return false;
  DeviceSpec spec;
  if (!ParseDeviceSpec(node->requested_device(), &spec).ok()) return true;
  return !spec.type.empty() && spec.type != "CPU";
}

bool HasNonValueOutput(const Node* node) {
  for (DataType dtype : node->output_types()) {
    if (IsRefType(dtype) || dtype == DT_RESOURCE || dtype == DT_VARIANT) return true;
  }
  return false;
}

NodeOutput DataInput(const Node* node, int index) {
  const Edge* edge = nullptr;
  if (!node->input_edge(index, &edge).ok()) return NodeOutput();
  return NodeOutput{edge->src(), edge->src_output()};
}

std::vector<Node*> ControlInputs(const Node* node) {
  std::vector<Node*> controls;
  for (const Edge* edge : node->in_edges()) {
    if (edge->IsControlEdge() && edge->src()->IsOp()) controls.push_back(edge->src());
  }
  return controls;
}

int NumConsumers(const Node* node, int index) {
  int count = 0;
  for (const Edge* edge : node->out_edges()) {
    if (!edge->IsControlEdge() && edge->src_output() == index) ++count;
  }
  return count;
}

NodeDef ConstNodeDef(const std::string& name, const std::string& device, const Tensor& value) {
  NodeDef def;
  def.set_name(name);
  def.set_op("Const");
  def.set_device(device);
  SetAttrValue(value.dtype(), &(*def.mutable_attr())["dtype"]);
  value.AsProtoTensorContent((*def.mutable_attr())["value"].mutable_tensor());
  return def;
}

Status ReplaceNode(Graph* graph, Node* node, const NodeDef& def,
                   const std::vector<NodeOutput>& inputs, const std::vector<Node*>& controls,
                   Node** replacement) {
  struct OutEdge {
    Node* dst;
    int src_output;
    int dst_input;
  };
  std::vector<OutEdge> outs;
  for (const Edge* edge : node->out_edges()) {
    if (edge->dst()->IsSink()) continue;
    outs.push_back({edge->dst(), edge->src_output(), edge->dst_input()});
  }
  const std::string assigned = node->assigned_device_name();
  graph->RemoveNode(node);
  Node* added = nullptr;
  TW_RETURN_IF_ERROR(graph->AddNode(def, &added));
  added->set_assigned_device_name(assigned);
  for (size_t i = 0; i < inputs.size(); ++i) {
    TW_RETURN_IF_ERROR(graph->AddEdge(inputs[i].node, inputs[i].index, added, static_cast<int>(i)));
  }
  for (Node* control : controls) graph->AddControlEdge(control, added);
  for (const OutEdge& out : outs) {
    if (out.dst_input == Graph::kControlSlot) {
      graph->AddControlEdge(added, out.dst);
    } else {
      TW_RETURN_IF_ERROR(graph->AddEdge(added, out.src_output, out.dst, out.dst_input));
    }
  }
  if (replacement != nullptr) *replacement = added;
  return Status::OK();
}

Status ReplaceWithConst(Graph* graph, Node* node, const Tensor& value,
                        const std::vector<Node*>& controls, Node** replacement) {
  NodeDef def = ConstNodeDef(node->name(), node->requested_device(), value);
  // Colocation ("loc:@variable") still says where the value is wanted.
  const AttrValue* colocation = FindNodeAttr(node->def(), "_class");
  if (colocation != nullptr) (*def.mutable_attr())["_class"] = *colocation;
  return ReplaceNode(graph, node, def, {}, controls, replacement);
}

Status ForwardConsumers(Graph* graph, NodeOutput from, NodeOutput to) {
  std::vector<const Edge*> edges(from.node->out_edges().begin(), from.node->out_edges().end());
  for (const Edge* edge : edges) {
    Node* dst = edge->dst();
    if (dst->IsSink()) continue;
    if (edge->IsControlEdge()) {
      graph->RemoveEdge(edge);
      if (dst != to.node) graph->AddControlEdge(to.node, dst);
      continue;
    }
    if (edge->src_output() != from.index) continue;
    const int slot = edge->dst_input();
    graph->RemoveEdge(edge);
    TW_RETURN_IF_ERROR(graph->AddEdge(to.node, to.index, dst, slot));
  }
  return Status::OK();
}

void RemoveDeadNodes(Graph* graph, const GraphOptimizerOptions& options,
                     const std::vector<int>& candidate_ids) {
  std::vector<int> work = candidate_ids;
  while (!work.empty()) {
    Node* node = graph->FindNodeId(work.back());
    work.pop_back();
    if (node == nullptr || MustKeep(node, options)) continue;
    // The graph hooks a node to SINK only when nothing else consumes it, so
    // this is O(1) even for a constant that thousands of nodes read.
    const auto& outs = node->out_edges();
    const bool consumed = outs.size() > 1 || (outs.size() == 1 && !outs[0]->dst()->IsSink());
    if (consumed) continue;
    for (const Edge* edge : node->in_edges()) {
      if (edge->src()->IsOp()) work.push_back(edge->src()->id());
    }
    graph->RemoveNode(node);
  }
}

Status ConstValue(const Node* node, Tensor* value) {
  return GetNodeAttr(node->def(), "value", value);
}

}  // namespace tensorweave
