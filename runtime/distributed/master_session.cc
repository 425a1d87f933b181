#include "runtime/distributed/master_session.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <random>

#include "runtime/common_runtime/graph_optimizer.h"
#include "runtime/common_runtime/partition.h"
#include "runtime/common_runtime/placer.h"
#include "runtime/common_runtime/run_signature.h"
#include "runtime/common_runtime/subgraph.h"
#include "runtime/distributed/cluster_devices.h"
#include "runtime/distributed/master_session_internal.h"
#include "runtime/distributed/parallel_calls.h"
#include "runtime/framework/tensor.h"
#include "runtime/graph/algorithm.h"
#include "runtime/graph/graph_def_import.h"

namespace tensorweave {

using master_session_internal::CanonicalTensorName;
using master_session_internal::kClosedMessage;
using master_session_internal::kLongestTimeoutMs;

namespace {

// The job and task index of "/job:J/replica:R/task:T".
bool ParseTaskName(const std::string& task, std::string* job, int* index) {
  DeviceSpec spec;
  if (!ParseDeviceSpec(task, &spec).ok() || spec.job.empty() || spec.task < 0) return false;
  *job = spec.job;
  *index = spec.task;
  return true;
}

}  // namespace

uint64_t NewRandomId() {
  static std::mutex mu;
  static std::mt19937_64 generator(std::random_device{}());
  std::lock_guard<std::mutex> lock(mu);
  uint64_t id = 0;
  while (id == 0) id = generator();
  return id;
}

// --- Lifecycle -------------------------------------------------------------

Status MasterSession::New(MasterSessionOptions options, std::shared_ptr<MasterSession>* session) {
  const proto::DeviceAttributes* client = nullptr;
  for (const proto::DeviceAttributes& device : options.devices) {
    if (TaskOfDevice(device.name()) != options.master_task) continue;
    // TensorFlow's client device is the task's CPU:0; any first device will do.
    const bool cpu0 = device.name() == options.master_task + "/device:CPU:0";
    if (client == nullptr || cpu0) client = &device;
    if (cpu0) break;
  }
  if (client == nullptr) {
    return errors::InvalidArgument("The master's task ", options.master_task,
                                   " offers no device to act as the client device");
  }
  const proto::DeviceAttributes client_device = *client;
  session->reset(new MasterSession(std::move(options), client_device));
  return Status::OK();
}

MasterSession::MasterSession(MasterSessionOptions options, const proto::DeviceAttributes& client)
    : options_(std::move(options)),
      client_device_(client),
      operation_timeout_ms_(options_.config.operation_timeout_in_ms() > kLongestTimeoutMs
                                ? 0
                                : options_.config.operation_timeout_in_ms()),
      graph_(std::make_unique<Graph>(OpRegistry::Global())),
      refiner_(std::make_unique<ShapeRefiner>(*graph_)) {}

MasterSession::~MasterSession() {
  Close();
  // A Close made earlier may have returned while the last step's cleanups
  // were still out; their callbacks use this session.
  std::unique_lock<std::mutex> lock(steps_mu_);
  steps_cv_.wait(lock, [this] { return steps_.empty() && pending_cleanups_ == 0; });
}

int64_t MasterSession::graph_version() const {
  std::lock_guard<std::mutex> lock(graph_mu_);
  return graph_version_;
}

int64_t MasterSession::ControlCallTimeoutMs() const {
  return operation_timeout_ms_ > 0 ? operation_timeout_ms_ : kDefaultControlCallTimeoutMs;
}

Status MasterSession::Create(const GraphDef& graph) {
  std::lock_guard<std::mutex> lock(graph_mu_);
  ImportGraphDefOptions import_options;
  return ImportGraphDef(import_options, graph, graph_.get(), refiner_.get());
}

Status MasterSession::Extend(const ExtendSessionRequest& request, ExtendSessionResponse* response) {
  {
    std::lock_guard<std::mutex> lock(steps_mu_);
    if (closed_) return errors::Cancelled(kClosedMessage);
  }
  std::lock_guard<std::mutex> lock(graph_mu_);
  if (request.current_graph_version() != graph_version_) {
    return errors::Aborted("Current version is ", graph_version_, " but caller expected ",
                           request.current_graph_version(), ".");
  }
  for (const NodeDef& node : request.graph_def().node()) {
    if (graph_->FindNode(node.name()) != nullptr) {
      return errors::InvalidArgument("GraphDef argument to Extend includes node '", node.name(),
                                     "', which was created by a previous call to Create or "
                                     "Extend in this session.");
    }
  }
  ImportGraphDefOptions import_options;
  import_options.allow_inputs_to_existing_nodes = true;
  TW_RETURN_IF_ERROR(
      ImportGraphDef(import_options, request.graph_def(), graph_.get(), refiner_.get()));
  response->set_new_graph_version(++graph_version_);
  return Status::OK();
}

Status MasterSession::Close() {
  {
    std::unique_lock<std::mutex> lock(steps_mu_);
    if (closed_) return Status::OK();
    closed_ = true;
    for (Step* step : steps_) {
      step->cancelled_by_close = true;
      step->CancelAll();
    }
    steps_cv_.wait(lock, [this] { return steps_.empty(); });
  }
  // Partial runs still open would wait on their workers for feeds that no
  // call will send any more.
  std::vector<std::string> open;
  {
    std::lock_guard<std::mutex> lock(partial_runs_mu_);
    for (const auto& entry : partial_runs_) open.push_back(entry.first);
  }
  for (const std::string& handle : open) EndPartialRun(handle);
  {
    std::unique_lock<std::mutex> lock(steps_mu_);
    steps_cv_.wait(lock, [this] { return pending_cleanups_ == 0; });
  }
  std::lock_guard<std::mutex> lock(graph_mu_);
  const int64_t timeout_ms = ControlCallTimeoutMs();
  // Deregistering and deleting the worker sessions are best effort: a
  // worker that is gone has nothing left to free.
  std::vector<const ClientGraph::Partition*> registered;
  for (const auto& graph : built_) {
    for (const ClientGraph::Partition& partition : graph->partitions) {
      registered.push_back(&partition);
    }
  }
  std::vector<DeregisterGraphRequest> deregister(registered.size());
  std::vector<DeregisterGraphResponse> deregistered(registered.size());
  CallAll(static_cast<int>(registered.size()), timeout_ms,
          [&](int i, CallOptions* call, WorkerInterface::StatusCallback done) {
            deregister[i].set_session_handle(options_.handle);
            deregister[i].set_create_worker_session_called(true);
            deregister[i].set_graph_handle(registered[i]->graph_handle);
            registered[i]->worker->DeregisterGraphAsync(call, &deregister[i], &deregistered[i],
                                                        std::move(done));
          });
  const std::vector<std::string> tasks(worker_sessions_.begin(), worker_sessions_.end());
  std::vector<DeleteWorkerSessionRequest> requests(tasks.size());
  std::vector<DeleteWorkerSessionResponse> responses(tasks.size());
  CallAll(static_cast<int>(tasks.size()), timeout_ms,
          [&](int i, CallOptions* call, WorkerInterface::StatusCallback done) {
            requests[i].set_session_handle(options_.handle);
            WorkerInterface* worker = options_.worker_cache->GetOrCreateWorker(tasks[i]);
            if (worker == nullptr) return done(Status::OK());
            worker->DeleteWorkerSessionAsync(call, &requests[i], &responses[i], std::move(done));
          });
  built_.clear();
  worker_sessions_.clear();
  {
    std::unique_lock<std::shared_mutex> cache_lock(cache_mu_);
    cache_.clear();
  }
  std::unique_lock<std::shared_mutex> callables_lock(callables_mu_);
  callables_.clear();
  return Status::OK();
}

void MasterSession::ListDevices(ListDevicesResponse* response) const {
  for (const proto::DeviceAttributes& device : options_.devices) {
    const bool local = TaskOfDevice(device.name()) == options_.master_task;
    *(local ? response->add_local_device() : response->add_remote_device()) = device;
  }
}

// --- Steps -------------------------------------------------------------------

Status MasterSession::Run(const RunStepRequest& request, const NamedTensors& feeds,
                          RunStepResponse* response, NamedTensors* fetched) {
  if (!request.partial_run_handle().empty()) return RunPartial(request, feeds, response, fetched);
  if (request.feed_size() > 0) {
    return errors::InvalidArgument("RunStep takes its fed values as tensors, not in request.feed");
  }
  std::vector<std::string> names, fetches(request.fetch().begin(), request.fetch().end()),
      targets(request.target().begin(), request.target().end());
  std::vector<const Tensor*> values;
  for (const auto& [name, value] : feeds) {
    names.push_back(name);
    values.push_back(&value);
  }
  std::shared_ptr<const CacheEntry> entry;
  TW_RETURN_IF_ERROR(Prepare(names, fetches, targets, &entry));
  const int64_t timeout_ms = request.options().timeout_in_ms() > 0
                                 ? request.options().timeout_in_ms()
                                 : operation_timeout_ms_;
  std::vector<Tensor> values_fetched;
  TW_RETURN_IF_ERROR(RunStepOf(*entry, values, timeout_ms, request.options(),
                               response->mutable_metadata(), &values_fetched));
  fetched->clear();
  fetched->reserve(values_fetched.size());
  for (size_t i = 0; i < values_fetched.size(); ++i) {
    fetched->emplace_back(fetches[i], std::move(values_fetched[i]));
  }
  return Status::OK();
}

Status MasterSession::RunStepOf(const CacheEntry& entry, const std::vector<const Tensor*>& feeds,
                                int64_t timeout_ms, const RunOptions& run_options,
                                RunMetadata* metadata, std::vector<Tensor>* fetched) {
  const ClientGraph& graph = *entry.graph;
  if (timeout_ms > kLongestTimeoutMs) timeout_ms = 0;
  Step step(graph.partitions.size());
  const int64_t step_id = static_cast<int64_t>(NewRandomId() >> 1);  // positive, as TF's
  for (size_t p = 0; p < graph.partitions.size(); ++p) {
    RunGraphRequest& call = step.calls[p].input.request;
    call.set_session_handle(options_.handle);
    call.set_create_worker_session_called(true);
    call.set_graph_handle(graph.partitions[p].graph_handle);
    call.set_step_id(step_id);
    if (timeout_ms > 0) step.calls[p].options.SetTimeout(timeout_ms);
  }
  // Only a traced step touches exec_opts: an untraced one asks no worker to
  // record anything.
  const bool record_timeline = run_options.trace_level() >= RunOptions::SOFTWARE_TRACE;
  const bool record_partition_graphs = run_options.output_partition_graphs();
  if (record_timeline || record_partition_graphs) {
    for (Step::Call& call : step.calls) {
      ExecutorOpts* exec_opts = call.input.request.mutable_exec_opts();
      exec_opts->set_record_timeline(record_timeline);
      exec_opts->set_record_partition_graphs(record_partition_graphs);
    }
  }
  // Check each fed value as DirectSession does, so a bad feed fails here
  // with the same message instead of deep inside a worker.
  for (size_t i = 0; i < feeds.size(); ++i) {
    const int feed = entry.feeds[i];
    const std::string& name = entry.feed_names[i];
    const Tensor& value = *feeds[i];
    if (value.dtype() != graph.feed_dtypes[feed]) {
      return errors::InvalidArgument("Cannot feed a ", DataTypeString(value.dtype()),
                                     " value for tensor '", name, "', which is ",
                                     DataTypeString(graph.feed_dtypes[feed]));
    }
    const PartialTensorShape& shape = graph.feed_shapes[feed];
    if (!shape.unknown_rank() && !shape.IsCompatibleWith(value.shape())) {
      return errors::InvalidArgument("Cannot feed a value of shape ", value.shape().DebugString(),
                                     " for tensor '", name, "', which has shape ",
                                     shape.DebugString());
    }
    const int partition = graph.feed_partition[feed];
    if (partition < 0) continue;
    step.calls[partition].input.sends.emplace_back(graph.feed_keys[feed], value);
  }
  for (size_t f = 0; f < graph.fetch_keys.size(); ++f) {
    step.calls[graph.fetch_partition[f]].input.request.add_recv_key(graph.fetch_keys[f]);
  }

  Status status = RunCalls(graph, graph.run_order, timeout_ms, &step);
  // Cleanup counts as in flight before the step stops being, so Close never
  // sees a moment with neither.
  CleanupStep(graph, step_id);
  UnregisterStep(&step);
  TW_RETURN_IF_ERROR(status);

  std::vector<std::map<std::string, Tensor*>> received(step.calls.size());
  for (size_t p = 0; p < step.calls.size(); ++p) {
    for (auto& [key, value] : step.calls[p].output.recvs) received[p][key] = &value;
  }
  fetched->clear();
  for (int fetch : entry.fetches) {
    auto it = received[graph.fetch_partition[fetch]].find(graph.fetch_keys[fetch]);
    if (it == received[graph.fetch_partition[fetch]].end()) {
      return errors::Internal("Worker ", graph.partitions[graph.fetch_partition[fetch]].task,
                              " did not return fetched tensor ", graph.fetch_keys[fetch]);
    }
    fetched->push_back(*it->second);  // shares the buffer
  }
  if (record_timeline || record_partition_graphs) CollectMetadata(&step, metadata);
  return Status::OK();
}

Status MasterSession::RunCalls(const ClientGraph& graph, const std::vector<size_t>& partitions,
                               int64_t timeout_ms, Step* step) {
  if (!RegisterStep(step)) return errors::Cancelled(kClosedMessage);
  step->pending = static_cast<int>(partitions.size());
  Status first_error;  // the first failure to arrive: the others follow from it
  for (size_t p : partitions) {
    Step::Call& call = step->calls[p];
    call.input.caller_waits = graph.partitions[p].caller_waits;
    graph.partitions[p].worker->RunGraphAsync(&call.options, &call.input, &call.output,
                                              [step, &call, &first_error](const Status& status) {
                                                std::lock_guard<std::mutex> lock(step->mu);
                                                call.status = status;
                                                if (!status.ok() && !step->failed) {
                                                  step->failed = true;
                                                  first_error = status;
                                                }
                                                --step->pending;
                                                step->changed.notify_all();
                                              });
  }
  bool timed_out = false;
  {
    std::unique_lock<std::mutex> lock(step->mu);
    const auto finished_or_failed = [step] { return step->pending == 0 || step->failed; };
    if (timeout_ms > 0) {
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
      timed_out = !step->changed.wait_until(lock, deadline, finished_or_failed);
    } else {
      step->changed.wait(lock, finished_or_failed);
    }
    if (step->pending > 0) {
      // One partition failed or time is up: the others cannot finish (they
      // wait for tensors that will not come), so end their calls.
      lock.unlock();
      step->CancelAll();
      lock.lock();
      step->changed.wait(lock, [step] { return step->pending == 0; });
    }
  }
  Status status = first_error;
  if (timed_out || (timeout_ms > 0 && status.code() == Code::DEADLINE_EXCEEDED)) {
    status = errors::DeadlineExceeded("Timed out after ", timeout_ms, " ms");
  } else if (step->cancelled_by_close) {
    status = errors::Cancelled("Step was cancelled: ", kClosedMessage);
  } else if (status.code() == Code::CANCELLED) {
    // A worker may report the cancellation of its peers' failure before the
    // failure itself reached us: prefer any other error.
    for (const Step::Call& call : step->calls) {
      if (!call.status.ok() && call.status.code() != Code::CANCELLED) {
        status = call.status;
        break;
      }
    }
  }
  return status;
}

void MasterSession::CollectMetadata(Step* step, RunMetadata* metadata) {
  // Each worker reported its own devices; the step's stats are all of them.
  for (Step::Call& call : step->calls) {
    RunGraphResponse& response = call.output.response;
    for (DeviceStepStats& device : *response.mutable_step_stats()->mutable_dev_stats()) {
      metadata->mutable_step_stats()->add_dev_stats()->Swap(&device);
    }
    for (GraphDef& partition : *response.mutable_partition_graph()) {
      metadata->add_partition_graphs()->Swap(&partition);
    }
  }
}

void MasterSession::CleanupStep(const ClientGraph& graph, int64_t step_id) {
  // One CleanupGraph per worker, however many partitions it holds.
  std::vector<WorkerInterface*> workers;
  for (const ClientGraph::Partition& partition : graph.partitions) {
    if (std::find(workers.begin(), workers.end(), partition.worker) == workers.end()) {
      workers.push_back(partition.worker);
    }
  }
  // As TensorFlow's master, the step's caller does not wait for its
  // cleanup (a round trip per step); Close waits for what is still out.
  struct Cleanup {
    CallOptions call;
    CleanupGraphRequest request;
    CleanupGraphResponse response;
  };
  {
    std::lock_guard<std::mutex> lock(steps_mu_);
    pending_cleanups_ += static_cast<int>(workers.size());
  }
  for (WorkerInterface* worker : workers) {
    auto* cleanup = new Cleanup;
    cleanup->call.SetTimeout(ControlCallTimeoutMs());
    cleanup->request.set_step_id(step_id);
    worker->CleanupGraphAsync(&cleanup->call, &cleanup->request, &cleanup->response,
                              [this, cleanup](const Status&) {
                                delete cleanup;
                                std::lock_guard<std::mutex> lock(steps_mu_);
                                if (--pending_cleanups_ == 0) steps_cv_.notify_all();
                              });
  }
}

bool MasterSession::RegisterStep(Step* step) {
  std::lock_guard<std::mutex> lock(steps_mu_);
  if (closed_) return false;
  steps_.insert(step);
  return true;
}

void MasterSession::UnregisterStep(Step* step) {
  std::lock_guard<std::mutex> lock(steps_mu_);
  steps_.erase(step);
  if (steps_.empty()) steps_cv_.notify_all();
}

// --- Callables ---------------------------------------------------------------

Status MasterSession::MakeCallable(const MakeCallableRequest& request,
                                   MakeCallableResponse* response) {
  const CallableOptions& options = request.options();
  if (options.tensor_connection_size() > 0) {
    return errors::Unimplemented("Callables with tensor connections are not supported");
  }
  auto callable = std::make_shared<Callable>();
  TW_RETURN_IF_ERROR(Prepare({options.feed().begin(), options.feed().end()},
                             {options.fetch().begin(), options.fetch().end()},
                             {options.target().begin(), options.target().end()}, &callable->entry));
  callable->run_options = options.run_options();
  std::unique_lock<std::shared_mutex> lock(callables_mu_);
  const int64_t handle = next_callable_handle_++;
  callables_[handle] = std::move(callable);
  response->set_handle(handle);
  return Status::OK();
}

Status MasterSession::FindCallable(int64_t handle, std::shared_ptr<Callable>* callable) const {
  std::shared_lock<std::shared_mutex> lock(callables_mu_);
  auto it = callables_.find(handle);
  if (it != callables_.end()) {
    *callable = it->second;
    return Status::OK();
  }
  if (handle < 0 || handle >= next_callable_handle_) {
    return errors::InvalidArgument("No such callable handle: ", handle);
  }
  return errors::InvalidArgument("Attempted to run callable after handle was released: ", handle);
}

Status MasterSession::RunCallable(const RunCallableRequest& request,
                                  const std::vector<Tensor>& feeds, RunCallableResponse* response,
                                  std::vector<Tensor>* fetched) {
  std::shared_ptr<Callable> callable;
  TW_RETURN_IF_ERROR(FindCallable(request.handle(), &callable));
  const CacheEntry& entry = *callable->entry;
  if (request.feed_size() > 0) {
    return errors::InvalidArgument(
        "RunCallable takes its fed values as tensors, not in request.feed");
  }
  if (feeds.size() != entry.feeds.size()) {
    return errors::InvalidArgument("Callable ", request.handle(), " takes ", entry.feeds.size(),
                                   " feed values, but got ", feeds.size());
  }
  std::vector<const Tensor*> values;
  for (const Tensor& value : feeds) values.push_back(&value);
  const int64_t timeout_ms = callable->run_options.timeout_in_ms() > 0
                                 ? callable->run_options.timeout_in_ms()
                                 : operation_timeout_ms_;
  return RunStepOf(entry, values, timeout_ms, callable->run_options, response->mutable_metadata(),
                   fetched);
}

Status MasterSession::ReleaseCallable(const ReleaseCallableRequest& request) {
  std::unique_lock<std::shared_mutex> lock(callables_mu_);
  if (request.handle() < 0 || request.handle() >= next_callable_handle_) {
    return errors::InvalidArgument("No such callable handle: ", request.handle());
  }
  callables_.erase(request.handle());
  return Status::OK();
}

// --- Building and registering a signature -----------------------------------

std::shared_ptr<const MasterSession::CacheEntry> MasterSession::FindEntry(
    const std::string& key) const {
  std::shared_lock<std::shared_mutex> lock(cache_mu_);
  auto it = cache_.find(key);
  return it == cache_.end() ? nullptr : it->second;
}

Status MasterSession::Prepare(const std::vector<std::string>& feeds,
                              const std::vector<std::string>& fetches,
                              const std::vector<std::string>& targets,
                              std::shared_ptr<const CacheEntry>* entry) {
  const RunSignature spelled{feeds, fetches, targets};
  std::string key;
  spelled.Key(&key);
  if ((*entry = FindEntry(key)) != nullptr) return Status::OK();

  // Validates the names (a feed given twice, fed and fetched...).
  FeedFetchSignature parsed;
  TW_RETURN_IF_ERROR(ParseSignature(feeds, fetches, targets, &parsed));
  // Every spelling of a signature ("y" or "y:0", any order, repeats) shares
  // one graph: it is built for the canonical names, sorted.
  RunSignature canonical;
  for (const TensorId& id : parsed.feeds) canonical.feeds.push_back(TensorIdString(id));
  for (const TensorId& id : parsed.fetches) canonical.fetches.push_back(TensorIdString(id));
  canonical.targets = parsed.targets;
  const SortedRunSignature sorted(canonical);
  std::string sorted_key;
  sorted.sorted().Key(&sorted_key);

  std::shared_ptr<const ClientGraph> graph;
  {
    std::lock_guard<std::mutex> lock(graph_mu_);
    {
      std::lock_guard<std::mutex> steps_lock(steps_mu_);
      if (closed_) return errors::Cancelled(kClosedMessage);
    }
    // Another thread may have built this spelling, or another spelling of
    // the signature, while this one waited.
    if ((*entry = FindEntry(key)) != nullptr) return Status::OK();
    std::shared_ptr<const CacheEntry> as_sorted = FindEntry(sorted_key);
    if (as_sorted != nullptr) {
      graph = as_sorted->graph;
    } else {
      std::shared_ptr<ClientGraph> built;
      TW_RETURN_IF_ERROR(
          Build(sorted.sorted().feeds, sorted.sorted().fetches, sorted.sorted().targets, &built));
      built_.push_back(built);
      signatures_built_.fetch_add(1);
      graph = built;
    }
  }

  // Both spellings map names onto the graph's numbering by name.
  auto make_entry = [&graph](const RunSignature& signature) {
    auto made = std::make_shared<CacheEntry>();
    made->graph = graph;
    made->feed_names = signature.feeds;
    for (const std::string& name : signature.feeds) {
      made->feeds.push_back(graph->feed_index.at(CanonicalTensorName(name)));
    }
    for (const std::string& name : signature.fetches) {
      made->fetches.push_back(graph->fetch_index.at(CanonicalTensorName(name)));
    }
    return made;
  };
  std::unique_lock<std::shared_mutex> lock(cache_mu_);
  cache_.emplace(sorted_key, make_entry(sorted.sorted()));
  *entry = cache_.emplace(key, make_entry(spelled)).first->second;
  return Status::OK();
}

Status MasterSession::Build(const std::vector<std::string>& feeds,
                            const std::vector<std::string>& fetches,
                            const std::vector<std::string>& targets,
                            std::shared_ptr<ClientGraph>* built) {
  FeedFetchSignature signature;
  TW_RETURN_IF_ERROR(ParseSignature(feeds, fetches, targets, &signature));
  Graph graph(graph_->op_registry());
  TW_RETURN_IF_ERROR(CopyGraph(*graph_, &graph));
  const SignatureEndpoints endpoints{client_device_.name(), client_device_.incarnation()};
  RewriteResult rewrite;
  TW_RETURN_IF_ERROR(RewriteForSignature(signature, endpoints, &graph, &rewrite));
  TW_RETURN_IF_ERROR(OptimizeSignatureGraph(options_.config, signature, &graph));

  // Placement needs only names: one nameplate Device per cluster device,
  // the client device first so nodes without a request land on its task.
  std::vector<std::unique_ptr<Device>> devices;
  std::map<std::string, uint64_t> incarnations;
  devices.push_back(std::make_unique<Device>(client_device_.name(), client_device_.device_type(),
                                             nullptr, client_device_.incarnation()));
  for (const proto::DeviceAttributes& device : options_.devices) {
    incarnations[device.name()] = device.incarnation();
    if (device.name() == client_device_.name()) continue;
    devices.push_back(std::make_unique<Device>(device.name(), device.device_type(), nullptr,
                                               device.incarnation()));
  }
  std::vector<Device*> device_list;
  for (const auto& device : devices) device_list.push_back(device.get());
  TW_RETURN_IF_ERROR(
      PlaceSignatureGraph(device_list, options_.config, *graph_, &stateful_placements_, &graph));

  PartitionOptions partition_options;
  partition_options.node_to_location = [](const Node& node) {
    return TaskOfDevice(node.assigned_device_name());
  };
  partition_options.device_incarnation = [&incarnations](const std::string& device) {
    auto found = incarnations.find(device);  // placement only picks cluster devices
    return found == incarnations.end() ? uint64_t{1} : found->second;
  };
  std::map<std::string, std::unique_ptr<Graph>> partitions;
  TW_RETURN_IF_ERROR(PartitionGraph(partition_options, graph, &partitions));

  auto result = std::make_shared<ClientGraph>();
  for (size_t i = 0; i < signature.feeds.size(); ++i) {
    result->feed_index[TensorIdString(signature.feeds[i])] = static_cast<int>(i);
    result->feed_keys.push_back(ClientTerminatedKey(endpoints, signature.feeds[i]));
    result->feed_partition.push_back(-1);
  }
  result->feed_dtypes = rewrite.feed_dtypes;
  result->feed_shapes = rewrite.feed_shapes;
  for (size_t i = 0; i < signature.fetches.size(); ++i) {
    result->fetch_index[TensorIdString(signature.fetches[i])] = static_cast<int>(i);
    result->fetch_keys.push_back(ClientTerminatedKey(endpoints, signature.fetches[i]));
    result->fetch_partition.push_back(-1);
  }
  // Feeds and fetches live on the client device, so in its task's
  // partition; a feed whose _Recv was pruned away is not sent at all.
  const std::string client_task = TaskOfDevice(client_device_.name());
  int index = 0;
  for (const auto& [task, partition] : partitions) {
    if (task == client_task) {
      for (size_t i = 0; i < signature.feeds.size(); ++i) {
        const std::string name =
            StrCat("_recv_", signature.feeds[i].node, "_", signature.feeds[i].index);
        if (partition->FindNode(name) != nullptr) result->feed_partition[i] = index;
      }
      for (size_t i = 0; i < signature.fetches.size(); ++i) result->fetch_partition[i] = index;
    }
    ++index;
  }
  if (!signature.fetches.empty() && result->fetch_partition[0] < 0) {
    return errors::Internal("No partition holds the fetches on ", client_task);
  }
  TW_RETURN_IF_ERROR(Register(result.get(), &partitions));
  for (ClientGraph::Partition& partition : result->partitions) {
    partition.caller_waits = partition.task == client_task;
  }
  for (bool last : {false, true}) {
    for (size_t p = 0; p < result->partitions.size(); ++p) {
      if (result->partitions[p].caller_waits == last) result->run_order.push_back(p);
    }
  }
  *built = std::move(result);
  return Status::OK();
}

Status MasterSession::EnsureWorkerSession(const std::string& task, WorkerInterface* worker) {
  if (worker_sessions_.count(task) != 0) return Status::OK();
  CreateWorkerSessionRequest request;
  request.set_session_handle(options_.handle);
  request.set_isolate_session_state(options_.config.isolate_session_state());
  request.set_master_task(options_.master_task);
  request.set_master_incarnation(options_.master_incarnation);
  ServerDef* server_def = request.mutable_server_def();
  *server_def->mutable_cluster() = options_.cluster;
  int task_index = 0;
  if (!ParseTaskName(task, server_def->mutable_job_name(), &task_index)) {
    return errors::Internal("Malformed task name ", task);
  }
  server_def->set_task_index(task_index);
  server_def->set_protocol("grpc");
  *server_def->mutable_default_session_config() = options_.config;
  for (const proto::DeviceAttributes& device : options_.devices) {
    *request.add_cluster_device_attributes() = device;
  }
  CreateWorkerSessionResponse response;
  Status status = worker->CreateWorkerSession(request, &response, ControlCallTimeoutMs());
  if (!status.ok()) {
    return errors::Annotate(status, StrCat("CreateWorkerSession on ", task, " failed: "));
  }
  worker_sessions_.insert(task);
  return Status::OK();
}

Status MasterSession::Register(ClientGraph* graph,
                               std::map<std::string, std::unique_ptr<Graph>>* partitions) {
  std::vector<RegisterGraphRequest> requests;
  for (const auto& [task, partition] : *partitions) {
    ClientGraph::Partition registered;
    registered.task = task;
    registered.worker = options_.worker_cache->GetOrCreateWorker(task);
    if (registered.worker == nullptr) {
      return errors::Internal("Placement chose task ", task, ", which the cluster lacks");
    }
    TW_RETURN_IF_ERROR(EnsureWorkerSession(task, registered.worker));
    partition->ToGraphDef(&registered.graph_def);
    // Each worker gets the session's whole function library with its
    // partition (the caller holds graph_mu_), as TensorFlow's master does.
    if (!graph_->flib_def().empty()) {
      *registered.graph_def.mutable_library() = graph_->flib_def().ToProto();
    }
    graph->partitions.push_back(std::move(registered));
  }
  std::vector<RegisterGraphResponse> responses(graph->partitions.size());
  requests.resize(graph->partitions.size());
  const std::vector<Status> statuses =
      CallAll(static_cast<int>(requests.size()), ControlCallTimeoutMs(),
              [&](int i, CallOptions* call, WorkerInterface::StatusCallback done) {
                RegisterGraphRequest& request = requests[i];
                request.set_session_handle(options_.handle);
                request.set_create_worker_session_called(true);
                *request.mutable_graph_def() = graph->partitions[i].graph_def;
                *request.mutable_config_proto() = options_.config;
                graph->partitions[i].worker->RegisterGraphAsync(call, &request, &responses[i],
                                                                std::move(done));
              });
  Status failed;
  for (size_t i = 0; i < statuses.size(); ++i) {
    if (statuses[i].ok()) {
      graph->partitions[i].graph_handle = responses[i].graph_handle();
    } else if (failed.ok()) {
      failed = errors::Annotate(statuses[i],
                                StrCat("RegisterGraph on ", graph->partitions[i].task, ": "));
    }
  }
  if (failed.ok()) return Status::OK();
  // Nothing of a failed registration may stay behind on the workers.
  std::vector<DeregisterGraphRequest> deregister(graph->partitions.size());
  std::vector<DeregisterGraphResponse> deregistered(graph->partitions.size());
  CallAll(static_cast<int>(deregister.size()), ControlCallTimeoutMs(),
          [&](int i, CallOptions* call, WorkerInterface::StatusCallback done) {
            if (graph->partitions[i].graph_handle.empty()) return done(Status::OK());
            deregister[i].set_session_handle(options_.handle);
            deregister[i].set_create_worker_session_called(true);
            deregister[i].set_graph_handle(graph->partitions[i].graph_handle);
            graph->partitions[i].worker->DeregisterGraphAsync(call, &deregister[i],
                                                              &deregistered[i], std::move(done));
          });
  return failed;
}

}  // namespace tensorweave
