#include "runtime/graph/algorithm.h"

#include "runtime/framework/str_util.h"
#include "runtime/graph/control_flow.h"

namespace tensorweave {

Status TopologicalOrder(const Graph& graph, std::vector<Node*>* order) {
  order->clear();
  const int ids = graph.num_node_ids();
  // Kahn's algorithm: a node is ready once every producer is placed.
  std::vector<int> remaining(ids, 0);
  std::vector<Node*> ready;
  // A while loop's back edge (NextIteration -> Merge) does not order: it
  // closes the only kind of cycle a graph may have.
  auto is_back_edge = [](const Edge* edge) {
    return !edge->IsControlEdge() && IsNextIterationOp(edge->src()) && IsMergeOp(edge->dst());
  };
  for (Node* node : graph.nodes()) {
    for (const Edge* edge : node->in_edges()) {
      if (!is_back_edge(edge)) ++remaining[node->id()];
    }
  }
  // Pushed in descending id order so the stack pops SOURCE (id 0) first.
  for (int id = ids - 1; id >= 0; --id) {
    Node* node = graph.FindNodeId(id);
    if (node != nullptr && remaining[id] == 0) ready.push_back(node);
  }
  order->reserve(graph.num_nodes());
  while (!ready.empty()) {
    Node* node = ready.back();
    ready.pop_back();
    order->push_back(node);
    for (const Edge* edge : node->out_edges()) {
      if (is_back_edge(edge)) continue;
      if (--remaining[edge->dst()->id()] == 0) ready.push_back(edge->dst());
    }
  }
  if (static_cast<int>(order->size()) == graph.num_nodes()) return Status::OK();

  // A node left over has a left-over producer; walking back through them
  // must revisit a node, and that node lies on a cycle.
  Node* current = nullptr;
  for (Node* node : graph.nodes()) {
    if (remaining[node->id()] > 0) {
      current = node;
      break;
    }
  }
  std::vector<int> step(ids, -1);
  std::vector<Node*> walk;
  while (step[current->id()] < 0) {
    step[current->id()] = static_cast<int>(walk.size());
    walk.push_back(current);
    Node* next = nullptr;
    for (const Edge* edge : current->in_edges()) {
      if (!is_back_edge(edge) && remaining[edge->src()->id()] > 0) {
        next = edge->src();
        break;
      }
    }
    current = next;
  }
  // walk[step[current]..] runs consumer to producer; reversed it is the flow.
  std::vector<std::string> names;
  for (size_t k = walk.size(); k-- > static_cast<size_t>(step[current->id()]);) {
    names.push_back(walk[k]->name());
  }
  names.push_back(names.front());
  order->clear();
  return errors::InvalidArgument("Node '", current->name(),
                                 "' is on a cycle: ", StrJoin(names, " -> "));
}

std::unordered_set<const Node*> ReverseReachable(const Graph& graph,
                                                 const std::vector<const Node*>& targets) {
  std::unordered_set<const Node*> reached;
  std::vector<const Node*> frontier;
  for (const Node* target : targets) {
    // Foreign or null nodes are not part of this graph's answer.
    if (target == nullptr || graph.FindNodeId(target->id()) != target) continue;
    if (reached.insert(target).second) frontier.push_back(target);
  }
  while (!frontier.empty()) {
    const Node* node = frontier.back();
    frontier.pop_back();
    for (const Edge* edge : node->in_edges()) {
      if (reached.insert(edge->src()).second) frontier.push_back(edge->src());
    }
  }
  return reached;
}

bool PruneForTargets(Graph* graph, const std::vector<const Node*>& targets) {
  const std::unordered_set<const Node*> needed = ReverseReachable(*graph, targets);
  bool changed = false;
  for (Node* node : graph->op_nodes()) {
    if (!needed.count(node)) {
      graph->RemoveNode(node);
      changed = true;
    }
  }
  // Survivors whose consumers were pruned hang off SINK again: RemoveNode
  // keeps the SOURCE/SINK invariant.
  return changed;
}

Status CopyGraph(const Graph& src, Graph* dst) {
  if (dst == nullptr || dst == &src) {
    return errors::InvalidArgument("CopyGraph needs a distinct destination graph");
  }
  if (dst->num_op_nodes() != 0) {
    return errors::InvalidArgument("CopyGraph needs an empty destination; it holds ",
                                   dst->num_op_nodes(), " nodes");
  }
  // Ids of the copy are dense even when `src` has holes from removals.
  std::vector<Node*> copy_of(src.num_node_ids(), nullptr);
  copy_of[src.source_node()->id()] = dst->source_node();
  copy_of[src.sink_node()->id()] = dst->sink_node();
  std::vector<Node*> added;
  auto fail = [&](const Status& status) {
    for (Node* node : added) dst->RemoveNode(node);
    return status;
  };
  for (Node* node : src.op_nodes()) {
    Node* copy = nullptr;
    const Status status = dst->AddNode(node->def(), &copy);
    if (!status.ok()) return fail(status);
    copy->set_assigned_device_name(node->assigned_device_name());
    copy_of[node->id()] = copy;
    added.push_back(copy);
  }
  for (Node* node : src.nodes()) {
    for (const Edge* edge : node->in_edges()) {
      Node* from = copy_of[edge->src()->id()];
      Node* to = copy_of[edge->dst()->id()];
      if (edge->IsControlEdge()) {
        dst->AddControlEdge(from, to);
        continue;
      }
      const Status status = dst->AddEdge(from, edge->src_output(), to, edge->dst_input());
      if (!status.ok()) return fail(status);
    }
  }
  dst->set_versions(src.versions());
  return Status::OK();
}

bool ScopeNameInUse(const Graph& graph, const std::string& name, std::string* user) {
  const std::string scope = name + "/";
  for (const Node* node : graph.op_nodes()) {
    if (node->name() == name || node->name().compare(0, scope.size(), scope) == 0) {
      if (user != nullptr) *user = node->name();
      return true;
    }
  }
  return false;
}

std::string UniqueScopeName(const Graph& graph, const std::string& name) {
  if (!ScopeNameInUse(graph, name, nullptr)) return name;
  for (int suffix = 1;; ++suffix) {
    std::string candidate = StrCat(name, "_", suffix);
    if (!ScopeNameInUse(graph, candidate, nullptr)) return candidate;
  }
}

}  // namespace tensorweave
