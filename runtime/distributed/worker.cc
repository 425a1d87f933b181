#include "runtime/distributed/worker.h"

#include <atomic>
#include <cctype>
#include <chrono>

#include "runtime/common_runtime/local_devices.h"
#include "runtime/common_runtime/step_stats_collector.h"
#include "runtime/common_runtime/thread_pools.h"
#include "runtime/distributed/worker_step.h"
#include "runtime/framework/cancellation.h"
#include "runtime/framework/str_util.h"

namespace tensorweave {

bool IsValidJobName(const std::string& name) {
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

namespace {

std::vector<Device*> Pointers(const std::vector<std::unique_ptr<Device>>& devices) {
  std::vector<Device*> pointers;
  for (const auto& device : devices) pointers.push_back(device.get());
  return pointers;
}

std::map<std::string, Device*> ByName(const std::vector<std::unique_ptr<Device>>& devices) {
  std::map<std::string, Device*> by_name;
  for (const auto& device : devices) by_name[device->name()] = device.get();
  return by_name;
}

}  // namespace

Status Worker::Create(const WorkerOptions& options, std::unique_ptr<Worker>* worker) {
  if (!IsValidJobName(options.job_name)) {
    return errors::InvalidArgument("worker job name '", options.job_name,
                                   "' is not a letter followed by letters, digits or '_'");
  }
  if (options.task_index < 0) {
    return errors::InvalidArgument("worker task index ", options.task_index, " is negative");
  }
  int num_cpus = 1;
  TW_RETURN_IF_ERROR(LocalCpuDeviceCount(options.config, &num_cpus));
  const Eigen::ThreadPoolDevice* intra_op = nullptr;
  TW_RETURN_IF_ERROR(IntraOpDevice(options.config.intra_op_parallelism_threads(), &intra_op));
  Executor::Runner runner;
  TW_RETURN_IF_ERROR(InterOpRunner(options.config.inter_op_parallelism_threads(), &runner));
  std::shared_ptr<WorkerCacheInterface> default_cache;
  if (options.cluster.job_size() > 0) {
    std::unique_ptr<WorkerCacheInterface> cache;
    TW_RETURN_IF_ERROR(NewGrpcWorkerCache(options.cluster, &cache));
    default_cache = std::move(cache);
  }
  std::vector<std::unique_ptr<Device>> devices;
  std::vector<proto::DeviceAttributes> attributes;
  for (int i = 0; i < num_cpus; ++i) {
    const uint64_t incarnation = NewDeviceIncarnation();
    DeviceAttributes local = LocalCpuDeviceAttributes(
        LocalCpuDeviceName(options.job_name, options.task_index, i), incarnation);
    devices.push_back(
        std::make_unique<Device>(local.name, local.device_type, intra_op, incarnation));
    proto::DeviceAttributes device;
    device.set_name(local.name);
    device.set_device_type(local.device_type);
    device.set_memory_limit(local.memory_limit_bytes);
    device.set_incarnation(incarnation);
    device.set_xla_global_id(-1);  // TensorFlow's "unknown"
    attributes.push_back(std::move(device));
  }
  worker->reset(new Worker(options, std::move(devices), std::move(attributes), std::move(runner),
                           std::move(default_cache)));
  return Status::OK();
}

Worker::Worker(const WorkerOptions& options, std::vector<std::unique_ptr<Device>> devices,
               std::vector<proto::DeviceAttributes> attributes, Executor::Runner runner,
               std::shared_ptr<WorkerCacheInterface> default_cache)
    : options_(options),
      task_name_(StrCat("/job:", options.job_name, "/replica:0/task:", options.task_index)),
      devices_(std::move(devices)),
      device_ptrs_(Pointers(devices_)),
      devices_by_name_(ByName(devices_)),
      device_attributes_(std::move(attributes)),
      runner_(std::move(runner)),
      default_cache_(std::move(default_cache)),
      rendezvous_mgr_([this](const std::string& device) { return FindDevice(device) != nullptr; }) {
  WorkerSession::Create("", device_ptrs_, /*isolate_state=*/false, default_cache_,
                        &legacy_session_);
}

Worker::~Worker() {
  // Executors of partial runs use this worker's devices and runner: they
  // are cancelled and waited for before any of it goes.
  CancelPartialRuns([](int64_t, const PartialRun&) { return true; },
                    errors::Cancelled("The worker is shutting down"));
  {
    std::unique_lock<std::mutex> lock(partial_runs_mu_);
    partial_runs_cv_.wait(lock, [this] { return partial_executors_running_ == 0; });
  }
  rendezvous_mgr_.CleanupAll();
}

Device* Worker::FindDevice(const std::string& name) const {
  auto found = devices_by_name_.find(name);
  return found == devices_by_name_.end() ? nullptr : found->second;
}

Status Worker::CacheForCluster(const ClusterDef& cluster,
                               std::shared_ptr<WorkerCacheInterface>* cache) {
  // The cluster's tasks in a canonical order (a map's serialization is not).
  std::map<std::string, std::string> tasks;
  for (const JobDef& job : cluster.job()) {
    for (const auto& task : job.tasks()) {
      tasks[StrCat(job.name(), ":", task.first)] = task.second;
    }
  }
  std::string key = StrCat(cluster.job_size(), ";");
  for (const auto& task : tasks) key += StrCat(task.first, "=", task.second, ";");
  std::lock_guard<std::mutex> lock(caches_mu_);
  std::shared_ptr<WorkerCacheInterface>& cached = caches_[key];
  if (cached == nullptr) {
    std::unique_ptr<WorkerCacheInterface> made;
    Status status = NewGrpcWorkerCache(cluster, &made);
    if (!status.ok()) {
      caches_.erase(key);
      return status;
    }
    cached = std::move(made);
  }
  *cache = cached;
  return Status::OK();
}

Status Worker::FindSession(const std::string& handle, bool create_worker_session_called,
                           std::shared_ptr<WorkerSession>* session) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!create_worker_session_called || handle.empty()) {
    *session = legacy_session_;
    return Status::OK();
  }
  auto found = sessions_.find(handle);
  if (found == sessions_.end()) {
    return errors::Aborted("Session handle is not found: ", handle, ". Possibly this worker (\"",
                           task_name_, "\") just restarted.");
  }
  *session = found->second;
  return Status::OK();
}

