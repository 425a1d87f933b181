// What DirectSession and MasterSession both check before a partial run's
// call waits for its fetches: that no fetch needs a declared feed that has
// not been fed (the step would wait for it forever).
//
//   std::set<std::string> missing = {"c:0"};          // declared, not fed yet
//   TW_RETURN_IF_ERROR(CheckPartialRunFetchesComputable(graph, missing, declared, {"r2"}));
#ifndef TENSORWEAVE_COMMON_RUNTIME_PARTIAL_RUN_CHECK_H_
#define TENSORWEAVE_COMMON_RUNTIME_PARTIAL_RUN_CHECK_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/framework/status.h"
#include "runtime/graph/graph.h"

namespace tensorweave {

// Walks `graph` back from each node of `fetch_nodes`. A tensor ("node:0")
// in `missing_feeds` is INVALID_ARGUMENT in TensorFlow's words, which name
// the feed, not the fetch; any other tensor of `declared_feeds` ends the
// walk there (its producer never runs in the step). Unknown fetch nodes are
// skipped (setup checked the names).
Status CheckPartialRunFetchesComputable(const Graph& graph,
                                        const std::set<std::string>& missing_feeds,
                                        const std::map<std::string, int>& declared_feeds,
                                        const std::vector<std::string>& fetch_nodes);

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_PARTIAL_RUN_CHECK_H_
