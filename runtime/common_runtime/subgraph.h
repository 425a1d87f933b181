// Subgraph: turns a copy of a session's graph into the graph one signature
// (feeds, fetches, targets) runs.
//
//   FeedFetchSignature signature;
//   TW_RETURN_IF_ERROR(ParseSignature(feed_names, fetch_names, target_names, &signature));
//   TW_RETURN_IF_ERROR(RewriteForSignature(signature, &graph_copy, &rewrite));
//
// Each fed tensor's consumers read from an _Arg node instead (index = the
// feed's position), each fetched tensor goes to a _Retval (index = the
// fetch's position among distinct fetches), and everything the fetches and
// targets do not need is pruned — so an unfed placeholder elsewhere in the
// graph never runs.
//
// A distributed master's client lives in another process, so it asks for
// TensorFlow's client-terminated form instead (SignatureEndpoints with a
// client device): each feed becomes a _Recv "_recv_<node>_<index>" and each
// fetch a _Send "_send_<node>_<index>", both on the client device, with
// tensor_name "<node>:<index>", send_device = recv_device = the client
// device, its incarnation and client_terminated = true. The master hands
// feeds to the worker under ClientTerminatedKey(...) and reads fetches back
// under the same keys.
//
//   SignatureEndpoints endpoints{client.name(), client.incarnation()};
//   TW_RETURN_IF_ERROR(RewriteForSignature(signature, endpoints, &graph_copy, &rewrite));
#ifndef TENSORWEAVE_COMMON_RUNTIME_SUBGRAPH_H_
#define TENSORWEAVE_COMMON_RUNTIME_SUBGRAPH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/framework/node_def_util.h"
#include "runtime/framework/status.h"
#include "runtime/framework/tensor_shape.h"
#include "runtime/graph/graph.h"

namespace tensorweave {

struct FeedFetchSignature {
  std::vector<TensorId> feeds;    // distinct
  std::vector<TensorId> fetches;  // distinct, in order of first request
  // For each requested fetch name, its index in `fetches` (a name asked for
  // twice is computed once).
  std::vector<int> output_to_fetch;
  std::vector<std::string> targets;
};

// Parses names ("x", "x:1"; "x" means "x:0"). Errors are INVALID_ARGUMENT:
// no fetch and no target, a malformed name, a tensor fed twice, a tensor
// both fed and fetched.
Status ParseSignature(const std::vector<std::string>& feeds,
                      const std::vector<std::string>& fetches,
                      const std::vector<std::string>& targets, FeedFetchSignature* signature);

// What a run must check about the values it feeds, per feed.
struct RewriteResult {
  std::vector<DataType> feed_dtypes;
  // The declared shape when the fed tensor comes from a Placeholder (its
  // "shape" attr); unknown rank otherwise.
  std::vector<PartialTensorShape> feed_shapes;
};

// Where feeds enter and fetches leave the rewritten graph.
struct SignatureEndpoints {
  // Empty: the step's call frame (_Arg and _Retval, as DirectSession runs).
  // Otherwise the full name of the device the client's tensors pass
  // through (client-terminated _Recv and _Send).
  std::string client_device;
  uint64_t client_device_incarnation = 0;
};

// Rewrites `graph` in place as described above. NOT_FOUND (naming the
// tensor or node) when a feed, fetch or target does not exist.
Status RewriteForSignature(const FeedFetchSignature& signature, Graph* graph,
                           RewriteResult* result);
Status RewriteForSignature(const FeedFetchSignature& signature, const SignatureEndpoints& endpoints,
                           Graph* graph, RewriteResult* result);

// The rendezvous key of feed or fetch `id` in the client-terminated form.
std::string ClientTerminatedKey(const SignatureEndpoints& endpoints, const TensorId& id);

// "x:0" for {x, 0}.
std::string TensorIdString(const TensorId& id);

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_SUBGRAPH_H_
