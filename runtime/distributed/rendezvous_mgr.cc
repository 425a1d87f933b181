#include "runtime/distributed/rendezvous_mgr.h"

#include <vector>

#include "runtime/distributed/grpc_remote_worker.h"
#include "runtime/framework/str_util.h"

namespace tensorweave {

// One RecvTensor call to a peer. Owned jointly by the rendezvous (while in
// flight, so StartAbort can cancel it) and the call's completion callback.
struct RemoteRendezvous::RemoteCall {
  CallOptions options;
  RecvTensorRequest request;
  // Filled by a TensorReceiverInterface; otherwise the response's tensor.
  bool received_value = false;
  Tensor value;
  bool is_dead = false;
  RecvTensorResponse response;
};

void RemoteCallCounter::Started() {
  std::lock_guard<std::mutex> lock(mu_);
  ++in_flight_;
}

void RemoteCallCounter::Finished() {
  // Notified under the lock: the waiter may free the counter as soon as it
  // can take the lock again.
  std::lock_guard<std::mutex> lock(mu_);
  if (--in_flight_ == 0) none_.notify_all();
}

void RemoteCallCounter::WaitForNone() {
  std::unique_lock<std::mutex> lock(mu_);
  none_.wait(lock, [this] { return in_flight_ == 0; });
}

RemoteRendezvous::~RemoteRendezvous() = default;

void RemoteRendezvous::SetWorkerCache(WorkerCacheInterface* cache) {
  std::lock_guard<std::mutex> lock(mu_);
  worker_cache_ = cache;
}

Status RemoteRendezvous::Send(const std::string& key, const Tensor& value, bool is_dead) {
  DoneCallback waiter;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!abort_status_.ok()) return abort_status_;
    Slot& slot = table_[key];
    if (slot.has_value) {
      return errors::AlreadyExists("The value of key ", key, " was already sent in step ",
                                   step_id_);
    }
    if (!slot.waiter) {
      slot.has_value = true;
      if (!is_dead) slot.value = value;
      slot.is_dead = is_dead;
      return Status::OK();
    }
    waiter = std::move(slot.waiter);
    table_.erase(key);
  }
  waiter(Status::OK(), is_dead ? Tensor() : value, is_dead);
  return Status::OK();
}

void RemoteRendezvous::RecvLocalAsync(const std::string& key, DoneCallback done) {
  Status status;
  Tensor value;
  bool is_dead = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!abort_status_.ok()) {
      status = abort_status_;
    } else {
      Slot& slot = table_[key];
      if (slot.has_value) {
        value = std::move(slot.value);
        is_dead = slot.is_dead;
        table_.erase(key);
      } else if (slot.waiter) {
        status = errors::AlreadyExists("Key ", key, " already has a receiver in step ", step_id_);
      } else {
        slot.waiter = std::move(done);
        return;
      }
    }
  }
  done(status, value, is_dead);
}

bool RemoteRendezvous::TryRecvLocal(const std::string& key, Tensor* value, bool* is_dead) {
  std::lock_guard<std::mutex> lock(mu_);
  auto found = table_.find(key);
  if (found == table_.end() || !found->second.has_value) return false;
  *value = std::move(found->second.value);
  *is_dead = found->second.is_dead;
  table_.erase(found);
  return true;
}

void RemoteRendezvous::CancelLocalRecv(const std::string& key, const Status& status) {
  DoneCallback waiter;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = table_.find(key);
    if (found == table_.end() || !found->second.waiter) return;
    waiter = std::move(found->second.waiter);
    table_.erase(found);
  }
  waiter(status, Tensor(), false);
}

void RemoteRendezvous::RecvAsync(const std::string& key, DoneCallback done) {
  ParsedKey parsed;
  Status status = ParseKey(key, &parsed);
  if (!status.ok()) {
    done(status, Tensor(), false);
    return;
  }
  if (is_local_device_(parsed.send_device)) {
    RecvLocalAsync(key, std::move(done));
  } else {
    RecvRemoteAsync(key, parsed, std::move(done));
  }
}

