#include "runtime/framework/cancellation.h"

#include <utility>

namespace tensorweave {

CancellationManager::Token CancellationManager::get_cancellation_token() {
  std::lock_guard<std::mutex> lock(mu_);
  return next_token_++;
}

bool CancellationManager::RegisterCallback(Token token, Callback callback) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_) return false;
  callbacks_.emplace(token, std::move(callback));
  return true;
}

bool CancellationManager::DeregisterCallback(Token token) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_) return false;
  callbacks_.erase(token);
  return true;
}

void CancellationManager::StartCancel() {
  std::map<Token, Callback> to_run;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_) return;
    cancelled_.store(true, std::memory_order_release);
    to_run.swap(callbacks_);
  }
  // Outside the lock: a callback may call back into this manager.
  for (auto& entry : to_run) entry.second();
}

}  // namespace tensorweave
