#include "runtime/common_runtime/executor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "runtime/common_runtime/executor_internal.h"
#include "runtime/common_runtime/function_runtime.h"
#include "runtime/common_runtime/propagator_state.h"
#include "runtime/common_runtime/step_stats_collector.h"
#include "runtime/framework/node_def_util.h"
#include "runtime/framework/op_kernel.h"
#include "runtime/graph/control_flow.h"

namespace tensorweave {

Status Executor::Run(const Args& args) {
  struct Waiter {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    Status status;
  } waiter;
  RunAsync(args, [&waiter](const Status& status) {
    std::lock_guard<std::mutex> lock(waiter.mu);
    waiter.status = status;
    waiter.done = true;
    waiter.cv.notify_one();
  });
  std::unique_lock<std::mutex> lock(waiter.mu);
  waiter.cv.wait(lock, [&waiter] { return waiter.done; });
  return std::move(waiter.status);
}

namespace {

using executor_internal::CheckedOutput;
using executor_internal::ExecutorGraph;
using executor_internal::FramePropagator;
using executor_internal::NodeItem;
using executor_internal::NodeStack;
using executor_internal::OutEdge;
using executor_internal::ReleaseValues;

// A kernel whose measured time stays below this runs inline even when it
// calls itself expensive: handing it to another thread would cost more than
// running it.
constexpr int64_t kExpensiveThresholdNs = 10000;
// Cost estimate of a kernel not measured yet: expensive until shown cheap.
constexpr int64_t kUnmeasured = -1;
// Kernels believed cheap are re-measured once every this many runs, so one
// that starts getting large inputs is noticed.
constexpr uint32_t kCheapSamplePeriod = 64;
// Nested inline continuations (an async kernel finishing inside another
// node's Send) beyond this depth go to the runner to bound stack use.
constexpr int kMaxInlineDepth = 8;

thread_local int inline_depth = 0;

// A kernel's outputs as an array (null when it has none).
TensorValue* OutputsOf(OpKernelContext* context) {
  return context->num_outputs() > 0 ? context->mutable_output(0) : nullptr;
}

// Moves outputs to consumers in a graph without control flow: one pending
// count and one set of input slots per node, no locks, no dead tensors.
class SimplePropagator {
 public:
  using TaggedNode = int;
  struct StepData {
    std::unique_ptr<std::atomic<int>[]> pending;   // per node
    std::vector<std::vector<TensorValue>> inputs;  // per node, one per input slot
  };

  explicit SimplePropagator(const ExecutorGraph* graph) : graph_(graph) {}

  void StartStep(StepData* step, NodeStack<int>* roots) const {
    const int n = static_cast<int>(graph_->items.size());
    if (step->pending == nullptr) {
      step->pending.reset(new std::atomic<int>[n]);
      step->inputs.resize(n);
      for (int i = 0; i < n; ++i) step->inputs[i].resize(graph_->items[i].num_inputs);
    }
    for (int i = 0; i < n; ++i) {
      step->pending[i].store(graph_->items[i].initial_pending, std::memory_order_relaxed);
    }
    for (int root : graph_->roots) roots->push(root);
  }
  void EndStep(StepData*) const {}

  static int NodeOf(int tagged) { return tagged; }
  static constexpr bool IsDead(int) { return false; }
  static FrameAndIter FrameIterOf(int) { return FrameAndIter(); }
  // Every node runs exactly once per successful step.
  static constexpr bool kNodesMayNotRun = false;
  std::vector<TensorValue>* Inputs(StepData* step, int node) const { return &step->inputs[node]; }

  void Propagate(StepData* step, int node, TensorValue* outputs, NodeStack<int>* ready) const {
    const NodeItem& item = graph_->items[node];
    for (int e = item.out_begin; e < item.out_end; ++e) {
      const OutEdge& edge = graph_->out_edges[e];
      if (edge.src_output >= 0) {
        TensorValue& slot = step->inputs[edge.dst][edge.dst_input];
        if (edge.last_use) {
          slot = std::move(outputs[edge.src_output]);
        } else {
          slot = outputs[edge.src_output];
        }
      }
      // acq_rel: the consumer that sees zero also sees every input written.
      if (step->pending[edge.dst].fetch_sub(1, std::memory_order_acq_rel) == 1) {
        ready->push(edge.dst);
      }
    }
  }

