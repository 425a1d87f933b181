#include "runtime/distributed/master.h"

#include <cinttypes>
#include <cstdio>
#include <vector>

#include "runtime/distributed/cluster_devices.h"
#include "runtime/distributed/parallel_calls.h"

namespace tensorweave {

namespace {

constexpr char kGrpcScheme[] = "grpc://";

std::string TaskName(const std::string& job, int task) {
  return StrCat("/job:", job, "/replica:0/task:", task);
}

bool ClusterHasTask(const ClusterDef& cluster, const std::string& job, int task) {
  for (const JobDef& def : cluster.job()) {
    if (def.name() == job && def.tasks().count(task) != 0) return true;
  }
  return false;
}

// How long CreateSession may wait for the cluster's tasks to answer.
int64_t DiscoveryTimeoutMs(const ConfigProto& config) {
  return config.operation_timeout_in_ms() > 0 ? config.operation_timeout_in_ms()
                                              : kDefaultDeviceDiscoveryTimeoutMs;
}

Status SessionNotFound(const std::string& handle) {
  return errors::Aborted("Session ", handle, " is not found.");
}

}  // namespace

Status Master::Create(MasterOptions options, std::unique_ptr<Master>* master) {
  if (!options.worker_cache_factory) {
    return errors::InvalidArgument("MasterOptions needs a worker cache factory");
  }
  const ServerDef& server = options.server_def;
  if (!ClusterHasTask(server.cluster(), server.job_name(), server.task_index())) {
    return errors::InvalidArgument("The server's cluster has no task ", server.task_index(),
                                   " in job '", server.job_name(), "'");
  }
  std::unique_ptr<WorkerCacheInterface> cache;
  TW_RETURN_IF_ERROR(options.worker_cache_factory(server.cluster(), &cache));
  std::string task = TaskName(server.job_name(), server.task_index());
  master->reset(new Master(std::move(options), std::move(task), std::move(cache)));
  return Status::OK();
}

Master::~Master() {
  std::map<std::string, std::shared_ptr<MasterSession>> sessions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions.swap(sessions_);
  }
  for (auto& entry : sessions) entry.second->Close();
}

int Master::num_sessions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(sessions_.size());
}

Status Master::FindSession(const std::string& handle,
                           std::shared_ptr<MasterSession>* session) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(handle);
  if (it == sessions_.end()) return SessionNotFound(handle);
  *session = it->second;
  return Status::OK();
}

Status Master::SessionOptionsFor(const CreateSessionRequest& request,
                                 MasterSessionOptions* options) {
  const ConfigProto& config = request.config();
  options->config = config;
  options->cluster = options_.server_def.cluster();
  options->master_task = task_;
  options->master_incarnation = incarnation_;
  options->worker_cache = worker_cache_.get();
  if (config.cluster_def().job_size() > 0) {
    // The client brought its own cluster (ClusterSpec propagation): this
    // master is the task whose address the client dialled.
    const ClusterDef& cluster = config.cluster_def();
    std::string address = request.target();
    if (address.compare(0, sizeof(kGrpcScheme) - 1, kGrpcScheme) == 0) {
      address = address.substr(sizeof(kGrpcScheme) - 1);
    }
    std::string master_task;
    for (const JobDef& job : cluster.job()) {
      for (const auto& [index, task_address] : job.tasks()) {
        if (address.empty() || task_address != address) continue;
        if (!master_task.empty()) {
          return errors::InvalidArgument("Found multiple matching tasks that correspond to the ",
                                         "master. Master target: '", request.target(), "'");
        }
        master_task = TaskName(job.name(), index);
      }
    }
    if (master_task.empty()) {
      const ServerDef& server = options_.server_def;
      if (!ClusterHasTask(cluster, server.job_name(), server.task_index())) {
        return errors::InvalidArgument("The session's cluster_def names neither the target '",
                                       request.target(), "' nor this server's task ", task_);
      }
      master_task = task_;
    }
    TW_RETURN_IF_ERROR(options_.worker_cache_factory(cluster, &options->owned_worker_cache));
    options->cluster = cluster;
    options->master_task = master_task;
    options->worker_cache = options->owned_worker_cache.get();
  }

  DeviceFilters filters;
  TW_RETURN_IF_ERROR(DeviceFilters::Parse(config.device_filters(), &filters));
  std::vector<std::string> tasks;
  options->worker_cache->ListWorkers(&tasks);
  tasks = filters.SelectTasks(tasks, options->master_task);
  std::vector<proto::DeviceAttributes> found;
  TW_RETURN_IF_ERROR(
      FindClusterDevices(options->worker_cache, tasks, DiscoveryTimeoutMs(config), &found));
  for (proto::DeviceAttributes& device : found) {
    // The master's own devices are always there: the client device is one.
    if (TaskOfDevice(device.name()) == options->master_task || filters.Matches(device.name())) {
      options->devices.push_back(std::move(device));
    }
  }
  return Status::OK();
}

