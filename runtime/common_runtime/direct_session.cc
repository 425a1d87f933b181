#include "runtime/common_runtime/direct_session.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <optional>
#include <set>

#include "runtime/common_runtime/direct_session_internal.h"
#include "runtime/common_runtime/function_runtime.h"
#include "runtime/common_runtime/graph_optimizer.h"
#include "runtime/common_runtime/local_devices.h"
#include "runtime/common_runtime/partition.h"
#include "runtime/common_runtime/placer.h"
#include "runtime/common_runtime/rendezvous_impl.h"
#include "runtime/common_runtime/session_factory.h"
#include "runtime/common_runtime/step_stats_collector.h"
#include "runtime/common_runtime/subgraph.h"
#include "runtime/common_runtime/thread_pools.h"
#include "runtime/graph/algorithm.h"
#include "runtime/graph/graph_def_import.h"

namespace tensorweave {

// One spelling of a signature: its compiled executors and how the call's
// feeds and fetches line up with their args and retvals.
struct DirectSession::CacheEntry {
  const ExecutorsAndKeys* executors = nullptr;
  SignatureBinding binding;
  std::vector<std::string> feed_names;  // in the spelling's order, for errors
};

struct DirectSession::Callable {
  Callable(const CacheEntry* entry, const RunOptions& options, bool compiled_by_make)
      : entry(entry), run_options(options), first_run_follows_compile(compiled_by_make) {}

  const CacheEntry* const entry;
  const RunOptions run_options;
  // Set while the signature was compiled by MakeCallable and not run yet:
  // that first run counts as the compiling run, not as a cache hit.
  std::atomic<bool> first_run_follows_compile;
};

namespace {

const char kClosedMessage[] = "Session has been closed.";

Status ClosedError() { return errors::Cancelled(kClosedMessage); }

// Feeds and fetches by position in the call, for _Arg and _Retval.
class RunCallFrame final : public CallFrameInterface {
 public:
  RunCallFrame(const std::vector<Tensor>& feeds, const std::vector<int>& arg_to_feed,
               Tensor* retvals, int num_retvals)
      : feeds_(feeds), arg_to_feed_(arg_to_feed), retvals_(retvals), num_retvals_(num_retvals) {}

  Status GetArg(int index, Tensor* value) const override {
    if (index < 0 || index >= static_cast<int>(arg_to_feed_.size())) {
      return errors::Internal("Feed index ", index, " out of range");
    }
    *value = feeds_[arg_to_feed_[index]];
    return Status::OK();
  }
  Status SetRetval(int index, const Tensor& value) override {
    if (index < 0 || index >= num_retvals_) {
      return errors::Internal("Fetch index ", index, " out of range");
    }
    retvals_[index] = value;
    return Status::OK();
  }

