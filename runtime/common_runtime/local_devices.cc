#include "runtime/common_runtime/local_devices.h"

#include <random>

#include "runtime/framework/str_util.h"
#include "runtime/framework/types.h"

namespace tensorweave {

Status LocalCpuDeviceCount(const ConfigProto& config, int* count) {
  *count = 1;
  auto it = config.device_count().find("CPU");
  if (it == config.device_count().end() || it->second <= 1) return Status::OK();
  if (it->second > kMaxLocalCpuDevices) {
    return errors::InvalidArgument("ConfigProto.device_count asks for ", it->second,
                                   " CPU devices; at most ", kMaxLocalCpuDevices, " are supported");
  }
  *count = it->second;
  return Status::OK();
}

std::string LocalCpuDeviceName(const std::string& job, int task, int index) {
  return StrCat("/job:", job, "/replica:0/task:", task, "/device:CPU:", index);
}

uint64_t NewDeviceIncarnation() {
  std::random_device entropy;
  std::mt19937_64 generator((uint64_t{entropy()} << 32) ^ entropy());
  uint64_t incarnation = 0;
  while (incarnation == 0) incarnation = generator();
  return incarnation;
}

DeviceAttributes LocalCpuDeviceAttributes(const std::string& name, uint64_t incarnation) {
  DeviceAttributes attributes;
  attributes.name = name;
  attributes.device_type = DEVICE_CPU;
  attributes.memory_limit_bytes = kCpuDeviceMemoryLimitBytes;
  attributes.incarnation = incarnation;
  return attributes;
}

}  // namespace tensorweave