 private:
  const ExecutorGraph* graph_;
};

// The frame propagator keeps inputs in its iterations; this adapter gives it
// the interface ExecutorImpl expects.
class FrameAdapter : public FramePropagator {
 public:
  using FramePropagator::FramePropagator;
  // A node may be dead, or run once per iteration, or (after a dead
  // NextIteration) not at all.
  static constexpr bool kNodesMayNotRun = true;
  std::vector<TensorValue>* Inputs(StepData*, const TaggedNode& tagged) const {
    return FramePropagator::Inputs(tagged);
  }
};

template <class Propagator>
class ExecutorImpl;

// The mutable state of one step. Reused across steps (kept in a free list)
// so that a step allocates nothing for its bookkeeping.
template <class Propagator>
struct StepState {
  explicit StepState(const ExecutorImpl<Propagator>* owner) : executor(owner) {}

  const ExecutorImpl<Propagator>* executor;
  Executor::Args args;
  Executor::DoneCallback done;
  typename Propagator::StepData data;
  std::atomic<int> outstanding{0};  // nodes ready or running, not yet done
  std::atomic<bool> failed{false};
  bool has_deadline = false;  // args.deadline is set
  std::mutex status_mu;
  Status status;  // guarded by status_mu; the first error
  // Per _Retval (by ordinal): how often it ran alive this step. Only kept
  // when nodes may not run once each (Propagator::kNodesMayNotRun).
  std::unique_ptr<std::atomic<int>[]> retval_runs;
};

// An async kernel's invocation, alive until its done callback.
template <class Propagator>
struct AsyncInvocation {
  using Tagged = typename Propagator::TaggedNode;
  AsyncInvocation(StepState<Propagator>* step_state, const Tagged& tagged_node,
                  const OpKernelContext::Params& p)
      : state(step_state), tagged(tagged_node), params(p), context(&params) {}
  StepState<Propagator>* state;
  Tagged tagged;
  OpKernelContext::Params params;
  OpKernelContext context;
  std::optional<NodeExecStatsRecorder> trace;  // set in a traced step
};

// The executor, over either propagator. A Propagator provides TaggedNode
// (a unit of work: a node, plus its frame, iteration and deadness when it
// has frames), StepData (its per-step state), StartStep/EndStep, NodeOf,
// IsDead, Inputs (a node's input slots for this run) and Propagate (hands a
// finished node's outputs, null when dead, to its consumers and collects
// the ones made ready). kNodesMayNotRun says whether fetches need checking
// at the end of a step.
template <class Propagator>
class ExecutorImpl : public Executor {
 public:
  using Tagged = typename Propagator::TaggedNode;
  using State = StepState<Propagator>;
  using ReadyStack = NodeStack<Tagged>;

  ExecutorImpl(const LocalExecutorParams& params, std::unique_ptr<ExecutorGraph> graph,
               std::vector<std::unique_ptr<OpKernel>> kernels)
      : device_(params.device),
        function_library_(params.function_library),
        graph_(std::move(graph)),
        kernels_(std::move(kernels)),
        items_(graph_->items),
        propagator_(graph_.get()) {
    for (size_t i = 0; i < items_.size(); ++i) {
      if (items_[i].retval_ordinal >= 0) retval_nodes_.push_back(static_cast<int>(i));
    }
    retvals_by_index_.resize(retval_nodes_.size());
    for (size_t k = 0; k < retval_nodes_.size(); ++k) retvals_by_index_[k] = static_cast<int>(k);
    std::sort(retvals_by_index_.begin(), retvals_by_index_.end(), [this](int a, int b) {
      return items_[retval_nodes_[a]].retval_index < items_[retval_nodes_[b]].retval_index;
    });
    cost_ns_.reset(new std::atomic<int64_t>[items_.size()]);
    runs_.reset(new std::atomic<uint32_t>[items_.size()]);
    for (size_t i = 0; i < items_.size(); ++i) {
      cost_ns_[i].store(kUnmeasured, std::memory_order_relaxed);
      runs_[i].store(0, std::memory_order_relaxed);
    }
  }
  ~ExecutorImpl() override;

  Propagator* propagator() { return &propagator_; }
  void RunAsync(const Args& args, DoneCallback done) override;

 private:
  State* AcquireState() const;
  void ReleaseState(State* state) const;