void Worker::GetStatusAsync(CallOptions* call, const GetStatusRequest* request,
                            GetStatusResponse* response, StatusCallback done) {
  for (const proto::DeviceAttributes& device : device_attributes_) {
    *response->add_device_attributes() = device;
  }
  done(Status::OK());
}

void Worker::CreateWorkerSessionAsync(CallOptions* call, const CreateWorkerSessionRequest* request,
                                      CreateWorkerSessionResponse* response, StatusCallback done) {
  const std::string& handle = request->session_handle();
  if (handle.empty()) {
    done(errors::InvalidArgument("CreateWorkerSession needs a session_handle"));
    return;
  }
  const ServerDef& server_def = request->server_def();
  if (!server_def.job_name().empty() && (server_def.job_name() != options_.job_name ||
                                         server_def.task_index() != options_.task_index)) {
    done(errors::InvalidArgument("CreateWorkerSession for /job:", server_def.job_name(),
                                 "/replica:0/task:", server_def.task_index(),
                                 " reached a different worker: ", task_name_));
    return;
  }
  std::shared_ptr<WorkerCacheInterface> cache = default_cache_;
  if (server_def.cluster().job_size() > 0) {
    Status status = CacheForCluster(server_def.cluster(), &cache);
    if (!status.ok()) {
      done(status);
      return;
    }
  }
  std::shared_ptr<WorkerSession> session;
  WorkerSession::Create(handle, device_ptrs_, request->isolate_session_state(), std::move(cache),
                        &session);
  std::vector<std::shared_ptr<WorkerSession>> expired;  // freed outside the lock
  {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string& master = request->master_task();
    if (!master.empty()) {
      // A master that restarted (new incarnation) never deletes the
      // sessions of its previous life: they go now.
      auto range = sessions_of_master_.equal_range(master);
      if (range.first != range.second &&
          range.first->second.master_incarnation != request->master_incarnation()) {
        for (auto it = range.first; it != range.second; ++it) {
          auto found = sessions_.find(it->second.session_handle);
          if (found == sessions_.end()) continue;
          expired.push_back(std::move(found->second));
          sessions_.erase(found);
        }
        sessions_of_master_.erase(range.first, range.second);
      }
    }
    // As TensorFlow: creating a session that exists keeps the existing one
    // (a master retrying its request must not fail).
    if (sessions_.emplace(handle, std::move(session)).second && !master.empty()) {
      sessions_of_master_.emplace(master, MasterSession{request->master_incarnation(), handle});
    }
  }
  done(Status::OK());
}