void RemoteRendezvous::RecvRemoteAsync(const std::string& key, const ParsedKey& parsed,
                                       DoneCallback done) {
  auto call = std::make_shared<RemoteCall>();
  WorkerInterface* worker = nullptr;
  Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!abort_status_.ok()) {
      status = abort_status_;
    } else if (worker_cache_ == nullptr) {
      status = errors::FailedPrecondition("Step ", step_id_, " cannot receive ", key,
                                          ": this worker knows no other task of the cluster");
    } else if ((worker = worker_cache_->GetOrCreateWorker(parsed.send_device)) == nullptr) {
      status = errors::InvalidArgument("No task of the cluster has device ", parsed.send_device,
                                       " (receiving ", key, ")");
    } else {
      in_flight_.insert(call);
      counter_->Started();
    }
  }
  if (!status.ok()) {
    done(status, Tensor(), false);
    return;
  }
  call->request.set_step_id(step_id_);
  call->request.set_rendezvous_key(key);
  std::shared_ptr<RemoteRendezvous> self = shared_from_this();
  auto finish = [self, call, done = std::move(done)](const Status& call_status) {
    RemoteCallCounter* counter = self->counter_;
    self->FinishRemoteRecv(*call, call_status, done);
    counter->Finished();
  };
  if (auto* receiver = dynamic_cast<TensorReceiverInterface*>(worker)) {
    call->received_value = true;
    receiver->RecvTensorValueAsync(&call->options, &call->request, &call->value, &call->is_dead,
                                   std::move(finish));
  } else {
    worker->RecvTensorAsync(&call->options, &call->request, &call->response, std::move(finish));
  }
}

void RemoteRendezvous::FinishRemoteRecv(const RemoteCall& call, const Status& call_status,
                                        const DoneCallback& done) {
  Status status = call_status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = in_flight_.begin(); it != in_flight_.end(); ++it) {
      if (it->get() == &call) {
        in_flight_.erase(it);
        break;
      }
    }
    // After an abort the step reports why it was aborted, not the
    // cancellation of the calls the abort cut short.
    if (!abort_status_.ok()) status = abort_status_;
  }
  Tensor value = call.value;
  bool is_dead = call.is_dead;
  if (status.ok() && !call.received_value && call.response.is_dead()) {
    is_dead = true;  // the tensor of a dead sender is a placeholder
  } else if (status.ok() && !call.received_value) {
    Status parsed = Tensor::FromProto(call.response.tensor(), &value);
    if (!parsed.ok()) {
      status = errors::Internal("RecvTensor of ", call.request.rendezvous_key(),
                                " returned an unusable tensor: ", parsed.message());
    }
  }
  if (!status.ok()) {
    value = Tensor();
    is_dead = false;
  }
  done(status, value, is_dead);
}

void RemoteRendezvous::StartAbort(const Status& status) {
  std::vector<DoneCallback> waiters;
  std::vector<std::shared_ptr<RemoteCall>> calls;
  const Status abort_status =
      status.ok() ? errors::Internal("Rendezvous aborted with an OK status") : status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!abort_status_.ok()) return;
    abort_status_ = abort_status;
    for (auto& entry : table_) {
      if (entry.second.waiter) waiters.push_back(std::move(entry.second.waiter));
    }
    table_.clear();
    calls.assign(in_flight_.begin(), in_flight_.end());
  }
  for (DoneCallback& waiter : waiters) waiter(abort_status, Tensor(), false);
  for (const std::shared_ptr<RemoteCall>& call : calls) call->options.StartCancel();
}

RendezvousMgr::~RendezvousMgr() {
  CleanupAll();
  WaitForRemoteCalls();
}

std::shared_ptr<RemoteRendezvous> RendezvousMgr::FindOrCreate(int64_t step_id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<RemoteRendezvous>& rendezvous = steps_[step_id];
  if (rendezvous == nullptr) {
    rendezvous = std::make_shared<RemoteRendezvous>(step_id, is_local_device_, &counter_);
  }
  return rendezvous;
}

std::shared_ptr<RemoteRendezvous> RendezvousMgr::Find(int64_t step_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto found = steps_.find(step_id);
  return found == steps_.end() ? nullptr : found->second;
}

void RendezvousMgr::Cleanup(int64_t step_id) {
  std::shared_ptr<RemoteRendezvous> rendezvous;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = steps_.find(step_id);
    if (found == steps_.end()) return;
    rendezvous = std::move(found->second);
    steps_.erase(found);
  }
  rendezvous->StartAbort(errors::Cancelled("Step ", step_id, " was cleaned up"));
}

void RendezvousMgr::CleanupAll() {
  std::map<int64_t, std::shared_ptr<RemoteRendezvous>> steps;
  {
    std::lock_guard<std::mutex> lock(mu_);
    steps.swap(steps_);
  }
  for (auto& entry : steps) {
    entry.second->StartAbort(errors::Cancelled("Step ", entry.first, " was cleaned up"));
  }
}

size_t RendezvousMgr::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return steps_.size();
}

}  // namespace tensorweave