  // Runs `stack` and everything it makes ready inline until nothing is left
  // for this thread.
  void RunReadyLoop(State* state, ReadyStack* stack) const;
  void Process(State* state, const Tagged& tagged) const;
  void Dispatch(State* state, const Tagged& tagged) const;
  // A dead node runs no kernel (unless it passes deadness on to another
  // device); its outputs are all dead.
  Status ProcessDead(const NodeItem& item) const;
  // Counts a live run of a _Retval: a second one in a step (a fetch inside a
  // loop) is an error, as in TensorFlow (which says INTERNAL).
  Status CountRetvalRun(State* state, const NodeItem& item) const;
  // OK, or INVALID_ARGUMENT for the first fetch no live _Retval filled.
  Status CheckEveryRetvalRan(State* state) const;
  // Launches an async kernel; its callback finishes the node.
  // `trace` (a traced step only) is moved into the invocation.
  void StartAsync(State* state, const Tagged& tagged, const OpKernelContext::Params& params,
                  std::optional<NodeExecStatsRecorder>* trace) const;
  void AsyncDone(AsyncInvocation<Propagator>* invocation) const;

  // Reads the variables behind reference inputs of value type (only for
  // nodes with item.may_get_ref).
  Status PrepareInputs(const NodeItem& item, std::vector<TensorValue>* inputs) const;
  Status CheckOutputs(const NodeItem& item, OpKernelContext* context) const;
  void RecordError(State* state, const NodeItem& item, const Status& status) const;
  void RecordStepError(State* state, const Status& status) const;
  // True (and the step failed) once the step is cancelled or past its
  // deadline.
  // With `look_at_manager`, also when the step's CancellationManager is
  // cancelled (which costs a lock).
  bool Interrupted(State* state, bool look_at_manager) const;
  // Accounts for a finished node and its newly ready nodes; true when the
  // step is complete (the caller must then call Finish and stop).
  bool NodeDone(State* state, const ReadyStack& ready, ReadyStack* inline_ready) const;
  void ScheduleReady(State* state, const ReadyStack& ready, ReadyStack* inline_ready) const;
  void Finish(State* state) const;

  bool IsExpensive(int node) const;
  bool ShouldMeasure(int node) const;
  void RecordCost(int node, int64_t nanos) const;

  Device* device_;
  FunctionLibraryRuntime* function_library_;
  std::unique_ptr<ExecutorGraph> graph_;
  std::vector<std::unique_ptr<OpKernel>> kernels_;
  const std::vector<NodeItem>& items_;
  Propagator propagator_;
  std::vector<int> retval_nodes_;      // by ordinal
  std::vector<int> retvals_by_index_;  // ordinals, by fetch index
  // Per node: moving average of measured run time (kUnmeasured at first) and
  // a run counter for sampling. Relaxed races only blur the estimate.
  std::unique_ptr<std::atomic<int64_t>[]> cost_ns_;
  std::unique_ptr<std::atomic<uint32_t>[]> runs_;