 private:
  const std::vector<Tensor>& feeds_;
  const std::vector<int>& arg_to_feed_;
  Tensor* retvals_;
  int num_retvals_;
};

// What a run reports: the stats `collector` gathered (when
// the run was traced) and the partition graphs (when asked for: null
// otherwise, so they are only serialized for runs that want them).
void FillRunMetadata(const std::map<std::string, GraphDef>* partition_graphs,
                     std::optional<StepStatsCollector>* collector, RunMetadata* run_metadata) {
  if (collector->has_value()) (*collector)->Finalize(run_metadata->mutable_step_stats());
  if (partition_graphs != nullptr) {
    for (const auto& [device, graph] : *partition_graphs) {
      *run_metadata->add_partition_graphs() = graph;
    }
  }
}

}  // namespace

void DirectSession::CancelStep(Step* step, const Status& status) {
  step->cancelled.store(true, std::memory_order_relaxed);
  // The rendezvous before the cancellation manager: waiting receivers then
  // report `status`, not a bare cancellation.
  step->rendezvous.StartAbort(status);
  step->cancellation.StartCancel();
}

// --- Lifecycle -----------------------------------------------------------

namespace {

// The sessions a factory Reset reaches: those the factory made that are
// not destroyed yet.
struct LiveSessions {
  std::mutex mu;
  std::set<DirectSession*> sessions;
};

LiveSessions& GetLiveSessions() {
  static LiveSessions* live = new LiveSessions();  // never destroyed
  return *live;
}

}  // namespace

DirectSession::DirectSession(const SessionOptions& options)
    : options_(options),
      operation_timeout_ms_(options.config.operation_timeout_in_ms()),
      graph_(std::make_unique<Graph>(OpRegistry::Global())),
      refiner_(std::make_unique<ShapeRefiner>(*graph_)) {}

Status DirectSession::Init() {
  int num_cpus = 1;
  TW_RETURN_IF_ERROR(LocalCpuDeviceCount(options_.config, &num_cpus));
  const Eigen::ThreadPoolDevice* intra_op = nullptr;
  TW_RETURN_IF_ERROR(IntraOpDevice(options_.config.intra_op_parallelism_threads(), &intra_op));
  TW_RETURN_IF_ERROR(InterOpRunner(options_.config.inter_op_parallelism_threads(), &runner_));
  for (int i = 0; i < num_cpus; ++i) {
    devices_.push_back(std::make_unique<Device>(LocalCpuDeviceName("localhost", 0, i), DEVICE_CPU,
                                                intra_op, NewDeviceIncarnation()));
    devices_by_name_[devices_.back()->name()] = devices_.back().get();
  }
  return Status::OK();
}

DirectSession::~DirectSession() {
  {
    LiveSessions& live = GetLiveSessions();
    std::lock_guard<std::mutex> lock(live.mu);
    live.sessions.erase(this);
  }
  Close();
  std::unique_lock<std::mutex> lock(steps_mu_);
  steps_cv_.wait(lock, [this] { return steps_ == nullptr; });
}

Status DirectSession::Create(const GraphDef& graph) {
  if (closed_.load(std::memory_order_acquire)) return ClosedError();
  std::lock_guard<std::mutex> lock(graph_mu_);
  if (graph_created_) {
    return errors::AlreadyExists("Session already has a graph; use Extend to add nodes to it");
  }
  return ExtendLocked(graph);
}

Status DirectSession::Extend(const GraphDef& graph) {
  if (closed_.load(std::memory_order_acquire)) return ClosedError();
  std::lock_guard<std::mutex> lock(graph_mu_);
  return ExtendLocked(graph);
}

Status DirectSession::ExtendLocked(const GraphDef& graph) {
  std::set<std::string> names;
  for (const NodeDef& node : graph.node()) {
    if (graph_->FindNode(node.name()) != nullptr) {
      return errors::InvalidArgument("Node '", node.name(),
                                     "' already exists in the session's graph; Extend only adds "
                                     "nodes with new names");
    }
    if (!names.insert(node.name()).second) {
      return errors::InvalidArgument("GraphDef has more than one node named '", node.name(), "'");
    }
  }
  ImportGraphDefOptions import_options;
  import_options.allow_inputs_to_existing_nodes = true;
  // ImportGraphDef leaves the graph and refiner unchanged on error.
  TW_RETURN_IF_ERROR(ImportGraphDef(import_options, graph, graph_.get(), refiner_.get()));
  graph_created_ = true;
  return Status::OK();
}

Status DirectSession::Close() {
  std::lock_guard<std::mutex> lock(steps_mu_);
  if (closed_.exchange(true, std::memory_order_acq_rel)) return Status::OK();
  // No step of this session will want the cached blocks again; the last
  // session to go frees them.
  buffer_cache_user_.reset();
  // Under steps_mu_ so no step can end (and free its state) meanwhile.
  const Status cancelled = errors::Cancelled("Step was cancelled: ", kClosedMessage);
  for (Step* step = steps_; step != nullptr; step = step->next) {
    step->cancelled_by_close = true;
    CancelStep(step, cancelled);
  }
  return Status::OK();
}

bool DirectSession::RegisterStep(Step* step) {
  std::lock_guard<std::mutex> lock(steps_mu_);
  if (closed_.load(std::memory_order_relaxed)) return false;
  step->next = steps_;
  if (steps_ != nullptr) steps_->previous = step;
  steps_ = step;
  return true;
}

bool DirectSession::UnregisterStep(Step* step) {
  std::lock_guard<std::mutex> lock(steps_mu_);
  if (step->previous != nullptr) step->previous->next = step->next;
  if (step->next != nullptr) step->next->previous = step->previous;
  if (steps_ == step) steps_ = step->next;
  if (steps_ == nullptr && closed_.load(std::memory_order_relaxed)) steps_cv_.notify_all();
  return step->cancelled_by_close;
}

Status DirectSession::ListDevices(std::vector<DeviceAttributes>* devices) {
  devices->clear();
  for (const auto& device : devices_) {
    devices->push_back(LocalCpuDeviceAttributes(device->name(), device->incarnation()));
  }
  return Status::OK();
}

SessionStats DirectSession::stats() const {
  SessionStats stats;
  stats.runs = runs_.load(std::memory_order_relaxed);
  stats.executors_built = executors_built_.load(std::memory_order_relaxed);
  stats.cache_hits = cache_hits_.load(std::memory_order_relaxed);
  return stats;
}

// --- Run -------------------------------------------------------------------

Status DirectSession::Run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                          const std::vector<std::string>& output_names,
                          const std::vector<std::string>& target_nodes,
                          std::vector<Tensor>* outputs) {
  return Run(RunOptions::default_instance(), inputs, output_names, target_nodes, outputs);
}