Status Master::CreateSession(const CreateSessionRequest& request, CreateSessionResponse* response) {
  MasterSessionOptions options;
  TW_RETURN_IF_ERROR(SessionOptionsFor(request, &options));
  char handle[17];
  std::snprintf(handle, sizeof(handle), "%016" PRIx64, NewRandomId());
  options.handle = handle;
  std::shared_ptr<MasterSession> session;
  TW_RETURN_IF_ERROR(MasterSession::New(std::move(options), &session));
  Status created = session->Create(request.graph_def());
  if (!created.ok()) {
    session->Close();
    // Whatever the importer found wrong, the client sent an invalid graph.
    return created.code() == Code::INVALID_ARGUMENT
               ? created
               : Status(Code::INVALID_ARGUMENT, created.message());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_[session->handle()] = session;
  }
  response->set_session_handle(session->handle());
  response->set_graph_version(session->graph_version());
  return Status::OK();
}

Status Master::ExtendSession(const ExtendSessionRequest& request, ExtendSessionResponse* response) {
  std::shared_ptr<MasterSession> session;
  TW_RETURN_IF_ERROR(FindSession(request.session_handle(), &session));
  return session->Extend(request, response);
}

Status Master::PartialRunSetup(const PartialRunSetupRequest& request,
                               PartialRunSetupResponse* response) {
  std::shared_ptr<MasterSession> session;
  TW_RETURN_IF_ERROR(FindSession(request.session_handle(), &session));
  return session->PartialRunSetup(request, response);
}

Status Master::RunStep(const RunStepRequest& request, const NamedTensors& feeds,
                       RunStepResponse* response, NamedTensors* fetched) {
  std::shared_ptr<MasterSession> session;
  TW_RETURN_IF_ERROR(FindSession(request.session_handle(), &session));
  return session->Run(request, feeds, response, fetched);
}

Status Master::CloseSession(const CloseSessionRequest& request, CloseSessionResponse* response) {
  std::shared_ptr<MasterSession> session;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(request.session_handle());
    if (it == sessions_.end()) {
      return errors::Aborted("Session ", request.session_handle(),
                             " is not found. Possibly, this master has restarted.");
    }
    session = std::move(it->second);
    sessions_.erase(it);
  }
  return session->Close();
}

Status Master::ListDevices(const ListDevicesRequest& request, ListDevicesResponse* response) {
  if (!request.session_handle().empty()) {
    std::shared_ptr<MasterSession> session;
    if (!FindSession(request.session_handle(), &session).ok()) {
      return errors::InvalidArgument("Session ", request.session_handle(),
                                     " is not found. Possibly, this master has restarted.");
    }
    session->ListDevices(response);
    return Status::OK();
  }
  std::vector<std::string> tasks;
  worker_cache_->ListWorkers(&tasks);
  std::vector<proto::DeviceAttributes> devices;
  TW_RETURN_IF_ERROR(FindClusterDevices(
      worker_cache_.get(), tasks, DiscoveryTimeoutMs(options_.server_def.default_session_config()),
      &devices));
  for (const proto::DeviceAttributes& device : devices) {
    const bool local = TaskOfDevice(device.name()) == task_;
    *(local ? response->add_local_device() : response->add_remote_device()) = device;
  }
  return Status::OK();
}

Status Master::Reset(const ResetRequest& request, ResetResponse* response) {
  DeviceFilters filters;
  TW_RETURN_IF_ERROR(DeviceFilters::Parse(request.device_filters(), &filters));
  std::map<std::string, std::shared_ptr<MasterSession>> sessions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    sessions.swap(sessions_);
  }
  Status status;
  for (auto& entry : sessions) status.Update(entry.second->Close());

  std::vector<std::string> tasks;
  worker_cache_->ListWorkers(&tasks);
  tasks = filters.SelectTasks(tasks, task_);
  CleanupAllRequest cleanup;
  for (const std::string& container : request.container()) cleanup.add_container(container);
  std::vector<CleanupAllResponse> responses(tasks.size());
  CallAll(static_cast<int>(tasks.size()), MasterSession::kDefaultControlCallTimeoutMs,
          [&](int i, CallOptions* call, WorkerInterface::StatusCallback done) {
            WorkerInterface* worker = worker_cache_->GetOrCreateWorker(tasks[i]);
            if (worker == nullptr) return done(Status::OK());
            worker->CleanupAllAsync(call, &cleanup, &responses[i], std::move(done));
          });
  // As TensorFlow's master: a worker that cannot be reached has no state
  // left to clear, so its failure does not fail the reset.
  return status;
}

Status Master::MakeCallable(const MakeCallableRequest& request, MakeCallableResponse* response) {
  std::shared_ptr<MasterSession> session;
  TW_RETURN_IF_ERROR(FindSession(request.session_handle(), &session));
  return session->MakeCallable(request, response);
}

Status Master::RunCallable(const RunCallableRequest& request, const std::vector<Tensor>& feeds,
                           RunCallableResponse* response, std::vector<Tensor>* fetched) {
  std::shared_ptr<MasterSession> session;
  TW_RETURN_IF_ERROR(FindSession(request.session_handle(), &session));
  return session->RunCallable(request, feeds, response, fetched);
}

Status Master::ReleaseCallable(const ReleaseCallableRequest& request,
                               ReleaseCallableResponse* response) {
  std::shared_ptr<MasterSession> session;
  TW_RETURN_IF_ERROR(FindSession(request.session_handle(), &session));
  return session->ReleaseCallable(request);
}

}  // namespace tensorweave