  // One spare state without locking (the common single-caller case), then
  // a locked free list for concurrent steps.
  mutable std::atomic<State*> spare_state_{nullptr};
  mutable std::mutex free_mu_;
  mutable std::vector<State*> free_states_;
};

template <class P>
ExecutorImpl<P>::~ExecutorImpl() {
  delete spare_state_.load();
  for (State* state : free_states_) delete state;
}

template <class P>
typename ExecutorImpl<P>::State* ExecutorImpl<P>::AcquireState() const {
  State* state = spare_state_.exchange(nullptr, std::memory_order_acquire);
  if (state == nullptr) {
    std::lock_guard<std::mutex> lock(free_mu_);
    if (!free_states_.empty()) {
      state = free_states_.back();
      free_states_.pop_back();
    }
  }
  if (state == nullptr) {
    state = new State(this);
    if constexpr (P::kNodesMayNotRun) {
      state->retval_runs.reset(new std::atomic<int>[retval_nodes_.size()]);
    }
  }
  if constexpr (P::kNodesMayNotRun) {
    for (size_t i = 0; i < retval_nodes_.size(); ++i) {
      state->retval_runs[i].store(0, std::memory_order_relaxed);
    }
  }
  state->failed.store(false, std::memory_order_relaxed);
  state->outstanding.store(static_cast<int>(graph_->roots.size()), std::memory_order_relaxed);
  return state;
}

template <class P>
void ExecutorImpl<P>::ReleaseState(State* state) const {
  State* expected = nullptr;
  if (spare_state_.compare_exchange_strong(expected, state, std::memory_order_release)) return;
  std::lock_guard<std::mutex> lock(free_mu_);
  free_states_.push_back(state);
}

template <class P>
void ExecutorImpl<P>::RunAsync(const Args& args, DoneCallback done) {
  State* state = AcquireState();
  state->args = args;
  state->has_deadline = args.deadline != std::chrono::steady_clock::time_point::max();
  state->done = std::move(done);
  ReadyStack ready, stack;
  propagator_.StartStep(&state->data, &ready);
  if (ready.empty()) {
    Finish(state);
    return;
  }
  ScheduleReady(state, ready, &stack);
  RunReadyLoop(state, &stack);
}

template <class P>
void ExecutorImpl<P>::Process(State* state, const Tagged& tagged) const {
  ReadyStack stack;
  stack.push(tagged);
  RunReadyLoop(state, &stack);
}

template <class P>
void ExecutorImpl<P>::Dispatch(State* state, const Tagged& tagged) const {
  if (state->args.runner == nullptr) {
    Process(state, tagged);
    return;
  }
  (*state->args.runner)([state, tagged] { state->executor->Process(state, tagged); });
}

template <class P>
void ExecutorImpl<P>::RunReadyLoop(State* state, ReadyStack* stack) const {
  ++inline_depth;
  // A loop can run on after the rest of its step failed elsewhere (another
  // partition cancels the step's manager, not `cancelled`): executors with
  // frames look at the manager for the first node here and every 64th.
  uint32_t nodes_here = 0;
  // What every kernel of the step sees; the per-node fields are set below.
  OpKernelContext::Params params;
  params.step_id = state->args.step_id;
  params.device = device_;
  params.rendezvous = state->args.rendezvous;
  params.cancellation_manager = state->args.cancellation_manager;
  params.call_frame = state->args.call_frame;
  params.runner = state->args.runner;
  params.step_container = state->args.step_container;
  params.function_library = function_library_;
  params.deadline = state->args.deadline;
  while (!stack->empty()) {
    const Tagged tagged = stack->pop();
    const int node = P::NodeOf(tagged);
    const NodeItem& item = items_[node];
    std::vector<TensorValue>* inputs = propagator_.Inputs(&state->data, tagged);
    ReadyStack ready;
    Status status;
    // After an error nothing new starts; the node only counts as done.
    // Inputs are cleared before propagating: the propagator may recycle
    // their storage as soon as the node is accounted for.
    const bool look_at_manager = P::kNodesMayNotRun && nodes_here++ % 64 == 0;
    if (state->failed.load(std::memory_order_relaxed) || Interrupted(state, look_at_manager)) {
      ReleaseValues(inputs);
    } else if (P::IsDead(tagged) && !item.runs_when_dead) {
      status = ProcessDead(item);
      ReleaseValues(inputs);
      if (status.ok()) propagator_.Propagate(&state->data, tagged, nullptr, &ready);
    } else {
      // Only a traced step records; the untraced one pays a null check.
      std::optional<NodeExecStatsRecorder> trace;
      if (state->args.stats_collector != nullptr) {
        trace.emplace(*item.kernel, graph_->timeline_labels[node]);
      }
      params.op_kernel = item.kernel;
      params.inputs = inputs;
      // A dead _Send or _Recv still runs: the _Send tells its receiver it
      // is dead, the _Recv takes that news (or a value) off the rendezvous.
      params.is_input_dead = P::IsDead(tagged);
      params.frame_iter = P::FrameIterOf(tagged);
      if (item.may_get_ref) status = PrepareInputs(item, inputs);
      if constexpr (P::kNodesMayNotRun) {
        if (status.ok() && item.retval_ordinal >= 0) status = CountRetvalRun(state, item);
      }
      if (status.ok() && item.async != nullptr) {
        StartAsync(state, tagged, params, &trace);
        continue;  // the kernel's callback finishes this node
      }
      OpKernelContext context(&params);
      if (status.ok()) {
        if (trace) trace->KernelStarted();
        if (ShouldMeasure(node)) {
          const auto start = std::chrono::steady_clock::now();
          ComputeCatchingExceptions(item.kernel, &context);
          RecordCost(node, std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now() - start)
                               .count());
        } else {
          ComputeCatchingExceptions(item.kernel, &context);
        }
        if (trace) trace->KernelDone(&context);
        // Copying an OK status is a call; most kernels succeed.
        if (!context.status().ok()) {
          status = context.status();
        } else {
          status = CheckOutputs(item, &context);
        }
      }
      ReleaseValues(inputs);
      if (status.ok()) {
        propagator_.Propagate(&state->data, tagged, OutputsOf(&context), &ready);
        if (trace) state->args.stats_collector->Save(device_->name(), trace->Done());
      }
    }
    if (!status.ok()) RecordError(state, item, status);
    if (NodeDone(state, ready, stack)) {
      Finish(state);
      break;  // `state` may already be reused by another step
    }
  }
  --inline_depth;
}

template <class P>
Status ExecutorImpl<P>::ProcessDead(const NodeItem& item) const {
  // A dead _Retval leaves its fetch unfilled; CheckEveryRetvalRan reports
  // it once the step is over, as TensorFlow does.
  if (item.is_client_fetch) {
    return errors::InvalidArgument(
        "The fetched tensor does not have value (it is dead: it comes "
        "from the untaken branch of a conditional)");
  }
  return Status::OK();
}

template <class P>
Status ExecutorImpl<P>::CountRetvalRun(State* state, const NodeItem& item) const {
  if (state->retval_runs[item.retval_ordinal].fetch_add(1, std::memory_order_relaxed) == 0) {
    return Status::OK();
  }
  // TensorFlow says INTERNAL here; a fetch inside a loop is the caller's
  // mistake, not the runtime's, so it is INVALID_ARGUMENT with the same words.
  return errors::InvalidArgument("Retval[", item.retval_index,
                                 "] has already been set. (The fetch is inside a while loop, "
                                 "whose body runs once per iteration.)");
}

template <class P>
Status ExecutorImpl<P>::CheckEveryRetvalRan(State* state) const {
  for (int ordinal : retvals_by_index_) {
    if (state->retval_runs[ordinal].load(std::memory_order_relaxed) == 0) {
      return errors::InvalidArgument("Retval[", items_[retval_nodes_[ordinal]].retval_index,
                                     "] does not have value");
    }
  }
  return Status::OK();
}

template <class P>
bool ExecutorImpl<P>::Interrupted(State* state, bool look_at_manager) const {
  Status status;
  const Args& args = state->args;
  if (args.cancelled != nullptr && args.cancelled->load(std::memory_order_relaxed)) {
    status = errors::Cancelled("The step was cancelled");
  } else if (state->has_deadline && std::chrono::steady_clock::now() > args.deadline) {
    status = errors::DeadlineExceeded("The step ran out of time");
  } else if (look_at_manager && args.cancellation_manager != nullptr &&
             args.cancellation_manager->IsCancelled()) {
    status = errors::Cancelled("The step was cancelled");
  } else {
    return false;
  }
  RecordStepError(state, status);
  return true;
}

template <class P>
void ExecutorImpl<P>::StartAsync(State* state, const Tagged& tagged,
                                 const OpKernelContext::Params& params,
                                 std::optional<NodeExecStatsRecorder>* trace) const {
  auto* invocation = new AsyncInvocation<P>(state, tagged, params);
  if (*trace) {
    invocation->trace = std::move(*trace);
    invocation->trace->KernelStarted();
  }
  ComputeAsyncCatchingExceptions(
      items_[P::NodeOf(tagged)].async, &invocation->context,
      [invocation] { invocation->state->executor->AsyncDone(invocation); });
}

template <class P>
void ExecutorImpl<P>::AsyncDone(AsyncInvocation<P>* invocation) const {
  State* state = invocation->state;
  const Tagged tagged = invocation->tagged;
  const NodeItem& item = items_[P::NodeOf(tagged)];
  ReadyStack ready;
  Status status = invocation->context.status();
  if (invocation->trace) invocation->trace->KernelDone(&invocation->context);
  if (status.ok()) status = CheckOutputs(item, &invocation->context);
  ReleaseValues(propagator_.Inputs(&state->data, tagged));
  if (status.ok()) {
    propagator_.Propagate(&state->data, tagged, OutputsOf(&invocation->context), &ready);
    if (invocation->trace) {
      state->args.stats_collector->Save(device_->name(), invocation->trace->Done());
    }
  }
  delete invocation;
  if (!status.ok()) RecordError(state, item, status);

  if (inline_depth >= kMaxInlineDepth) {
    // Too deep to continue here: hand every ready node to the runner.
    if (ready.size() > 1) {
      state->outstanding.fetch_add(ready.size() - 1, std::memory_order_relaxed);
    }
    if (ready.empty()) {
      if (state->outstanding.fetch_sub(1, std::memory_order_acq_rel) == 1) Finish(state);
      return;
    }
    for (int i = 0; i < ready.size(); ++i) Dispatch(state, ready[i]);
    return;
  }
  ReadyStack stack;
  if (NodeDone(state, ready, &stack)) {
    Finish(state);
    return;
  }
  RunReadyLoop(state, &stack);
}

template <class P>
Status ExecutorImpl<P>::PrepareInputs(const NodeItem& item,
                                      std::vector<TensorValue>* inputs) const {
  for (int i = 0; i < item.num_inputs; ++i) {
    TensorValue& value = (*inputs)[i];
    if (!value.is_ref() || IsRefType(item.kernel->input_type(i))) continue;
    // A value consumer of a variable reads its current value, once.
    Variable* variable = value.ref;
    std::lock_guard<std::mutex> lock(variable->mu);
    if (!variable->tensor.IsInitialized()) {
      Status status =
          errors::FailedPrecondition("Attempting to use uninitialized value ", variable->name);
      // When the variable itself is fetched, its reader is the runtime-made
      // _Retval, whose name means nothing to the user: name the variable.
      // (A _Send keeps its name: it is named after the real reader.)
      if (item.retval_index >= 0) {
        status = AttachNodeName(status, variable->name, "VariableV2");
      }
      return status;
    }
    value.tensor = variable->tensor;
    value.ref = nullptr;
  }
  return Status::OK();
}

template <class P>
Status ExecutorImpl<P>::CheckOutputs(const NodeItem& item, OpKernelContext* context) const {
  const std::vector<CheckedOutput>& checked = graph_->checked_outputs;
  for (int c = item.check_begin; c < item.check_end; ++c) {
    const int slot = checked[c].slot;
    const TensorValue* value = context->mutable_output(slot);
    if (value->is_ref()) continue;
    const DataType expected = checked[c].dtype;
    if (value->tensor.dtype() == DT_INVALID) {
      // A dead output of a Switch, or of a _Recv whose sender was dead.
      if (item.outputs_optional && P::kNodesMayNotRun) continue;
      return errors::Internal("Kernel did not produce output ", slot);
    }
    if (value->tensor.dtype() != expected) {
      return errors::Internal("Kernel produced a ", DataTypeString(value->tensor.dtype()),
                              " for output ", slot, ", which is declared ",
                              DataTypeString(expected));
    }
  }
  return Status::OK();
}

template <class P>
void ExecutorImpl<P>::RecordError(State* state, const NodeItem& item, const Status& status) const {
  RecordStepError(state, AttachNodeName(status, item.kernel->name(), item.kernel->type_string()));
}

template <class P>
void ExecutorImpl<P>::RecordStepError(State* state, const Status& named) const {
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(state->status_mu);
    if (state->status.ok()) {
      state->status = named;
      first = true;
    }
  }
  state->failed.store(true, std::memory_order_relaxed);
  if (!first) return;
  // Wake the rest of the step: receivers here and in other partitions, and
  // anything registered for cancellation. The rendezvous goes first so
  // receivers see this error rather than a bare cancellation.
  if (state->args.rendezvous != nullptr) state->args.rendezvous->StartAbort(named);
  if (state->args.cancellation_manager != nullptr) {
    state->args.cancellation_manager->StartCancel();
  }
}

