#include "runtime/distributed/grpc_worker_cache.h"

#include <map>
#include <mutex>

#include "runtime/distributed/grpc_channel.h"
#include "runtime/distributed/grpc_remote_worker.h"
#include "runtime/distributed/worker.h"
#include "runtime/framework/str_util.h"

namespace tensorweave {

bool TaskOfName(const std::string& name, std::string* task) {
  const std::vector<std::string> parts = StrSplit(name, '/');
  // "", "job:J", "replica:R", "task:T", ...
  if (parts.size() < 4 || !parts[0].empty() || parts[1].rfind("job:", 0) != 0 ||
      parts[2].rfind("replica:", 0) != 0 || parts[3].rfind("task:", 0) != 0) {
    return false;
  }
  *task = StrCat("/", parts[1], "/", parts[2], "/", parts[3]);
  return true;
}

namespace {

class GrpcWorkerCache final : public WorkerCacheInterface {
 public:
  GrpcWorkerCache(std::map<std::string, std::string> addresses, GrpcChannelSettings settings)
      : addresses_(std::move(addresses)), settings_(std::move(settings)) {}

  void ListWorkers(std::vector<std::string>* tasks) const override {
    tasks->clear();
    for (const auto& entry : addresses_) tasks->push_back(entry.first);
  }

  WorkerInterface* GetOrCreateWorker(const std::string& name) override {
    std::string task;
    if (!TaskOfName(name, &task)) return nullptr;
    auto address = addresses_.find(task);
    if (address == addresses_.end()) return nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<WorkerInterface>& worker = workers_[task];
    if (worker == nullptr) worker = NewGrpcRemoteWorker(NewGrpcChannel(address->second, settings_));
    return worker.get();
  }

 private:
  // Task name → "host:port"; written once by the constructor.
  const std::map<std::string, std::string> addresses_;
  const GrpcChannelSettings settings_;  // every task's channel is made alike
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<WorkerInterface>> workers_;  // guarded by mu_
};

class CacheWithLocalWorker final : public WorkerCacheInterface {
 public:
  CacheWithLocalWorker(std::unique_ptr<WorkerCacheInterface> cache, std::string local_task,
                       WorkerInterface* local_worker)
      : cache_(std::move(cache)), local_task_(std::move(local_task)), local_worker_(local_worker) {}

  void ListWorkers(std::vector<std::string>* tasks) const override { cache_->ListWorkers(tasks); }

  WorkerInterface* GetOrCreateWorker(const std::string& name) override {
    std::string task;
    if (TaskOfName(name, &task) && task == local_task_) return local_worker_;
    return cache_->GetOrCreateWorker(name);
  }

 private:
  const std::unique_ptr<WorkerCacheInterface> cache_;
  const std::string local_task_;
  WorkerInterface* const local_worker_;
};

}  // namespace

std::unique_ptr<WorkerCacheInterface> WithLocalWorker(std::unique_ptr<WorkerCacheInterface> cache,
                                                      const std::string& local_task,
                                                      WorkerInterface* local_worker) {
  return std::make_unique<CacheWithLocalWorker>(std::move(cache), local_task, local_worker);
}

Status NewGrpcWorkerCache(const ClusterDef& cluster, std::unique_ptr<WorkerCacheInterface>* cache) {
  std::map<std::string, std::string> addresses;
  for (const JobDef& job : cluster.job()) {
    if (!IsValidJobName(job.name())) {
      return errors::InvalidArgument("Cluster job name '", job.name(),
                                     "' is not a letter followed by letters, digits or '_'");
    }
    for (const auto& task : job.tasks()) {
      if (task.first < 0) {
        return errors::InvalidArgument("Job ", job.name(), " has a negative task index ",
                                       task.first);
      }
      std::string address = task.second;
      if (address.rfind("grpc://", 0) == 0) address = address.substr(7);
      if (address.empty()) {
        return errors::InvalidArgument("Task ", task.first, " of job ", job.name(),
                                       " has no address");
      }
      const std::string name = StrCat("/job:", job.name(), "/replica:0/task:", task.first);
      if (!addresses.emplace(name, address).second) {
        return errors::InvalidArgument("Cluster lists job ", job.name(), " twice");
      }
    }
  }
  GrpcChannelSettings settings;
  TW_RETURN_IF_ERROR(GrpcChannelSettingsFromEnvironment(&settings));
  cache->reset(new GrpcWorkerCache(std::move(addresses), std::move(settings)));
  return Status::OK();
}

}  // namespace tensorweave