void Worker::DeleteWorkerSessionAsync(CallOptions* call, const DeleteWorkerSessionRequest* request,
                                      DeleteWorkerSessionResponse* response, StatusCallback done) {
  std::shared_ptr<WorkerSession> session;  // freed outside the lock
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = sessions_.find(request->session_handle());
    if (found != sessions_.end()) {
      session = std::move(found->second);
      sessions_.erase(found);
      // Its master's record of it goes too, or every session ever made
      // would stay listed.
      for (auto it = sessions_of_master_.begin(); it != sessions_of_master_.end();) {
        it = it->second.session_handle == request->session_handle() ? sessions_of_master_.erase(it)
                                                                    : std::next(it);
      }
    }
  }
  if (session != nullptr) {
    const std::string& handle = request->session_handle();
    CancelPartialRuns(
        [&handle](int64_t, const PartialRun& run) { return run.session_handle == handle; },
        errors::Cancelled("The worker session of the partial run was deleted"));
  }
  // Deleting a session that is not there (any more) is not an error, as in
  // TensorFlow: a master retrying its cleanup must not fail.
  done(Status::OK());
}

void Worker::RegisterGraphAsync(CallOptions* call, const RegisterGraphRequest* request,
                                RegisterGraphResponse* response, StatusCallback done) {
  std::shared_ptr<WorkerSession> session;
  Status status =
      FindSession(request->session_handle(), request->create_worker_session_called(), &session);
  if (status.ok()) {
    std::string handle;
    status = session->graphs()->Register(request->graph_def(), &handle);
    if (status.ok()) response->set_graph_handle(handle);
  }
  done(status);
}

void Worker::DeregisterGraphAsync(CallOptions* call, const DeregisterGraphRequest* request,
                                  DeregisterGraphResponse* response, StatusCallback done) {
  std::shared_ptr<WorkerSession> session;
  Status status =
      FindSession(request->session_handle(), request->create_worker_session_called(), &session);
  if (status.ok()) status = session->graphs()->Deregister(request->graph_handle());
  done(status);
}

void Worker::RunGraphAsync(CallOptions* call, const RunGraphInput* input, RunGraphOutput* output,
                           StatusCallback done) {
  if (input->request.store_errors_in_response_body()) {
    // The step's error travels in the body; the RPC itself succeeds.
    done = [output, done = std::move(done)](const Status& status) {
      if (!status.ok()) {
        output->response.set_status_code(static_cast<int>(status.code()));
        output->response.set_status_error_message(status.message());
      }
      done(Status::OK());
    };
  }
  Status status = StartRunGraph(call, *input, output, &done);
  if (!status.ok()) done(status);
}

Status Worker::CheckRunGraphKeys(const RunGraphInput& input, const RegisteredGraph& graph,
                                 bool partial) {
  const RunGraphRequest& request = input.request;
  std::set<std::string> fed;
  for (const auto& [key, value] : input.sends) {
    auto receiver = graph.feed_keys().find(key);
    if (receiver == graph.feed_keys().end()) {
      return errors::InvalidArgument("RunGraph sends ", key,
                                     ", which no client-terminated _Recv of graph ",
                                     request.graph_handle(), " receives");
    }
    if (!fed.insert(key).second) {
      return errors::InvalidArgument("RunGraph sends ", key, " twice");
    }
    if (value.dtype() != receiver->second) {
      return errors::InvalidArgument("RunGraph sends a ", DataTypeString(value.dtype()), " as ",
                                     key, ", which is received as a ",
                                     DataTypeString(receiver->second));
    }
  }
  for (const auto& [key, dtype] : graph.feed_keys()) {
    if (partial) break;  // a partial run's feeds come over several calls
    if (fed.count(key) == 0) {
      return errors::InvalidArgument("RunGraph does not send ", key, ", which graph ",
                                     request.graph_handle(), " receives from the client");
    }
  }
  for (const std::string& key : request.recv_key()) {
    if (graph.fetch_keys().count(key) == 0) {
      return errors::InvalidArgument("RunGraph asks for ", key,
                                     ", which no client-terminated _Send of graph ",
                                     request.graph_handle(), " sends");
    }
  }

  return Status::OK();
}

