// Process-wide listeners for the runtime's log messages, as TensorFlow's log
// sinks: TF_RegisterLogListener adds one, and what TensorFlow writes with
// LOG(...) — the Print op's lines, PrintV2 to "log(info)" / "log(warning)" /
// "log(error)" — reaches every listener as the message text (no prefix, no
// trailing newline) besides going to stderr as before.
//
//   AddLogListener([](const char* message) { my_log(message); });
//   ForwardToLogListeners("x = [1 2 3]");
//
// Listeners cannot be removed (as in TensorFlow) and must be thread-safe:
// kernels running at once call them concurrently.
#ifndef TENSORWEAVE_FRAMEWORK_LOG_LISTENERS_H_
#define TENSORWEAVE_FRAMEWORK_LOG_LISTENERS_H_

#include <string>

namespace tensorweave {

using LogListener = void (*)(const char* message);

void AddLogListener(LogListener listener);

// Calls every listener with `message` (a trailing newline dropped).
void ForwardToLogListeners(const std::string& message);

}  // namespace tensorweave

#endif  // TENSORWEAVE_FRAMEWORK_LOG_LISTENERS_H_