Status DirectSession::Run(const RunOptions& options,
                          const std::vector<std::pair<std::string, Tensor>>& inputs,
                          const std::vector<std::string>& output_names,
                          const std::vector<std::string>& target_nodes,
                          std::vector<Tensor>* outputs) {
  return Run(options, inputs, output_names, target_nodes, outputs, nullptr);
}

Status DirectSession::Run(const RunOptions& options,
                          const std::vector<std::pair<std::string, Tensor>>& inputs,
                          const std::vector<std::string>& output_names,
                          const std::vector<std::string>& target_nodes,
                          std::vector<Tensor>* outputs, RunMetadata* run_metadata) {
  outputs->clear();  // a failed run leaves no stale values behind
  if (output_names.empty() && target_nodes.empty()) {
    return errors::InvalidArgument("Run needs at least one fetch or target");
  }
  if (closed_.load(std::memory_order_acquire)) return ClosedError();
  // Reused per thread: after the first run the names and the key are copied
  // into storage that is already there.
  thread_local RunSignature signature;
  thread_local std::string key;
  signature.feeds.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) signature.feeds[i] = inputs[i].first;
  signature.fetches = output_names;
  signature.targets = target_nodes;
  signature.Key(&key);
  const CacheEntry* entry = nullptr;
  bool built_now = false;
  TW_RETURN_IF_ERROR(Prepare(signature, key, &entry, &built_now));
  std::vector<Tensor> feeds;
  feeds.reserve(inputs.size());
  for (const auto& input : inputs) feeds.push_back(input.second);
  return RunPrepared(options, *entry, feeds, !built_now, outputs, run_metadata);
}

// --- Callables -------------------------------------------------------------

namespace {

// The CallableOptions fields a DirectSession cannot honour, refused rather
// than ignored.
Status CheckCallableOptionsSupported(const CallableOptions& options) {
  if (options.tensor_connection_size() > 0) {
    return errors::Unimplemented(
        "CallableOptions.tensor_connection is not supported: feed or fetch the tensors instead");
  }
  if (!options.feed_devices().empty() || !options.fetch_devices().empty()) {
    return errors::Unimplemented(
        "CallableOptions.feed_devices and fetch_devices are not supported: values are fed and "
        "fetched in host memory");
  }
  return Status::OK();
}

}  // namespace

