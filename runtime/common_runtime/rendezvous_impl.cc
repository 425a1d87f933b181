#include "runtime/common_runtime/rendezvous_impl.h"

#include <utility>
#include <vector>

namespace tensorweave {

Status IntraProcessRendezvous::Send(const std::string& key, const Tensor& value, bool is_dead) {
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
      if (!is_dead) slot.value = value;
      slot.is_dead = is_dead;
      return Status::OK();
    }
    waiter = std::move(slot.waiter);
    // The receiver is served; mark the key used so a second Send still fails.
    slot.has_value = true;
    slot.waiter = nullptr;
  }
  // Outside the lock: the receiver usually goes on to run its consumers.
  waiter(Status::OK(), is_dead ? Tensor() : value, is_dead);
  return Status::OK();
}

void IntraProcessRendezvous::RecvAsync(const std::string& key, DoneCallback done) {
  Tensor value;
  bool is_dead = false;
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
        is_dead = slot.is_dead;
        slot.value = Tensor();
      }
    } else {
      status = abort_status_;
    }
  }
  done(status, value, is_dead);
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
  for (DoneCallback& waiter : waiters) waiter(abort_status, Tensor(), false);
}

}  // namespace tensorweave