template <class P>
bool ExecutorImpl<P>::NodeDone(State* state, const ReadyStack& ready,
                               ReadyStack* inline_ready) const {
  if (ready.empty()) {
    return state->outstanding.fetch_sub(1, std::memory_order_acq_rel) == 1;
  }
  // Count the new nodes before any of them can finish elsewhere.
  if (ready.size() > 1) {
    state->outstanding.fetch_add(ready.size() - 1, std::memory_order_relaxed);
  }
  ScheduleReady(state, ready, inline_ready);
  return false;
}

template <class P>
void ExecutorImpl<P>::ScheduleReady(State* state, const ReadyStack& ready,
                                    ReadyStack* inline_ready) const {
  // One node made ready with nothing else queued here (a chain, the common
  // case) stays on this thread whatever its cost.
  if (ready.size() == 1 && inline_ready->empty()) {
    inline_ready->push(ready[0]);
    return;
  }
  int last_expensive = -1;
  for (int i = 0; i < ready.size(); ++i) {
    if (!IsExpensive(P::NodeOf(ready[i]))) {
      inline_ready->push(ready[i]);
      continue;
    }
    if (last_expensive >= 0) Dispatch(state, ready[last_expensive]);
    last_expensive = i;
  }
  if (last_expensive < 0) return;
  // Keep one expensive node on this thread unless cheap work is queued
  // here already, in which case it would wait behind that work.
  if (inline_ready->empty()) {
    inline_ready->push(ready[last_expensive]);
  } else {
    Dispatch(state, ready[last_expensive]);
  }
}