Status DirectSession::MakeCallable(const CallableOptions& options, CallableHandle* handle) {
  if (closed_.load(std::memory_order_acquire)) return ClosedError();
  TW_RETURN_IF_ERROR(CheckCallableOptionsSupported(options));
  if (options.fetch().empty() && options.target().empty()) {
    return errors::InvalidArgument("A callable needs at least one fetch or target");
  }
  RunSignature signature;
  signature.feeds.assign(options.feed().begin(), options.feed().end());
  signature.fetches.assign(options.fetch().begin(), options.fetch().end());
  signature.targets.assign(options.target().begin(), options.target().end());
  std::string key;
  signature.Key(&key);
  const CacheEntry* entry = nullptr;
  bool built_now = false;
  TW_RETURN_IF_ERROR(Prepare(signature, key, &entry, &built_now));
  auto callable = std::make_shared<Callable>(entry, options.run_options(), built_now);
  std::unique_lock<std::shared_mutex> lock(callables_mu_);
  *handle = next_callable_handle_++;
  callables_.emplace(*handle, std::move(callable));
  return Status::OK();
}

Status DirectSession::FindCallable(CallableHandle handle,
                                   std::shared_ptr<Callable>* callable) const {
  std::shared_lock<std::shared_mutex> lock(callables_mu_);
  auto it = callables_.find(handle);
  if (it != callables_.end()) {
    *callable = it->second;
    return Status::OK();
  }
  if (handle < 0 || handle >= next_callable_handle_) {
    return errors::InvalidArgument("No such callable handle: ", handle);
  }
  return errors::InvalidArgument("Callable handle ", handle, " was released");
}

Status DirectSession::RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                                  std::vector<Tensor>* fetches) {
  return RunCallable(handle, feeds, fetches, nullptr);
}

Status DirectSession::RunCallable(CallableHandle handle, const std::vector<Tensor>& feeds,
                                  std::vector<Tensor>* fetches, RunMetadata* run_metadata) {
  fetches->clear();
  if (closed_.load(std::memory_order_acquire)) return ClosedError();
  std::shared_ptr<Callable> callable;
  TW_RETURN_IF_ERROR(FindCallable(handle, &callable));
  const CacheEntry& entry = *callable->entry;
  if (feeds.size() != entry.feed_names.size()) {
    return errors::InvalidArgument("Callable ", handle, " takes ", entry.feed_names.size(),
                                   " feed values, but got ", feeds.size());
  }
  // Only the first run can be the compiling one; later runs skip the write.
  const bool compiling_run =
      callable->first_run_follows_compile.load(std::memory_order_relaxed) &&
      callable->first_run_follows_compile.exchange(false, std::memory_order_relaxed);
  return RunPrepared(callable->run_options, entry, feeds, !compiling_run, fetches, run_metadata);
}

Status DirectSession::ReleaseCallable(CallableHandle handle) {
  std::unique_lock<std::shared_mutex> lock(callables_mu_);
  if (handle < 0 || handle >= next_callable_handle_) {
    return errors::InvalidArgument("No such callable handle: ", handle);
  }
  callables_.erase(handle);
  return Status::OK();
}

// --- The prepared step -------------------------------------------------------

Status DirectSession::Prepare(const RunSignature& signature, const std::string& key,
                              const CacheEntry** entry, bool* built_now) {
  *built_now = false;
  *entry = FindEntry(key);
  if (*entry != nullptr) return Status::OK();
  return LookUpOrBuild(signature, key, entry, built_now);
}

const DirectSession::CacheEntry* DirectSession::FindEntry(const std::string& key) const {
  std::shared_lock<std::shared_mutex> lock(cache_mu_);
  auto it = cache_.find(key);
  return it == cache_.end() ? nullptr : it->second.get();
}

