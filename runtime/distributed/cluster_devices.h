// ClusterDevices: which tasks of a cluster a master session talks to, and
// the devices they offer, found by asking each task (GetStatus) as
// TensorFlow's master does when it creates a session.
//
//   DeviceFilters filters;
//   TW_RETURN_IF_ERROR(DeviceFilters::Parse(config.device_filters(), &filters));
//   std::vector<std::string> tasks = filters.SelectTasks(all_tasks, master_task);
//   std::vector<proto::DeviceAttributes> devices;
//   TW_RETURN_IF_ERROR(FindClusterDevices(cache, tasks, /*timeout_ms=*/5000, &devices));
//
// A task that does not answer yet (not started, still binding its port) is
// asked again until the timeout; then the call fails with DEADLINE_EXCEEDED
// naming every task still silent. TensorFlow's master waits for ever here;
// ours always has a bound, so a typo in a cluster spec is an error, not a
// hang.
#ifndef TENSORWEAVE_DISTRIBUTED_CLUSTER_DEVICES_H_
#define TENSORWEAVE_DISTRIBUTED_CLUSTER_DEVICES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/common_runtime/placer.h"
#include "runtime/distributed/worker_cache.h"
#include "runtime/framework/status.h"
#include "tensorweave/proto/device_attributes.pb.h"

namespace tensorweave {

// How long CreateSession waits for silent tasks when the session's config
// sets no operation_timeout_in_ms.
inline constexpr int64_t kDefaultDeviceDiscoveryTimeoutMs = 60 * 1000;

// ConfigProto.device_filters / ResetRequest.device_filters: partial device
// names ("/job:ps", "/job:worker/task:1"); a device or task is selected
// when it agrees with some filter on every part both name. No filters
// select everything.
class DeviceFilters {
 public:
  // INVALID_ARGUMENT naming a filter that is not a device name.
  template <typename Strings>
  static Status Parse(const Strings& filters, DeviceFilters* parsed) {
    parsed->specs_.clear();
    for (const std::string& filter : filters) TW_RETURN_IF_ERROR(parsed->Add(filter));
    return Status::OK();
  }

  bool Matches(const std::string& device_or_task) const;

  // The tasks of `tasks` the filters select, plus `master_task` (the
  // master always reaches its own task: the client device lives there).
  std::vector<std::string> SelectTasks(const std::vector<std::string>& tasks,
                                       const std::string& master_task) const;

 private:
  Status Add(const std::string& filter);
  std::vector<DeviceSpec> specs_;
};

// The devices of `tasks` (each "/job:J/replica:0/task:T"), in the order of
// `tasks` and each task's own order. UNAVAILABLE-like failures are retried
// until `timeout_ms` (> 0) has passed; any other error of a task is returned
// at once, prefixed with the task's name.
Status FindClusterDevices(WorkerCacheInterface* cache, const std::vector<std::string>& tasks,
                          int64_t timeout_ms, std::vector<proto::DeviceAttributes>* devices);

// "/job:J/replica:R/task:T" of a full device name; the name itself when it
// has no "/device:" part.
std::string TaskOfDevice(const std::string& device_name);

}  // namespace tensorweave

#endif  // TENSORWEAVE_DISTRIBUTED_CLUSTER_DEVICES_H_
