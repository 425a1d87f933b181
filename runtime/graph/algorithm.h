// Graph algorithms: orderings, reachability, pruning and scope names.
#ifndef TENSORWEAVE_GRAPH_ALGORITHM_H_
#define TENSORWEAVE_GRAPH_ALGORITHM_H_

#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "runtime/graph/graph.h"

namespace tensorweave {

// Nodes in an order where every node comes after all its inputs (data and
// control), SOURCE first; a while loop's back edges (NextIteration -> Merge)
// are not followed. INVALID_ARGUMENT naming a node on any other cycle.
Status TopologicalOrder(const Graph& graph, std::vector<Node*>* order);

// Every node from which some node in `targets` can be reached by following
// edges forward (the targets included).
std::unordered_set<const Node*> ReverseReachable(const Graph& graph,
                                                 const std::vector<const Node*>& targets);

// Removes every op node not needed for `targets` (reverse-reachable from
// them); the graph re-hooks survivors to SINK. Returns whether anything
// changed.
bool PruneForTargets(Graph* graph, const std::vector<const Node*>& targets);

// Copies `src` into an empty `dst` (same names, attrs, devices, edges).
Status CopyGraph(const Graph& src, Graph* dst);

// True when `name` is a node of `graph` or the scope of one ("name/...").
// Sets *user (when given) to that node's name.
bool ScopeNameInUse(const Graph& graph, const std::string& name, std::string* user);

// `name`, or name_1, name_2, ... when a node of `graph` is called that or
// lives under that name as a scope ("name/..."), as TensorFlow uniquifies a
// sub-scope's name against a graph's existing nodes (gradients, while loops).
std::string UniqueScopeName(const Graph& graph, const std::string& name);

}  // namespace tensorweave

#endif  // TENSORWEAVE_GRAPH_ALGORITHM_H_
