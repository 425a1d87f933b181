// CancellationManager: per-step cancellation. Blocking kernels register a
// callback that wakes them; Close() or a timeout calls StartCancel().
#ifndef TENSORWEAVE_FRAMEWORK_CANCELLATION_H_
#define TENSORWEAVE_FRAMEWORK_CANCELLATION_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace tensorweave {

class CancellationManager {
 public:
  using Token = int64_t;
  using Callback = std::function<void()>;

  Token get_cancellation_token();
  // False (and the callback is not kept) when cancellation already started:
  // the caller must then act as cancelled itself.
  bool RegisterCallback(Token token, Callback callback);
  // False when cancellation has started (the callback has run or is running).
  bool DeregisterCallback(Token token);
  // Runs every registered callback once; later calls do nothing.
  void StartCancel();
  // Lock-free: long kernels poll it between chunks of work.
  bool IsCancelled() const { return cancelled_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mu_;
  std::atomic<bool> cancelled_{false};  // written under mu_
  Token next_token_ = 0;
  std::map<Token, Callback> callbacks_;
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_CANCELLATION_H_
