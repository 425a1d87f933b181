// CallAll: starts one asynchronous worker call per target at once and waits
// for all of them, with a time bound. A master uses it whenever it must hear
// from several workers (register, clean up, deregister, delete sessions), so
// one slow worker costs one round trip, not one per worker.
//
//   std::vector<CleanupGraphRequest> requests(n); std::vector<CleanupGraphResponse> responses(n);
//   std::vector<Status> statuses = CallAll(n, /*timeout_ms=*/5000,
//       [&](int i, CallOptions* call, WorkerInterface::StatusCallback done) {
//         workers[i]->CleanupGraphAsync(call, &requests[i], &responses[i], std::move(done));
//       });
#ifndef TENSORWEAVE_DISTRIBUTED_PARALLEL_CALLS_H_
#define TENSORWEAVE_DISTRIBUTED_PARALLEL_CALLS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/distributed/worker_interface.h"

namespace tensorweave {

// `start(i, call, done)` starts call i with `call` as its CallOptions (whose
// timeout is `timeout_ms`, > 0) and `done` as its callback. Returns each
// call's status. A call still running a second after its timeout is
// cancelled (a worker that ignores deadlines cannot hang the caller).
template <typename Start>
std::vector<Status> CallAll(int n, int64_t timeout_ms, Start start) {
  struct Shared {
    std::mutex mu;
    std::condition_variable all_done;
    int pending = 0;
    std::vector<Status> statuses;
    std::unique_ptr<CallOptions[]> calls;
  };
  Shared shared;
  shared.pending = n;
  shared.statuses.resize(n);
  shared.calls.reset(new CallOptions[n]);
  for (int i = 0; i < n; ++i) {
    shared.calls[i].SetTimeout(timeout_ms);
    start(i, &shared.calls[i], [&shared, i](const Status& status) {
      std::lock_guard<std::mutex> lock(shared.mu);
      shared.statuses[i] = status;
      if (--shared.pending == 0) shared.all_done.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(shared.mu);
  const auto finished = [&shared] { return shared.pending == 0; };
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms) +
                       std::chrono::seconds(1);
  if (!shared.all_done.wait_until(lock, give_up, finished)) {
    lock.unlock();
    for (int i = 0; i < n; ++i) shared.calls[i].StartCancel();
    lock.lock();
    shared.all_done.wait(lock, finished);
  }
  return shared.statuses;
}

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_PARALLEL_CALLS_H_