template <class P>
void ExecutorImpl<P>::Finish(State* state) const {
  propagator_.EndStep(&state->data);
  Status status;
  {
    std::lock_guard<std::mutex> lock(state->status_mu);
    status = std::move(state->status);
    state->status = Status::OK();
  }
  if constexpr (P::kNodesMayNotRun) {
    if (status.ok()) status = CheckEveryRetvalRan(state);
  }
  DoneCallback done = std::move(state->done);
  state->done = nullptr;
  // Back to the free list before `done`: once the caller learns the step
  // ended it may destroy this executor.
  ReleaseState(state);
  done(status);
}

template <class P>
bool ExecutorImpl<P>::IsExpensive(int node) const {
  if (!items_[node].declares_expensive) return false;
  const int64_t cost = cost_ns_[node].load(std::memory_order_relaxed);
  return cost == kUnmeasured || cost >= kExpensiveThresholdNs;
}

template <class P>
bool ExecutorImpl<P>::ShouldMeasure(int node) const {
  if (!items_[node].declares_expensive) return false;
  if (IsExpensive(node)) return true;  // timing is noise next to the kernel
  const uint32_t runs = runs_[node].load(std::memory_order_relaxed) + 1;
  runs_[node].store(runs, std::memory_order_relaxed);
  return runs % kCheapSamplePeriod == 0;
}

