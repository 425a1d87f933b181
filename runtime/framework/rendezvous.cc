#include "runtime/framework/rendezvous.h"

#include <cinttypes>
#include <cstdio>
#include <vector>

#include "runtime/framework/str_util.h"

namespace tensorweave {

namespace {

bool IsDecimal(const std::string& text) {
  if (text.empty() || text.size() > 9) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// "/job:J/replica:R/task:T/device:TYPE:N" with every part present.
bool IsFullDeviceName(const std::string& name) {
  const std::vector<std::string> parts = StrSplit(name, '/');
  if (parts.size() != 5 || !parts[0].empty()) return false;
  auto value_of = [](const std::string& part, const std::string& label, std::string* value) {
    if (part.compare(0, label.size(), label) != 0) return false;
    *value = part.substr(label.size());
    return !value->empty();
  };
  std::string job, replica, task, device;
  if (!value_of(parts[1], "job:", &job) || !value_of(parts[2], "replica:", &replica) ||
      !value_of(parts[3], "task:", &task) || !value_of(parts[4], "device:", &device)) {
    return false;
  }
  const size_t colon = device.rfind(':');
  return IsDecimal(replica) && IsDecimal(task) && colon != std::string::npos && colon > 0 &&
         IsDecimal(device.substr(colon + 1));
}

bool ParseHex64(const std::string& text, uint64_t* value) {
  if (text.empty() || text.size() > 16) return false;
  uint64_t result = 0;
  for (char c : text) {
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      digit = c - 'A' + 10;
    } else {
      return false;
    }
    result = (result << 4) | static_cast<uint64_t>(digit);
  }
  *value = result;
  return true;
}

}  // namespace

std::string Rendezvous::CreateKey(const std::string& send_device, uint64_t send_device_incarnation,
                                  const std::string& recv_device, const std::string& tensor_name,
                                  const std::string& frame_iter) {
  char incarnation[17];
  std::snprintf(incarnation, sizeof(incarnation), "%016" PRIx64, send_device_incarnation);
  std::string key;
  key.reserve(send_device.size() + recv_device.size() + tensor_name.size() + frame_iter.size() +
              20);
  key.append(send_device).append(1, ';').append(incarnation).append(1, ';');
  key.append(recv_device).append(1, ';').append(tensor_name).append(1, ';').append(frame_iter);
  return key;
}

Status Rendezvous::ParseKey(const std::string& key, ParsedKey* parsed) {
  const std::vector<std::string> parts = StrSplit(key, ';');
  ParsedKey result;
  if (parts.size() != 5 || !IsFullDeviceName(parts[0]) ||
      !ParseHex64(parts[1], &result.send_device_incarnation) || !IsFullDeviceName(parts[2]) ||
      parts[3].empty() || parts[4].empty()) {
    return errors::InvalidArgument("Invalid rendezvous key: ", key);
  }
  result.send_device = parts[0];
  result.recv_device = parts[2];
  result.tensor_name = parts[3];
  result.frame_iter = parts[4];
  *parsed = std::move(result);
  return Status::OK();
}

}  // namespace tensorweave
