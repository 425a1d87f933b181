#include "runtime/common_runtime/rendezvous_impl.h"

#include <utility>
#include <vector>

namespace tensorweave {

Status IntraProcessRendezvous::Send(const std::string& key, const Tensor& value) {
  DoneCallback waiter;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!abort_status_.ok()) return abort_status_;
    Slot& slot = slots_[key];
    if (slot.has_value) {
      return errors::AlreadyExists("A value was already sent under rendezvous key '", key,
                                   "' in this step");
    }
    if (!slot.waiter) {
      slot.has_value = true;
      slot.value = value;
      return Status::OK();
    }
    waiter = std::move(slot.waiter);
    // The receiver is served; mark the key used so a second Send still fails.
    slot.has_value = true;
    slot.waiter = nullptr;
  }
  // Outside the lock: the receiver usually goes on to run its consumers.
  waiter(Status::OK(), value);
  return Status::OK();
}

void IntraProcessRendezvous::RecvAsync(const std::string& key, DoneCallback done) {
  Tensor value;
  Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (abort_status_.ok()) {
      Slot& slot = slots_[key];
      if (slot.waiter) {
        status = errors::Internal("Rendezvous key '", key, "' already has a receiver");
      } else if (!slot.has_value) {
        slot.waiter = std::move(done);
        return;
      } else {
        value = std::move(slot.value);
        slot.value = Tensor();
      }
    } else {
      status = abort_status_;
    }
  }
  done(status, value);
}

void IntraProcessRendezvous::StartAbort(const Status& status) {
  std::vector<DoneCallback> waiters;
  Status abort_status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (abort_status_.ok()) {
      abort_status_ =
          status.ok() ? errors::Internal("Rendezvous aborted with an OK status") : status;
    }
    abort_status = abort_status_;
    for (auto& entry : slots_) {
      if (entry.second.waiter) waiters.push_back(std::move(entry.second.waiter));
      entry.second.waiter = nullptr;
    }
    slots_.clear();
  }
  for (DoneCallback& waiter : waiters) waiter(abort_status, Tensor());
}

}  // namespace tensorweave
