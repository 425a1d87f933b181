// StepStatsCollector: gathers what a traced step (RunOptions.trace_level
// SOFTWARE_TRACE or above) records per node, for RunMetadata.step_stats.
//
//   StepStatsCollector collector;
//   args.stats_collector = &collector;   // Executor::Args of every partition
//   TW_RETURN_IF_ERROR(executor->Run(args));
//   collector.Finalize(run_metadata->mutable_step_stats());
//
// The executor fills one NodeExecStats per kernel run through
// NodeExecStatsRecorder (start, kernel start and end, end, in micros and
// nanos since the Unix epoch; outputs with dtype, shape and bytes; thread;
// the "name = Op(inputs)" timeline label; what a synchronous kernel
// allocated, as AllocatorMemoryUsed) and hands it to Save, which any
// thread may call at any time during the step. Untraced steps have no
// collector, so they read no clock and allocate nothing for stats.
#ifndef TENSORWEAVE_COMMON_RUNTIME_STEP_STATS_COLLECTOR_H_
#define TENSORWEAVE_COMMON_RUNTIME_STEP_STATS_COLLECTOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/framework/cpu_allocator.h"
#include "runtime/framework/op_kernel.h"
#include "runtime/graph/graph.h"
#include "tensorweave/proto/step_stats.pb.h"

namespace tensorweave {

class StepStatsCollector {
 public:
  // Adds `stats` to the records of `device` (a full device name).
  void Save(const std::string& device, std::unique_ptr<NodeExecStats> stats);

  // Moves every record into `step_stats`, one DeviceStepStats per device in
  // name order, each device's nodes in the order they started. The
  // collector is empty afterwards.
  void Finalize(StepStats* step_stats);

 private:
  std::mutex mu_;
  std::map<std::string, std::vector<std::unique_ptr<NodeExecStats>>> by_device_;
};

// Times one node's run and describes it, for a traced step only.
//
//   NodeExecStatsRecorder recorder(kernel, label);   // all_start: now
//   recorder.KernelStarted();
//   kernel->Compute(&context);
//   recorder.KernelDone(&context);            // op_end, outputs
//   ... hand the outputs on ...
//   collector->Save(device, recorder.Done()); // all_end
class NodeExecStatsRecorder {
 public:
  // `label` is the node's TimelineLabel.
  NodeExecStatsRecorder(const OpKernel& kernel, const std::string& label);

  // Starts tracking the kernel's allocations, unless it is asynchronous:
  // its callback may run on another thread, where this thread's tracker
  // cannot be ended.
  void KernelStarted();
  // Records the kernel's end, describes the outputs it produced and what it
  // allocated (TensorFlow's AllocatorMemoryUsed, only when it allocated).
  void KernelDone(OpKernelContext* context);
  // Records the end of the node and gives the record away.
  std::unique_ptr<NodeExecStats> Done();

  // Nanoseconds since the Unix epoch.
  static int64_t NowNanos();

 private:
  std::unique_ptr<NodeExecStats> stats_;
  int64_t start_ns_;
  bool kernel_is_async_;
  std::unique_ptr<ScopedAllocationTracker> allocations_;
};

// "name = Op(input, input)": TensorFlow's timeline label of a node (inputs
// as "src", "src:1", control inputs as "^src"; a _Send or _Recv shows the
// tensor it carries and the peer device, "a:0 @/job:..."), which
// tensorweave.client.timeline parses back into its name, op and inputs.
std::string TimelineLabel(const Node& node);

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_STEP_STATS_COLLECTOR_H_