const DirectSession::CacheEntry* DirectSession::InsertEntry(const std::string& key,
                                                            std::unique_ptr<CacheEntry> entry) {
  std::unique_lock<std::shared_mutex> lock(cache_mu_);
  // An existing entry for the key is equivalent; keep it.
  return cache_.emplace(key, std::move(entry)).first->second.get();
}

Status DirectSession::CheckFeeds(const CacheEntry& entry, const std::vector<Tensor>& feeds) const {
  const ExecutorsAndKeys& executors = *entry.executors;
  const std::vector<int>& arg_to_feed = entry.binding.arg_to_feed;
  for (size_t arg = 0; arg < arg_to_feed.size(); ++arg) {
    const Tensor& value = feeds[arg_to_feed[arg]];
    const std::string& name = entry.feed_names[arg_to_feed[arg]];
    if (value.dtype() != executors.feed_dtypes[arg]) {
      return errors::InvalidArgument("Cannot feed a ", DataTypeString(value.dtype()),
                                     " value for tensor '", name, "', which is ",
                                     DataTypeString(executors.feed_dtypes[arg]));
    }
    if (!value.IsInitialized()) {
      return errors::InvalidArgument("The value fed for tensor '", name, "' has no data");
    }
    if (executors.check_shape[arg] && !executors.feed_shapes[arg].IsCompatibleWith(value.shape())) {
      return errors::InvalidArgument("Cannot feed a value of shape ", value.shape().DebugString(),
                                     " for tensor '", name, "', which has shape ",
                                     executors.feed_shapes[arg].DebugString());
    }
  }
  return Status::OK();
}

Status DirectSession::RunPrepared(const RunOptions& options, const CacheEntry& entry,
                                  const std::vector<Tensor>& feeds, bool cache_hit,
                                  std::vector<Tensor>* outputs, RunMetadata* run_metadata) {
  TW_RETURN_IF_ERROR(CheckFeeds(entry, feeds));
  const ExecutorsAndKeys& executors = *entry.executors;
  const SignatureBinding& binding = entry.binding;
  const int num_outputs = static_cast<int>(binding.fetch_to_retval.size());
  outputs->resize(num_outputs);
  // Fetched values land in `outputs` directly unless a name repeats.
  std::vector<Tensor> distinct;
  Tensor* retvals = outputs->data();
  if (!binding.fetches_are_retvals) {
    distinct.resize(executors.num_retvals);
    retvals = distinct.data();
  }
  RunCallFrame frame(feeds, binding.arg_to_feed, retvals, executors.num_retvals);

  Step step;
  if (!RegisterStep(&step)) {
    outputs->clear();
    return ClosedError();
  }
  runs_.fetch_add(1, std::memory_order_relaxed);
  if (cache_hit) cache_hits_.fetch_add(1, std::memory_order_relaxed);
  Executor::Args args;
  args.step_id = next_step_id_.fetch_add(1, std::memory_order_relaxed);
  args.rendezvous = &step.rendezvous;
  args.cancellation_manager = &step.cancellation;
  args.call_frame = &frame;
  args.runner = &runner_;
  args.cancelled = &step.cancelled;
  // Per-step resources end with this function, after every executor of
  // the step has finished (also on error, timeout and cancellation).
  ScopedStepContainer step_container(args.step_id);
  args.step_container = &step_container;
  std::optional<StepStatsCollector> collector;
  if (run_metadata != nullptr && options.trace_level() >= RunOptions::SOFTWARE_TRACE) {
    args.stats_collector = &collector.emplace();
  }
  int64_t timeout_ms =
      options.timeout_in_ms() > 0 ? options.timeout_in_ms() : operation_timeout_ms_;
  // A timeout longer than a century cannot expire; treating it as none also
  // keeps now() + timeout inside the clock's range (2^62 ms would wrap).
  if (timeout_ms > kLongestTimeoutMs) timeout_ms = 0;
  if (timeout_ms > 0) {
    args.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  }
  bool timed_out = false;
  Status status;
  if (executors.parts.size() == 1 && timeout_ms <= 0) {
    status = executors.parts[0].executor->Run(args);
  } else {
    status = ExecuteAndWait(executors, args, &step, timeout_ms, &timed_out);
  }
  // The executors stop at the deadline themselves while they run kernels;
  // ExecuteAndWait notices it while they wait.
  timed_out = timed_out || (timeout_ms > 0 && status.code() == Code::DEADLINE_EXCEEDED);
  if (timed_out) status = errors::DeadlineExceeded("Timed out after ", timeout_ms, " ms");
  for (int i = 0; status.ok() && i < executors.num_retvals; ++i) {
    if (retvals[i].dtype() == DT_INVALID) {
      status = errors::Internal("Fetch ", i, " was not produced by the step");
    }
  }
  if (status.ok() && !binding.fetches_are_retvals) {
    for (int i = 0; i < num_outputs; ++i) (*outputs)[i] = distinct[binding.fetch_to_retval[i]];
  }
  if (run_metadata != nullptr) {
    FillRunMetadata(options.output_partition_graphs() ? &executors.PartitionGraphs() : nullptr,
                    &collector, run_metadata);
  }
  // The last use of the session's state: a destructor waiting for this step
  // may proceed as soon as it is unregistered.
  const bool cancelled_by_close = UnregisterStep(&step);
  if (cancelled_by_close && !status.ok() && !timed_out) {
    status = errors::Cancelled("Step was cancelled: ", kClosedMessage);
  }
  if (!status.ok()) outputs->clear();
  return status;
}

