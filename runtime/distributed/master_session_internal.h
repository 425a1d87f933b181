// The parts of MasterSession its two files share (master_session.cc and
// master_session_partial_run.cc): a compiled signature, its spellings, a
// step in flight. Included by nothing else.
#ifndef TENSORWEAVE_DISTRIBUTED_MASTER_SESSION_INTERNAL_H_
#define TENSORWEAVE_DISTRIBUTED_MASTER_SESSION_INTERNAL_H_

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/common_runtime/subgraph.h"
#include "runtime/distributed/master_session.h"
#include "runtime/distributed/worker_interface.h"
#include "runtime/framework/tensor.h"

namespace tensorweave {
namespace master_session_internal {

inline constexpr char kClosedMessage[] = "Session has been closed.";

// A timeout longer than a century cannot expire (and now() + it could
// overflow the clock): treated as none, as DirectSession does.
constexpr int64_t kLongestTimeoutMs = int64_t{100} * 366 * 24 * 3600 * 1000;

// "y" → "y:0"; a malformed name stays as it is (ParseSignature rejects it).
inline std::string CanonicalTensorName(const std::string& name) {
  TensorId id;
  if (!ParseTensorName(name, &id)) return name;
  return TensorIdString(id);
}

}  // namespace master_session_internal

// One signature compiled to partitions registered on workers. Feeds and
// fetches are numbered in the order of the spelling that was built.
struct MasterSession::ClientGraph {
  struct Partition {
    std::string task;
    WorkerInterface* worker = nullptr;
    std::string graph_handle;
    GraphDef graph_def;  // as registered
    // The client's (the master's own) task: the worker in this process may
    // run it on the step's own thread, which would only wait otherwise.
    bool caller_waits = false;
  };
  std::vector<Partition> partitions;
  // The order a step starts its partitions in: the caller_waits one last.
  std::vector<size_t> run_order;
  std::map<std::string, int> feed_index;  // "x:0" → feed
  std::vector<std::string> feed_keys;
  std::vector<int> feed_partition;  // -1: pruned away (the value is not needed)
  std::vector<DataType> feed_dtypes;
  std::vector<PartialTensorShape> feed_shapes;
  std::map<std::string, int> fetch_index;  // "y:0" → fetch
  std::vector<std::string> fetch_keys;
  std::vector<int> fetch_partition;
};

// One spelling of a signature: its graph and where each of its names sits.
struct MasterSession::CacheEntry {
  std::shared_ptr<const ClientGraph> graph;
  std::vector<std::string> feed_names;  // as spelled, for errors
  std::vector<int> feeds;               // spelled feed → graph feed
  std::vector<int> fetches;             // spelled fetch → graph fetch
};

struct MasterSession::Callable {
  std::shared_ptr<const CacheEntry> entry;
  RunOptions run_options;
};

// One step in flight: the RunGraph calls Close may have to cancel.
struct MasterSession::Step {
  explicit Step(size_t num_partitions) : calls(num_partitions) {}

  struct Call {
    CallOptions options;
    RunGraphInput input;
    RunGraphOutput output;
    Status status;
  };
  std::vector<Call> calls;  // one per partition (never resized: calls hold their own state)
  std::mutex mu;
  std::condition_variable changed;
  int pending = 0;
  bool failed = false;
  bool cancelled_by_close = false;  // guarded by the session's steps_mu_

  void CancelAll() {
    for (Call& call : calls) call.options.StartCancel();
  }
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_MASTER_SESSION_INTERNAL_H_
