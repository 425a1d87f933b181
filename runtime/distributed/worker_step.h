// Worker::Step: what one RunGraph call (or one partial run, over all its
// calls) keeps alive until it has finished, and what its cancellation
// reaches (possibly after the call finished). Shared by worker.cc and
// worker_partial_run.cc only.
#ifndef TENSORWEAVE_DISTRIBUTED_WORKER_STEP_H_
#define TENSORWEAVE_DISTRIBUTED_WORKER_STEP_H_

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/common_runtime/step_stats_collector.h"
#include "runtime/distributed/worker.h"
#include "runtime/framework/cancellation.h"

namespace tensorweave {

struct Worker::Step {
  std::shared_ptr<WorkerSession> session;
  std::shared_ptr<const RegisteredGraph> graph;
  std::shared_ptr<RemoteRendezvous> rendezvous;
  CancellationManager cancellation;
  std::atomic<bool> cancelled{false};
  // Set for a traced step only (exec_opts.record_timeline or record_costs).
  std::unique_ptr<StepStatsCollector> stats;

  // Ends the step: receivers wake with `reason`, no kernel starts any more.
  void Cancel(const Status& reason) {
    cancelled.store(true, std::memory_order_relaxed);
    rendezvous->StartAbort(reason);
    cancellation.StartCancel();
  }
};

// One partial run of one registered graph (a step_id's calls with
// is_partial): its step, started by the first call, and the calls waiting
// for its executors to finish (the one with is_last_partial_run).
struct Worker::PartialRun {
  std::string session_handle;
  std::shared_ptr<Step> step;

  std::mutex mu;
  bool executors_done = false;                                      // guarded by mu
  Status executors_status;                                          // guarded by mu
  std::vector<std::function<void(const Status&)>> waiting_for_end;  // guarded by mu
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_WORKER_STEP_H_
