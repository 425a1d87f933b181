// The CPU devices one process offers: how many a ConfigProto asks for, what
// each is called ("/job:J/replica:0/task:T/device:CPU:N") and what it
// reports about itself. DirectSession (job "localhost", task 0) and the
// distributed worker (its own job and task) both describe their devices
// through these, so the two never disagree.
#ifndef TENSORWEAVE_COMMON_RUNTIME_LOCAL_DEVICES_H_
#define TENSORWEAVE_COMMON_RUNTIME_LOCAL_DEVICES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/common_runtime/session.h"
#include "runtime/framework/status.h"
#include "tensorweave/proto/config.pb.h"

namespace tensorweave {

// More CPU devices than this is refused (each one costs a Device and its
// variable store, and nothing gains from so many).
inline constexpr int kMaxLocalCpuDevices = 256;

// The memory every CPU device reports as its limit.
inline constexpr int64_t kCpuDeviceMemoryLimitBytes = int64_t{256} << 20;

// ConfigProto.device_count["CPU"], at least 1; INVALID_ARGUMENT beyond
// kMaxLocalCpuDevices.
Status LocalCpuDeviceCount(const ConfigProto& config, int* count);

// "/job:<job>/replica:0/task:<task>/device:CPU:<index>".
std::string LocalCpuDeviceName(const std::string& job, int task, int index);

// A random 64-bit number that is never 0 (TensorFlow reads 0 as
// "unknown"): the incarnation of a device made now.
uint64_t NewDeviceIncarnation();

// The attributes a CPU device called `name`, made with `incarnation`, reports.
DeviceAttributes LocalCpuDeviceAttributes(const std::string& name, uint64_t incarnation);

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_LOCAL_DEVICES_H_