template <class P>
void ExecutorImpl<P>::RecordCost(int node, int64_t nanos) const {
  const int64_t old = cost_ns_[node].load(std::memory_order_relaxed);
  cost_ns_[node].store(old == kUnmeasured ? nanos : (old * 3 + nanos) / 4,
                       std::memory_order_relaxed);
}

// Creates the kernels and the static view of `graph`; index_of maps node ids
// to dense indices.
Status BuildExecutorGraph(const LocalExecutorParams& params, const Graph& graph,
                          std::vector<int>* index_of, ExecutorGraph* view,
                          std::vector<std::unique_ptr<OpKernel>>* kernels) {
  Device* device = params.device;
  // Dense indices for op nodes; SOURCE and SINK are not executed.
  index_of->assign(graph.num_node_ids(), -1);
  std::vector<Node*> nodes = graph.op_nodes();
  for (size_t i = 0; i < nodes.size(); ++i) (*index_of)[nodes[i]->id()] = static_cast<int>(i);

  view->items.resize(nodes.size());
  kernels->resize(nodes.size());
  int num_retvals = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node* node = nodes[i];
    // A node whose op is a function of the library calls it.
    if (params.function_library != nullptr &&
        params.function_library->IsFunction(node->type_string())) {
      TW_RETURN_IF_ERROR(params.function_library->CreateKernel(node->def(), &(*kernels)[i]));
    } else {
      TW_RETURN_IF_ERROR(
          CreateOpKernel(device->device_type(), device, node->def(), &(*kernels)[i]));
    }
    NodeItem& item = view->items[i];
    item.kernel = (*kernels)[i].get();
    view->timeline_labels.push_back(TimelineLabel(*node));
    item.async = item.kernel->AsAsync();
    item.declares_expensive = item.kernel->IsExpensive();
    const std::string& type = node->type_string();
    item.outputs_optional = IsSwitchOp(node) || type == "_Recv";
    item.is_transfer = type == "_Send" || type == "_Recv";
    if (item.is_transfer) {
      bool client_terminated = false;
      TW_RETURN_IF_ERROR(GetNodeAttr(node->def(), "client_terminated", &client_terminated));
      item.is_client_fetch = client_terminated && type == "_Send";
      item.is_peer_recv = !client_terminated && type == "_Recv";
      item.runs_when_dead = !item.is_client_fetch;
    }
    if (type == "_Retval") {
      int64_t index = 0;
      TW_RETURN_IF_ERROR(GetNodeAttr(node->def(), "index", &index));
      item.retval_index = static_cast<int>(index);
      item.retval_ordinal = num_retvals++;
    }
    item.num_inputs = node->num_inputs();
    for (const Edge* edge : node->in_edges()) {
      if (edge->src()->IsOp()) ++item.initial_pending;
    }
    if (item.initial_pending == 0) view->roots.push_back(static_cast<int>(i));

    item.out_begin = static_cast<int>(view->out_edges.size());
    for (const Edge* edge : node->out_edges()) {
      if (!edge->dst()->IsOp()) continue;
      view->out_edges.push_back(
          {(*index_of)[edge->dst()->id()], edge->src_output(), edge->dst_input(), false});
    }
    item.out_end = static_cast<int>(view->out_edges.size());
    // The last reader of each output may take the value instead of copying
    // it, which lets kernels reuse the buffer in place.
    std::vector<bool> seen(node->num_outputs(), false);
    for (int e = item.out_end - 1; e >= item.out_begin; --e) {
      OutEdge& out = view->out_edges[e];
      if (out.src_output >= 0 && !seen[out.src_output]) {
        seen[out.src_output] = true;
        out.last_use = true;
      }
    }
    // The outputs CheckOutputs looks at after each run, in the order of the
    // edges reading them (so the first bad one is reported as before).
    item.check_begin = static_cast<int>(view->checked_outputs.size());
    std::fill(seen.begin(), seen.end(), false);
    for (int e = item.out_begin; e < item.out_end; ++e) {
      const int slot = view->out_edges[e].src_output;
      if (slot < 0 || seen[slot]) continue;
      seen[slot] = true;
      view->checked_outputs.push_back({slot, BaseType(item.kernel->output_type(slot))});
    }
    item.check_end = static_cast<int>(view->checked_outputs.size());
  }
  // Only kernels declaring a reference output produce references, so other
  // nodes skip looking for variables among their inputs.
  for (const NodeItem& item : view->items) {
    for (int e = item.out_begin; e < item.out_end; ++e) {
      const OutEdge& out = view->out_edges[e];
      if (out.src_output >= 0 && IsRefType(item.kernel->output_type(out.src_output))) {
        view->items[out.dst].may_get_ref = true;
      }
    }
  }
  return Status::OK();
}

}  // namespace