// Checks the request, feeds the step and starts its executors. On error
// nothing was started and the caller reports the error through `done`;
// otherwise `done` was moved into the step.
Status Worker::StartRunGraph(CallOptions* call, const RunGraphInput& input, RunGraphOutput* output,
                             StatusCallback* done) {
  const RunGraphRequest& request = input.request;
  if (request.is_partial() || request.is_last_partial_run()) {
    return StartPartialRunGraph(call, input, output, done);
  }
  auto step = std::make_shared<Step>();
  TW_RETURN_IF_ERROR(FindSession(request.session_handle(), request.create_worker_session_called(),
                                 &step->session));
  TW_RETURN_IF_ERROR(step->session->graphs()->Lookup(request.graph_handle(), &step->graph));
  const RegisteredGraph& graph = *step->graph;
  TW_RETURN_IF_ERROR(CheckRunGraphKeys(input, graph, /*partial=*/false));

  step->rendezvous = rendezvous_mgr_.FindOrCreate(request.step_id());
  step->rendezvous->SetWorkerCache(step->session->worker_cache().get());
  for (const auto& [key, value] : input.sends) {
    TW_RETURN_IF_ERROR(step->rendezvous->Send(key, value, /*is_dead=*/false));
  }

  // The caller (the master, when another partition of the step failed)
  // cancels the whole step: receivers wake, no kernel starts any more.
  if (call != nullptr)
    call->SetCancelCallback([step] { step->Cancel(errors::Cancelled("RunGraph was cancelled")); });
  Executor::Args args;
  args.step_id = request.step_id();
  args.rendezvous = step->rendezvous.get();
  args.cancellation_manager = &step->cancellation;
  args.runner = &runner_;
  args.cancelled = &step->cancelled;
  constexpr int64_t kLongestTimeoutMs = int64_t{100} * 366 * 24 * 3600 * 1000;  // no overflow
  if (call != nullptr && call->GetTimeout() > 0 && call->GetTimeout() <= kLongestTimeoutMs) {
    // The caller's own timer cannot cancel kernels that run on its thread
    // (caller_waits): the executor stops at the deadline by itself.
    args.deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(call->GetTimeout());
  }
  // As TensorFlow's worker: a cost model needs the step stats too.
  if (request.exec_opts().record_timeline() || request.exec_opts().record_costs()) {
    step->stats = std::make_unique<StepStatsCollector>();
    args.stats_collector = step->stats.get();
  }
  const bool record_partition_graphs = request.exec_opts().record_partition_graphs();
  std::vector<std::string> recv_keys(request.recv_key().begin(), request.recv_key().end());
  graph.RunAsync(args, runner_, /*run_last_inline=*/input.caller_waits,
                 [call, step, output, recv_keys = std::move(recv_keys), record_partition_graphs,
                  done = std::move(*done)](const Status& run_status) {
                   if (call != nullptr) call->ClearCancelCallback();
                   if (step->stats != nullptr) {
                     step->stats->Finalize(output->response.mutable_step_stats());
                   }
                   if (record_partition_graphs) {
                     for (const GraphDef& partition : step->graph->partition_graphs()) {
                       *output->response.add_partition_graph() = partition;
                     }
                   }
                   Status status = run_status;
                   if (!status.ok()) {
                     // Peers waiting for this step's values wake with the error.
                     step->rendezvous->StartAbort(status);
                   }
                   output->recvs.clear();
                   for (size_t i = 0; status.ok() && i < recv_keys.size(); ++i) {
                     Tensor value;
                     bool is_dead = false;
                     if (!step->rendezvous->TryRecvLocal(recv_keys[i], &value, &is_dead)) {
                       status =
                           errors::Internal("The step finished without sending ", recv_keys[i]);
                       break;
                     }
                     if (is_dead) {  // TensorFlow's words for a dead fetch
                       status = errors::InvalidArgument("The tensor returned for ", recv_keys[i],
                                                        " was not valid.");
                       break;
                     }
                     output->recvs.emplace_back(recv_keys[i], std::move(value));
                   }
                   if (!status.ok()) output->recvs.clear();
                   done(status);
                 });
  return Status::OK();
}

