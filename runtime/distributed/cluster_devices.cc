#include "runtime/distributed/cluster_devices.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "runtime/distributed/parallel_calls.h"

namespace tensorweave {

namespace {

using Clock = std::chrono::steady_clock;

// A task that has not answered yet may still be starting: ask again.
bool IsRetriable(const Status& status) {
  return status.code() == Code::UNAVAILABLE || status.code() == Code::DEADLINE_EXCEEDED;
}

}  // namespace

Status DeviceFilters::Add(const std::string& filter) {
  DeviceSpec spec;
  Status status = ParseDeviceSpec(filter, &spec);
  if (!status.ok()) {
    return errors::InvalidArgument("Device filter '", filter,
                                   "' is not a device name: ", status.message());
  }
  specs_.push_back(spec);
  return Status::OK();
}

bool DeviceFilters::Matches(const std::string& device_or_task) const {
  if (specs_.empty()) return true;
  DeviceSpec name;
  if (!ParseDeviceSpec(device_or_task, &name).ok()) return false;
  for (const DeviceSpec& filter : specs_) {
    DeviceSpec merged = filter;
    if (merged.MergeFrom(name)) return true;
  }
  return false;
}

std::vector<std::string> DeviceFilters::SelectTasks(const std::vector<std::string>& tasks,
                                                    const std::string& master_task) const {
  std::vector<std::string> selected;
  for (const std::string& task : tasks) {
    if (task == master_task || Matches(task)) selected.push_back(task);
  }
  return selected;
}

std::string TaskOfDevice(const std::string& device_name) {
  const size_t device = device_name.find("/device:");
  return device == std::string::npos ? device_name : device_name.substr(0, device);
}

Status FindClusterDevices(WorkerCacheInterface* cache, const std::vector<std::string>& tasks,
                          int64_t timeout_ms, std::vector<proto::DeviceAttributes>* devices) {
  devices->clear();
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  std::vector<WorkerInterface*> workers;
  for (const std::string& task : tasks) {
    WorkerInterface* worker = cache->GetOrCreateWorker(task);
    if (worker == nullptr) return errors::NotFound("The cluster has no task ", task);
    workers.push_back(worker);
  }
  std::vector<std::vector<proto::DeviceAttributes>> found(tasks.size());
  std::vector<size_t> silent(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) silent[i] = i;
  std::chrono::milliseconds backoff(20);
  Status last_failure;
  while (!silent.empty()) {
    const int64_t remaining_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (remaining_ms <= 0) break;
    std::vector<GetStatusRequest> requests(silent.size());
    std::vector<GetStatusResponse> responses(silent.size());
    const std::vector<Status> statuses = CallAll(
        static_cast<int>(silent.size()), remaining_ms,
        [&](int k, CallOptions* call, WorkerInterface::StatusCallback done) {
          workers[silent[k]]->GetStatusAsync(call, &requests[k], &responses[k], std::move(done));
        });
    std::vector<size_t> still_silent;
    for (size_t k = 0; k < silent.size(); ++k) {
      const Status& status = statuses[k];
      const size_t task = silent[k];
      if (status.ok()) {
        found[task].assign(responses[k].device_attributes().begin(),
                           responses[k].device_attributes().end());
      } else if (IsRetriable(status) || status.code() == Code::CANCELLED) {
        still_silent.push_back(task);
        last_failure = status;
      } else {
        return errors::Annotate(status, StrCat("Task ", tasks[task], " failed GetStatus: "));
      }
    }
    silent.swap(still_silent);
    if (silent.empty()) break;
    const auto pause = std::min<Clock::duration>(backoff, deadline - Clock::now());
    if (pause > Clock::duration::zero()) std::this_thread::sleep_for(pause);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
  }
  if (!silent.empty()) {
    std::string names;
    for (size_t task : silent) names += (names.empty() ? "" : ", ") + tasks[task];
    return errors::DeadlineExceeded(
        "Timed out after ", timeout_ms, " ms waiting for a response from worker(s): ", names,
        last_failure.ok() ? "" : " (last error: ", last_failure.ok() ? "" : last_failure.ToString(),
        last_failure.ok() ? "" : ")");
  }
  for (auto& task_devices : found) {
    for (auto& device : task_devices) devices->push_back(std::move(device));
  }
  return Status::OK();
}

}  // namespace tensorweave
