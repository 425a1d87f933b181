// RemoteRendezvous and RendezvousMgr: the rendezvous of one step on one
// worker, and the table of them by step id.
//
//   RendezvousMgr rendezvous_mgr([&](const std::string& device) { return IsLocal(device); });
//   std::shared_ptr<RemoteRendezvous> rendezvous = rendezvous_mgr.FindOrCreate(step_id);
//   rendezvous->SetWorkerCache(session_cache);   // to reach the peers
//   ... executors of the step run with rendezvous.get() ...
//   rendezvous_mgr.Cleanup(step_id);              // the master's CleanupGraph
//
// A value is always sent into the table of the worker that sends it (the
// _Send's device is local). A receiver on the same worker takes it from
// there; a receiver on another worker pulls it with RecvTensor, which the
// sending worker answers from the same table. So RecvAsync of a key whose
// send device is on another task calls RecvTensor on that task.
//
// The step's rendezvous is found or created by step id, so whichever comes
// first (RunGraph, or a peer's RecvTensor) creates it and the other finds it.
// It lives until CleanupGraph: the sending worker's RunGraph may finish long
// before its receiver asks for the value.
#ifndef TENSORWEAVE_DISTRIBUTED_RENDEZVOUS_MGR_H_
#define TENSORWEAVE_DISTRIBUTED_RENDEZVOUS_MGR_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

#include "runtime/distributed/worker_cache.h"
#include "runtime/framework/rendezvous.h"

namespace tensorweave {

// Counts the RecvTensor calls in flight of every rendezvous of one manager,
// so the manager's owner can wait for their callbacks before it frees the
// worker caches (and gRPC channels) those calls run on. A channel must
// never be freed by the last callback of one of its own calls.
class RemoteCallCounter {
 public:
  void Started();
  // The last touch of the counter by a finishing call.
  void Finished();
  void WaitForNone();

 private:
  std::mutex mu_;
  std::condition_variable none_;
  int in_flight_ = 0;  // guarded by mu_
};

class RemoteRendezvous : public Rendezvous, public std::enable_shared_from_this<RemoteRendezvous> {
 public:
  using IsLocalDevice = std::function<bool(const std::string& device_name)>;

  // `counter` (not owned) outlives every remote call of the rendezvous.
  RemoteRendezvous(int64_t step_id, IsLocalDevice is_local_device, RemoteCallCounter* counter)
      : step_id_(step_id), is_local_device_(std::move(is_local_device)), counter_(counter) {}
  ~RemoteRendezvous() override;

  int64_t step_id() const { return step_id_; }

  // The workers remote receives go to (not owned: it must outlive the
  // calls, see RemoteCallCounter). Null (the default) makes a remote
  // receive fail with FAILED_PRECONDITION.
  void SetWorkerCache(WorkerCacheInterface* cache);

  // Rendezvous. RecvAsync of a malformed key reports INVALID_ARGUMENT.
  Status Send(const std::string& key, const Tensor& value, bool is_dead) override;
  void RecvAsync(const std::string& key, DoneCallback done) override;
  // Also cancels the RecvTensor calls this rendezvous has in flight.
  void StartAbort(const Status& status) override;

  // Waits in this worker's table only (what RecvTensor answers from).
  void RecvLocalAsync(const std::string& key, DoneCallback done);
  // Takes the value already sent under `key`, without waiting: false when
  // there is none (yet). A step's fetches are taken this way once its
  // executors finished, when every _Send of the step has run.
  bool TryRecvLocal(const std::string& key, Tensor* value, bool* is_dead);
  // Wakes the local receiver waiting on `key` (if any) with `status`
  // instead of a value, e.g. when the RecvTensor call it serves was
  // cancelled. The rest of the step is untouched.
  void CancelLocalRecv(const std::string& key, const Status& status);

 private:
  // A key holds either a sent value or the receiver waiting for one.
  struct Slot {
    bool has_value = false;
    Tensor value;
    bool is_dead = false;
    DoneCallback waiter;
  };
  struct RemoteCall;

  void RecvRemoteAsync(const std::string& key, const ParsedKey& parsed, DoneCallback done);
  void FinishRemoteRecv(const RemoteCall& call, const Status& call_status,
                        const DoneCallback& done);

  const int64_t step_id_;
  const IsLocalDevice is_local_device_;
  RemoteCallCounter* const counter_;

  std::mutex mu_;
  Status abort_status_;                              // guarded by mu_; not OK once aborted
  std::unordered_map<std::string, Slot> table_;      // guarded by mu_
  std::set<std::shared_ptr<RemoteCall>> in_flight_;  // guarded by mu_
  WorkerCacheInterface* worker_cache_ = nullptr;     // guarded by mu_
};

class RendezvousMgr {
 public:
  explicit RendezvousMgr(RemoteRendezvous::IsLocalDevice is_local_device)
      : is_local_device_(std::move(is_local_device)) {}
  // Aborts every step still here and waits for their remote calls.
  ~RendezvousMgr();

  // The rendezvous of `step_id`, created on first use.
  std::shared_ptr<RemoteRendezvous> FindOrCreate(int64_t step_id);
  // The rendezvous of `step_id` if one exists (null otherwise).
  std::shared_ptr<RemoteRendezvous> Find(int64_t step_id);
  // Drops the step's rendezvous; whoever still waits in it gets CANCELLED.
  void Cleanup(int64_t step_id);
  // Cleanup of every step.
  void CleanupAll();
  // How many steps have a rendezvous (for tests and monitoring).
  size_t size();
  // Returns once no RecvTensor call of any step is in flight any more
  // (CleanupAll first, or this may wait for steps to finish).
  void WaitForRemoteCalls() { counter_.WaitForNone(); }

 private:
  const RemoteRendezvous::IsLocalDevice is_local_device_;
  RemoteCallCounter counter_;
  std::mutex mu_;
  std::map<int64_t, std::shared_ptr<RemoteRendezvous>> steps_;  // guarded by mu_
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_RENDEZVOUS_MGR_H_