void Worker::CleanupGraphAsync(CallOptions* call, const CleanupGraphRequest* request,
                               CleanupGraphResponse* response, StatusCallback done) {
  // A partial run the master gave up on (failed, cancelled, closed) ends here.
  const int64_t step_id = request->step_id();
  CancelPartialRuns([step_id](int64_t id, const PartialRun&) { return id == step_id; },
                    errors::Cancelled("Partial run step ", step_id, " was cleaned up"));
  rendezvous_mgr_.Cleanup(step_id);
  done(Status::OK());
}

void Worker::CleanupAllAsync(CallOptions* call, const CleanupAllRequest* request,
                             CleanupAllResponse* response, StatusCallback done) {
  // The containers named (the default one when none) of the shared
  // devices; sessions with isolated state keep theirs until they are
  // deleted, as in TensorFlow.
  const std::vector<std::string> containers(request->container().begin(),
                                            request->container().end());
  for (Device* device : device_ptrs_) device->ClearContainers(containers);
  done(Status::OK());
}

void Worker::RecvTensorAsync(CallOptions* call, const RecvTensorRequest* request,
                             RecvTensorResponse* response, StatusCallback done) {
  RecvTensorValueAsync(call, *request,
                       [response, done = std::move(done)](const Status& status, const Tensor& value,
                                                          bool is_dead, int64_t send_start_micros) {
                         if (status.ok()) {
                           (is_dead ? DeadTensorPlaceholder() : value)
                               .AsProtoTensorContent(response->mutable_tensor());
                           response->set_is_dead(is_dead);
                           response->set_send_start_micros(send_start_micros);
                         }
                         done(status);
                       });
}

void Worker::RecvTensorValueAsync(CallOptions* call, const RecvTensorRequest& request,
                                  RecvTensorValueCallback done) {
  const std::string& key = request.rendezvous_key();
  Rendezvous::ParsedKey parsed;
  Status status = Rendezvous::ParseKey(key, &parsed);
  if (!status.ok()) {
    done(status, Tensor(), false, 0);
    return;
  }
  Device* device = FindDevice(parsed.send_device);
  if (device == nullptr) {
    done(errors::InvalidArgument("RecvTensor of ", key, ": the sending device ", parsed.send_device,
                                 " is not a device of ", task_name_),
         Tensor(), false, 0);
    return;
  }
  if (device->incarnation() != parsed.send_device_incarnation) {
    done(errors::Aborted(
             "RecvTensor expects a different device incarnation: ", parsed.send_device_incarnation,
             " vs. ", device->incarnation(), ". Your worker job (\"", task_name_,
             "\") was probably restarted. Check your worker job for the reason why "
             "it was restarted."),
         Tensor(), false, 0);
    return;
  }
  std::shared_ptr<RemoteRendezvous> rendezvous = rendezvous_mgr_.FindOrCreate(request.step_id());
  // A cancelled call (deadline, caller gone, server stopping) stops waiting;
  // the step itself goes on. The flag covers a cancellation that comes
  // before the receiver is in place.
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  const Status cancelled_status = errors::Cancelled("RecvTensor of ", key, " was cancelled");
  if (call != nullptr)
    call->SetCancelCallback([rendezvous, key, cancelled, cancelled_status] {
      cancelled->store(true);
      rendezvous->CancelLocalRecv(key, cancelled_status);
    });
  rendezvous->RecvLocalAsync(
      key, [call, done = std::move(done)](const Status& status, const Tensor& value, bool is_dead) {
        if (call != nullptr) call->ClearCancelCallback();
        const int64_t now_micros = std::chrono::duration_cast<std::chrono::microseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count();
        done(status, value, is_dead, now_micros);
      });
  // `call` may be gone by now; only shared state is touched.
  if (cancelled->load()) rendezvous->CancelLocalRecv(key, cancelled_status);
}

}  // namespace tensorweave
