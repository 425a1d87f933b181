#include "runtime/common_runtime/partial_run_check.h"

namespace tensorweave {

Status CheckPartialRunFetchesComputable(const Graph& graph,
                                        const std::set<std::string>& missing_feeds,
                                        const std::map<std::string, int>& declared_feeds,
                                        const std::vector<std::string>& fetch_nodes) {
  if (missing_feeds.empty()) return Status::OK();
  for (const std::string& name : fetch_nodes) {
    const Node* fetch = graph.FindNode(name);
    if (fetch == nullptr) continue;
    std::vector<bool> seen(graph.num_node_ids(), false);
    std::vector<const Node*> stack{fetch};
    seen[fetch->id()] = true;
    while (!stack.empty()) {
      const Node* node = stack.back();
      stack.pop_back();
      for (const Edge* edge : node->in_edges()) {
        const Node* source = edge->src();
        if (!edge->IsControlEdge()) {
          const std::string tensor = source->name() + ":" + std::to_string(edge->src_output());
          if (missing_feeds.count(tensor) > 0) {
            return errors::InvalidArgument("Fetch ", tensor,
                                           " can't be computed from the feeds that have been fed "
                                           "so far.");
          }
          if (declared_feeds.count(tensor) > 0) continue;
        }
        if (source->IsOp() && !seen[source->id()]) {
          seen[source->id()] = true;
          stack.push_back(source);
        }
      }
    }
  }
  return Status::OK();
}

}  // namespace tensorweave
