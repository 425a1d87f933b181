// The parts of DirectSession's private state that its two source files
// share: direct_session.cc (Run, callables, building executors) and
// direct_session_partial_run.cc (PRunSetup and PRun). Internal to
// runtime/common_runtime.
#ifndef TENSORWEAVE_COMMON_RUNTIME_DIRECT_SESSION_INTERNAL_H_
#define TENSORWEAVE_COMMON_RUNTIME_DIRECT_SESSION_INTERNAL_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/common_runtime/direct_session.h"
#include "runtime/common_runtime/function_runtime.h"
#include "runtime/common_runtime/rendezvous_impl.h"
#include "runtime/framework/cancellation.h"

namespace tensorweave {

// What one signature compiled to. Arg i is feed i and retval i is distinct
// fetch i of the spelling that was built (for a partial run, feeds and
// fetches pass through the step's rendezvous instead).
struct DirectSession::ExecutorsAndKeys {
  struct Part {
    Device* device = nullptr;
    // Runs the functions of the session's library for the executor's call
    // kernels (null when the library is empty); outlives the executor.
    std::unique_ptr<FunctionLibraryRuntime> function_library;
    std::unique_ptr<Executor> executor;
  };
  std::vector<Part> parts;  // one per device used
  std::vector<DataType> feed_dtypes;
  std::vector<PartialTensorShape> feed_shapes;
  std::vector<char> check_shape;  // the feed comes from a placeholder with a known rank
  int num_retvals = 0;
  // The partitions the executors were made from, by device. Serialized on
  // first use only (RunOptions.output_partition_graphs, GetPartitionGraphs):
  // most signatures are never asked, and serializing every partition was a
  // tenth of the first run of a big graph.
  std::map<std::string, std::unique_ptr<Graph>> partitions;
  const std::map<std::string, GraphDef>& PartitionGraphs() const;

 private:
  mutable std::once_flag partition_graphs_once_;
  mutable std::map<std::string, GraphDef> partition_graphs_;
};

struct DirectSession::Step {
  CancellationManager cancellation;
  IntraProcessRendezvous rendezvous;
  std::atomic<bool> cancelled{false};  // stops kernels from starting
  Step* previous = nullptr;            // links guarded by steps_mu_
  Step* next = nullptr;
  bool cancelled_by_close = false;  // guarded by steps_mu_
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_DIRECT_SESSION_INTERNAL_H_
