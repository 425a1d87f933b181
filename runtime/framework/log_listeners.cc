#include "runtime/framework/log_listeners.h"

#include <mutex>
#include <vector>

namespace tensorweave {
namespace {

std::mutex* ListenersMutex() {
  static std::mutex* mu = new std::mutex;
  return mu;
}

std::vector<LogListener>* Listeners() {
  static auto* listeners = new std::vector<LogListener>;
  return listeners;
}

}  // namespace

void AddLogListener(LogListener listener) {
  if (listener == nullptr) return;
  std::lock_guard<std::mutex> lock(*ListenersMutex());
  Listeners()->push_back(listener);
}

void ForwardToLogListeners(const std::string& message) {
  std::vector<LogListener> listeners;
  {
    std::lock_guard<std::mutex> lock(*ListenersMutex());
    if (Listeners()->empty()) return;
    listeners = *Listeners();
  }
  std::string text = message;
  if (!text.empty() && text.back() == '\n') text.pop_back();
  for (LogListener listener : listeners) listener(text.c_str());
}

}  // namespace tensorweave
