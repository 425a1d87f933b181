// Executor: runs the nodes of one partition graph (every node on one device)
// for one step, following data and control edges.
//
//   std::unique_ptr<Executor> executor;
//   TW_RETURN_IF_ERROR(NewLocalExecutor({device}, graph, &executor));
//   SimpleCallFrame frame(feeds.data(), feeds.size(), num_fetches);
//   Executor::Args args;
//   args.call_frame = &frame;            // _Arg and _Retval nodes use it
//   args.rendezvous = &rendezvous;       // _Send and _Recv nodes use it
//   args.cancellation_manager = &cancel;
//   args.runner = &runner;               // the inter-op thread pool
//   TW_RETURN_IF_ERROR(executor->Run(args));
//
// How a step runs: each node has a count of inputs still pending; nodes whose
// count reaches zero are ready. Cheap kernels run inline on the thread that
// made them ready. When several expensive kernels become ready at once, all
// but one go to the runner and the last stays on the current thread, so a
// chain of nodes runs on one thread without hops. Whether a kernel is
// expensive is its own claim (OpKernel::IsExpensive) checked against the
// time it actually takes. Async kernels (_Recv) finish through a callback.
//
// Graphs with TensorFlow 1.x control flow (Switch, Merge, Enter, Exit,
// NextIteration, LoopCond, ControlTrigger) run with frames, iterations and
// dead tensors as in TensorFlow (propagator_state.h); the others keep the
// plain propagator, which has no locks and nothing per frame. A fetch whose
// _Retval ran only dead, or never (inside a loop that never iterated), is
// INVALID_ARGUMENT "Retval[i] does not have value". A loop split across
// devices is UNIMPLEMENTED when the executor is built.
//
// On a kernel error the executor keeps the first error (naming the node),
// aborts the step's rendezvous, cancels its CancellationManager, starts no
// further kernels and reports once the kernels already running finished.
#ifndef TENSORWEAVE_COMMON_RUNTIME_EXECUTOR_H_
#define TENSORWEAVE_COMMON_RUNTIME_EXECUTOR_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "runtime/framework/call_frame.h"
#include "runtime/framework/cancellation.h"
#include "runtime/framework/device.h"
#include "runtime/framework/rendezvous.h"
#include "runtime/framework/resource_mgr.h"
#include "runtime/framework/status.h"
#include "runtime/graph/graph.h"

namespace tensorweave {

class StepStatsCollector;

class Executor {
 public:
  using Runner = std::function<void(std::function<void()>)>;
  using DoneCallback = std::function<void(const Status&)>;

  // Everything one step needs from its caller. None of it is owned; all of
  // it must stay alive until the step's done callback has run.
  struct Args {
    int64_t step_id = 0;
    Rendezvous* rendezvous = nullptr;                     // null: no _Send/_Recv
    CancellationManager* cancellation_manager = nullptr;  // null: not cancellable
    CallFrameInterface* call_frame = nullptr;             // null: no _Arg/_Retval
    Runner* runner = nullptr;  // null: everything runs on the calling thread
    // The step's per-step resources (resource_mgr.h), shared by every
    // partition of the step; null: kernels that need one fail.
    ScopedStepContainer* step_container = nullptr;
    // Checked before each kernel starts, so a long chain of kernels stops
    // soon after the step is cancelled or out of time: once *cancelled is
    // true the step fails with CANCELLED; after `deadline` with
    // DEADLINE_EXCEEDED. A kernel already running is not interrupted.
    const std::atomic<bool>* cancelled = nullptr;
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
    // Set for a traced step (step_stats_collector.h): every kernel run is
    // timed and described there. Null: nothing is recorded and no clock is
    // read for it.
    StepStatsCollector* stats_collector = nullptr;
  };

  virtual ~Executor() = default;

  // Starts a step. `done` runs exactly once with the step's status, possibly
  // before RunAsync returns (when every kernel ran inline), possibly on
  // another thread. Several steps may run at once.
  virtual void RunAsync(const Args& args, DoneCallback done) = 0;

  // Runs a step and waits for it. When every kernel ran inline the result is
  // already there on return from RunAsync and no thread is woken.
  Status Run(const Args& args);
};

class FunctionLibraryRuntime;

struct LocalExecutorParams {
  Device* device = nullptr;  // not owned; outlives the executor
  // Not owned; outlives the executor. Kernels call functions through it and
  // a node whose op is one of its functions gets a call kernel. Null: the
  // graph calls no functions.
  FunctionLibraryRuntime* function_library = nullptr;
};

// Builds an executor for `graph`, whose op nodes all run on params.device:
// creates one kernel per node (errors name the node). The executor keeps no
// reference to `graph`.
Status NewLocalExecutor(const LocalExecutorParams& params, const Graph& graph,
                        std::unique_ptr<Executor>* executor);

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_EXECUTOR_H_
