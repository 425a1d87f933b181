#include "runtime/common_runtime/step_stats_collector.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "runtime/framework/node_def_util.h"

namespace tensorweave {

namespace {

// The kernel's thread as the operating system numbers it (what TensorFlow
// records and what tools such as perf show).
uint32_t CurrentThreadId() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

void DescribeOutput(int slot, const Tensor& value, NodeOutputStats* output) {
  output->set_slot(slot);
  TensorDescription* description = output->mutable_tensor_description();
  description->set_dtype(value.dtype());
  value.shape().AsProto(description->mutable_shape());
  AllocationDescription* allocation = description->mutable_allocation_description();
  const int64_t bytes = static_cast<int64_t>(value.TotalBytes());
  allocation->set_requested_bytes(bytes);
  allocation->set_allocated_bytes(bytes);
  allocation->set_allocator_name(CpuAllocator::Name());
  allocation->set_ptr(reinterpret_cast<uintptr_t>(value.raw_data()));
  allocation->set_has_single_reference(value.RefCountIsOne());
}

}  // namespace

void StepStatsCollector::Save(const std::string& device, std::unique_ptr<NodeExecStats> stats) {
  std::lock_guard<std::mutex> lock(mu_);
  by_device_[device].push_back(std::move(stats));
}

void StepStatsCollector::Finalize(StepStats* step_stats) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [device, records] : by_device_) {
    DeviceStepStats* device_stats = step_stats->add_dev_stats();
    device_stats->set_device(device);
    std::stable_sort(
        records.begin(), records.end(),
        [](const std::unique_ptr<NodeExecStats>& a, const std::unique_ptr<NodeExecStats>& b) {
          return a->all_start_nanos() < b->all_start_nanos();
        });
    for (std::unique_ptr<NodeExecStats>& record : records) {
      auto& thread_names = *device_stats->mutable_thread_names();
      if (thread_names.find(record->thread_id()) == thread_names.end()) {
        thread_names[record->thread_id()] = "thread " + std::to_string(record->thread_id());
      }
      device_stats->mutable_node_stats()->AddAllocated(record.release());
    }
  }
  by_device_.clear();
}

int64_t NodeExecStatsRecorder::NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

NodeExecStatsRecorder::NodeExecStatsRecorder(const OpKernel& kernel, const std::string& label)
    : stats_(std::make_unique<NodeExecStats>()),
      start_ns_(NowNanos()),
      kernel_is_async_(dynamic_cast<const AsyncOpKernel*>(&kernel) != nullptr) {
  stats_->set_node_name(kernel.name());
  stats_->set_all_start_nanos(start_ns_);
  stats_->set_all_start_micros(start_ns_ / 1000);
  stats_->set_scheduled_nanos(start_ns_);
  stats_->set_scheduled_micros(start_ns_ / 1000);
  stats_->set_thread_id(CurrentThreadId());
  stats_->set_timeline_label(label);
}

void NodeExecStatsRecorder::KernelStarted() {
  const int64_t rel = NowNanos() - start_ns_;
  stats_->set_op_start_rel_nanos(rel);
  stats_->set_op_start_rel_micros(rel / 1000);
  if (!kernel_is_async_) allocations_ = std::make_unique<ScopedAllocationTracker>();
}

void NodeExecStatsRecorder::KernelDone(OpKernelContext* context) {
  const int64_t rel = NowNanos() - start_ns_;
  stats_->set_op_end_rel_nanos(rel);
  stats_->set_op_end_rel_micros(rel / 1000);
  for (int slot = 0; slot < context->num_outputs(); ++slot) {
    const TensorValue* value = context->mutable_output(slot);
    const Tensor* tensor = value->is_ref() ? nullptr : &value->tensor;
    if (tensor == nullptr || tensor->dtype() == DT_INVALID) continue;  // a ref or a dead output
    DescribeOutput(slot, *tensor, stats_->add_output());
  }
  if (allocations_ != nullptr && allocations_->total_bytes() > 0) {
    AllocatorMemoryUsed* memory = stats_->add_memory();
    memory->set_allocator_name(CpuAllocator::Name());
    memory->set_total_bytes(allocations_->total_bytes());
    memory->set_peak_bytes(allocations_->peak_bytes());
    memory->set_live_bytes(allocations_->live_bytes());
    memory->set_allocator_bytes_in_use(CpuAllocator::Get()->GetStats().bytes_in_use);
  }
  allocations_.reset();
}

std::unique_ptr<NodeExecStats> NodeExecStatsRecorder::Done() {
  const int64_t rel = NowNanos() - start_ns_;
  stats_->set_all_end_rel_nanos(rel);
  stats_->set_all_end_rel_micros(rel / 1000);
  return std::move(stats_);
}

std::string TimelineLabel(const Node& node) {
  // A transfer names the tensor it carries and the device at the other end,
  // as TensorFlow labels it: "name = _Recv(a:0 @/job:.../device:CPU:0)".
  const bool is_send = node.type_string() == "_Send";
  if (is_send || node.type_string() == "_Recv") {
    std::string tensor_name, peer;
    if (GetNodeAttr(node.def(), "tensor_name", &tensor_name).ok() &&
        GetNodeAttr(node.def(), is_send ? "recv_device" : "send_device", &peer).ok()) {
      return node.name() + " = " + node.type_string() + "(" + tensor_name + " @" + peer + ")";
    }
  }
  std::vector<std::string> inputs(node.num_inputs());
  std::vector<std::string> control;
  for (const Edge* edge : node.in_edges()) {
    if (edge->IsControlEdge()) {
      if (edge->src()->IsOp()) control.push_back("^" + edge->src()->name());
      continue;
    }
    std::string& input = inputs[edge->dst_input()];
    input = edge->src()->name();
    if (edge->src_output() > 0) input += ":" + std::to_string(edge->src_output());
  }
  std::string label = node.name() + " = " + node.type_string() + "(";
  bool first = true;
  for (const std::vector<std::string>* names : {&inputs, &control}) {
    for (const std::string& input : *names) {
      if (!first) label += ", ";
      label += input;
      first = false;
    }
  }
  label += ")";
  return label;
}

}  // namespace tensorweave
