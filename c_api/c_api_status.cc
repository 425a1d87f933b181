// TF_Status extras of TensorFlow's tf_status.h: payloads (key/value strings
// riding on a non-OK status) and a status from a system call's errno.
#include <algorithm>

#include "c_api/c_api_internal.h"
#include "runtime/framework/io_error.h"

namespace c_api = tensorweave::c_api;

extern "C" {

void TF_SetPayload(TF_Status* s, const char* key, const char* value) {
  c_api::GuardVoid(nullptr, [&] {
    // As TensorFlow: an OK status carries no payload.
    if (s == nullptr || key == nullptr || value == nullptr || s->status.ok()) return;
    auto& payloads = s->payloads;
    payloads.erase(std::remove_if(payloads.begin(), payloads.end(),
                                  [&](const auto& entry) { return entry.first == key; }),
                   payloads.end());
    payloads.emplace_back(key, value);
  });
}

void TF_ForEachPayload(const TF_Status* s, TF_PayloadVisitor visitor, void* capture) {
  if (s == nullptr || visitor == nullptr) return;
  // A copy, so a visitor that sets payloads on the same status is safe.
  const std::vector<std::pair<std::string, std::string>> payloads = s->payloads;
  for (const auto& [key, value] : payloads) visitor(key.c_str(), value.c_str(), capture);
}

void TF_SetStatusFromIOError(TF_Status* s, int error_code, const char* context) {
  c_api::GuardVoid(
      s, [&] { c_api::Set(s, tensorweave::IOError(context ? context : "", error_code)); });
}

}  // extern "C"