Status NewLocalExecutor(const LocalExecutorParams& params, const Graph& graph,
                        std::unique_ptr<Executor>* executor) {
  if (params.device == nullptr) return errors::InvalidArgument("An executor needs a device");
  auto view = std::make_unique<ExecutorGraph>();
  std::vector<std::unique_ptr<OpKernel>> kernels;
  std::vector<int> index_of;
  TW_RETURN_IF_ERROR(BuildExecutorGraph(params, graph, &index_of, view.get(), &kernels));
  const std::vector<Node*> nodes = graph.op_nodes();
  // Only graphs that may meet dead tensors pay for frames and deadness: those
  // with control flow, and those receiving from another partition (whose
  // sender may sit in an untaken branch). A value fed by the client is
  // never dead.
  const bool has_control_flow =
      std::any_of(nodes.begin(), nodes.end(), [](const Node* n) { return IsControlFlowOp(n); });
  const bool has_peer_recv = std::any_of(view->items.begin(), view->items.end(),
                                         [](const NodeItem& item) { return item.is_peer_recv; });
  if (!has_control_flow && !has_peer_recv) {
    *executor = std::make_unique<ExecutorImpl<SimplePropagator>>(params, std::move(view),
                                                                 std::move(kernels));
    return Status::OK();
  }
  auto frames =
      std::make_unique<ExecutorImpl<FrameAdapter>>(params, std::move(view), std::move(kernels));
  TW_RETURN_IF_ERROR(frames->propagator()->Initialize(graph, index_of));
  *executor = std::move(frames);
  return Status::OK();
}

}  // namespace tensorweave