Status DirectSession::ExecuteAndWait(const ExecutorsAndKeys& executors, const Executor::Args& args,
                                     Step* step, int64_t timeout_ms, bool* timed_out) {
  struct Barrier {
    std::mutex mu;
    std::condition_variable cv;
    int pending = 0;
    Status status;
  } barrier;
  barrier.pending = static_cast<int>(executors.parts.size());
  for (const ExecutorsAndKeys::Part& part : executors.parts) {
    part.executor->RunAsync(args, [&barrier](const Status& status) {
      std::lock_guard<std::mutex> lock(barrier.mu);
      barrier.status.Update(status);
      if (--barrier.pending == 0) barrier.cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(barrier.mu);
  auto finished = [&barrier] { return barrier.pending == 0; };
  if (timeout_ms > 0 && !barrier.cv.wait_until(lock, args.deadline, finished)) {
    *timed_out = true;
    lock.unlock();
    CancelStep(step, errors::DeadlineExceeded("Timed out after ", timeout_ms, " ms"));
    lock.lock();
  }
  barrier.cv.wait(lock, finished);
  return barrier.status;
}

// --- Building executors for a signature ----------------------------------

Status DirectSession::LookUpOrBuild(const RunSignature& signature, const std::string& key,
                                    const CacheEntry** entry, bool* built_now) {
  *built_now = false;
  const SortedRunSignature sorted_signature(signature);
  std::string sorted_key;
  sorted_signature.sorted().Key(&sorted_key);

  // The call's spelling, derived from the entry of the sorted spelling.
  auto from_sorted = [&](const CacheEntry& sorted) {
    auto spelled = std::make_unique<CacheEntry>();
    spelled->executors = sorted.executors;
    spelled->binding = sorted_signature.ToSpelled(sorted.binding);
    spelled->feed_names = signature.feeds;
    return spelled;
  };

  const CacheEntry* sorted = sorted_key == key ? nullptr : FindEntry(sorted_key);
  if (sorted != nullptr) {
    *entry = InsertEntry(key, from_sorted(*sorted));
    return Status::OK();
  }

  std::lock_guard<std::mutex> lock(graph_mu_);
  // Another thread may have built the signature while this one waited.
  if ((*entry = FindEntry(key)) != nullptr) return Status::OK();
  if (sorted_key != key && (sorted = FindEntry(sorted_key)) != nullptr) {
    *entry = InsertEntry(key, from_sorted(*sorted));
    return Status::OK();
  }
  if (!graph_created_) {
    return errors::FailedPrecondition("Session has no graph: call Create before Run");
  }

  std::unique_ptr<ExecutorsAndKeys> built;
  std::vector<int> output_to_retval;
  TW_RETURN_IF_ERROR(Build(signature.feeds, signature.fetches, signature.targets,
                           SignatureEndpoints(), &built, &output_to_retval));
  executors_built_.fetch_add(1, std::memory_order_relaxed);
  *built_now = true;

  // Build numbers the args after the call's feeds.
  auto given = std::make_unique<CacheEntry>();
  given->executors = built.get();
  given->binding.arg_to_feed.resize(signature.feeds.size());
  std::iota(given->binding.arg_to_feed.begin(), given->binding.arg_to_feed.end(), 0);
  given->binding.fetch_to_retval = std::move(output_to_retval);
  given->binding.Finish();
  given->feed_names = signature.feeds;
  built_.push_back(std::move(built));

  if (sorted_key != key) {
    auto as_sorted = std::make_unique<CacheEntry>();
    as_sorted->executors = given->executors;
    as_sorted->binding = sorted_signature.ToSorted(given->binding);
    as_sorted->feed_names = sorted_signature.sorted().feeds;
    InsertEntry(sorted_key, std::move(as_sorted));
  }
  *entry = InsertEntry(key, std::move(given));
  return Status::OK();
}

Status DirectSession::Build(const std::vector<std::string>& feed_names,
                            const std::vector<std::string>& output_names,
                            const std::vector<std::string>& target_nodes,
                            const SignatureEndpoints& endpoints,
                            std::unique_ptr<ExecutorsAndKeys>* built,
                            std::vector<int>* output_to_retval) {
  FeedFetchSignature signature;
  TW_RETURN_IF_ERROR(ParseSignature(feed_names, output_names, target_nodes, &signature));
  auto graph = std::make_unique<Graph>(graph_->op_registry());
  TW_RETURN_IF_ERROR(CopyGraph(*graph_, graph.get()));
  RewriteResult rewrite;
  TW_RETURN_IF_ERROR(RewriteForSignature(signature, endpoints, graph.get(), &rewrite));
  TW_RETURN_IF_ERROR(OptimizeSignatureGraph(options_.config, signature, graph.get()));

  std::vector<Device*> devices;
  for (const auto& device : devices_) devices.push_back(device.get());
  TW_RETURN_IF_ERROR(
      PlaceSignatureGraph(devices, options_.config, *graph_, &stateful_placements_, graph.get()));

  auto result = std::make_unique<ExecutorsAndKeys>();
  std::map<std::string, std::unique_ptr<Graph>>& partitions = result->partitions;
  TW_RETURN_IF_ERROR(PartitionSignatureGraph(std::move(graph), &partitions));
  for (const auto& entry : partitions) {
    auto device = devices_by_name_.find(entry.first);
    if (device == devices_by_name_.end()) {
      return errors::Internal("Partition for unknown device ", entry.first);
    }
    ExecutorsAndKeys::Part part;
    part.device = device->second;
    LocalExecutorParams params;
    params.device = part.device;
    if (!graph_->flib_def().empty()) {
      part.function_library =
          std::make_unique<FunctionLibraryRuntime>(&graph_->flib_def(), part.device);
      params.function_library = part.function_library.get();
    }
    TW_RETURN_IF_ERROR(NewLocalExecutor(params, *entry.second, &part.executor));
    result->parts.push_back(std::move(part));
  }
  result->feed_dtypes = rewrite.feed_dtypes;
  result->feed_shapes = rewrite.feed_shapes;
  for (const PartialTensorShape& shape : rewrite.feed_shapes) {
    result->check_shape.push_back(!shape.unknown_rank());
  }
  result->num_retvals = static_cast<int>(signature.fetches.size());
  *output_to_retval = signature.output_to_fetch;
  *built = std::move(result);
  return Status::OK();
}

Status DirectSession::PartitionSignatureGraph(
    std::unique_ptr<Graph> graph, std::map<std::string, std::unique_ptr<Graph>>* partitions) {
  // Placed on one device and without functions of its own (which partitions
  // do not carry): the graph is its one partition, as the partitioner would
  // copy it, without copying it.
  std::string device;
  bool one_device = graph->flib_def().empty();
  for (Node* node : graph->op_nodes()) {
    if (!one_device) break;
    const std::string& assigned = node->assigned_device_name();
    if (device.empty()) device = assigned;
    one_device = !assigned.empty() && assigned == device;
  }
  if (one_device && !device.empty()) {
    for (Node* node : graph->op_nodes()) node->set_requested_device(device);
    partitions->clear();
    (*partitions)[device] = std::move(graph);
    return Status::OK();
  }
  PartitionOptions options;
  options.device_incarnation = [this](const std::string& device) {
    auto found = devices_by_name_.find(device);  // placement only picks our devices
    return found == devices_by_name_.end() ? uint64_t{1} : found->second->incarnation();
  };
  return PartitionGraph(options, *graph, partitions);
}

const std::map<std::string, GraphDef>& DirectSession::ExecutorsAndKeys::PartitionGraphs() const {
  std::call_once(partition_graphs_once_, [this] {
    for (const auto& [device, graph] : partitions) graph->ToGraphDef(&partition_graphs_[device]);
  });
  return partition_graphs_;
}

void DirectSession::ClearVariables(const std::vector<std::string>& containers) {
  for (const std::unique_ptr<Device>& device : devices_) device->ClearContainers(containers);
}

Status DirectSession::GetPartitionGraphs(const std::vector<std::string>& feed_names,
                                         const std::vector<std::string>& output_names,
                                         const std::vector<std::string>& target_nodes,
                                         std::map<std::string, GraphDef>* partitions) {
  const RunSignature signature{feed_names, output_names, target_nodes};
  std::string key;
  signature.Key(&key);
  const CacheEntry* entry = FindEntry(key);
  if (entry == nullptr) {
    return errors::NotFound("No executors were built for this signature");
  }
  *partitions = entry->executors->PartitionGraphs();
  return Status::OK();
}

// --- Factory ---------------------------------------------------------------

namespace {

class DirectSessionFactory : public SessionFactory {
 public:
  bool AcceptsOptions(const SessionOptions& options) override { return options.target.empty(); }
  Status NewSession(const SessionOptions& options, std::unique_ptr<Session>* session) override {
    auto direct = std::make_unique<DirectSession>(options);
    TW_RETURN_IF_ERROR(direct->Init());
    {
      LiveSessions& live = GetLiveSessions();
      std::lock_guard<std::mutex> lock(live.mu);
      live.sessions.insert(direct.get());
    }
    *session = std::move(direct);
    return Status::OK();
  }
  Status Reset(const SessionOptions& options, const std::vector<std::string>& containers) override;
};

// TensorFlow's DirectSessionFactory::Reset: the containers of every live
// in-process session.
Status DirectSessionFactory::Reset(const SessionOptions& options,
                                   const std::vector<std::string>& containers) {
  LiveSessions& live = GetLiveSessions();
  std::lock_guard<std::mutex> lock(live.mu);
  for (DirectSession* session : live.sessions) session->ClearVariables(containers);
  return Status::OK();
}

SessionFactoryRegistrar direct_session_registrar("DIRECT_SESSION", new DirectSessionFactory);

}  // namespace

}  // namespace tensorweave
