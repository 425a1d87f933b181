// The executor's static view of a graph, shared by its two propagators (the
// plain one in executor.cc and the one with frames in propagator_state.h).
// Internal to runtime/common_runtime.
#ifndef TENSORWEAVE_COMMON_RUNTIME_EXECUTOR_INTERNAL_H_
#define TENSORWEAVE_COMMON_RUNTIME_EXECUTOR_INTERNAL_H_

#include <string>
#include <vector>

#include "runtime/framework/op_kernel.h"

namespace tensorweave {
namespace executor_internal {

struct OutEdge {
  int dst;         // node index
  int src_output;  // Graph::kControlSlot for a control edge
  int dst_input;   // input slot of dst (data edges)
  bool last_use;   // the last edge reading src_output may move the value
};

struct NodeItem {
  OpKernel* kernel = nullptr;
  AsyncOpKernel* async = nullptr;  // non-null for async kernels
  bool declares_expensive = false;
  // Switch fills one of its two outputs; the empty one is a dead tensor.
  bool outputs_optional = false;
  // _Send/_Recv.
  bool is_transfer = false;
  // Transfers between partitions run even when dead, to hand the deadness
  // over to the other side.
  bool runs_when_dead = false;
  // A _Send that hands a fetch to the client (client_terminated).
  bool is_client_fetch = false;
  // A _Recv of a value from another partition (not a client's feed): its
  // sender may be dead.
  bool is_peer_recv = false;
  // Some producer feeding this node declares a reference output, so an
  // input may be a variable to read (PrepareInputs); false for most nodes.
  bool may_get_ref = false;
  int retval_index = -1;    // the fetch a _Retval fills; -1 for other nodes
  int retval_ordinal = -1;  // which _Retval of the graph (0, 1, ...); -1 for others
  int num_inputs = 0;
  int initial_pending = 0;  // in-edges from other op nodes, data and control
  int out_begin = 0;        // [out_begin, out_end) in ExecutorGraph::out_edges
  int out_end = 0;
  // [check_begin, check_end) in ExecutorGraph::checked_outputs.
  int check_begin = 0;
  int check_end = 0;
};

// An output slot that has consumers and the dtype it must hold.
struct CheckedOutput {
  int slot;
  DataType dtype;  // the kernel's declared type, without the reference
};

// Nodes by dense index (SOURCE and SINK are not executed).
struct ExecutorGraph {
  std::vector<NodeItem> items;
  std::vector<OutEdge> out_edges;
  // Per node, each output slot read by an out edge, once, in edge order.
  std::vector<CheckedOutput> checked_outputs;
  std::vector<int> roots;  // nodes with nothing pending at the start
  // Per node: "name = Op(inputs)", for traced steps (step_stats_collector.h).
  std::vector<std::string> timeline_labels;
};

// A stack that lives on the C++ stack for the common sizes.
template <typename T>
class NodeStack {
 public:
  bool empty() const { return size_ == 0; }
  int size() const { return size_; }
  const T& operator[](int i) const { return i < kInline ? inline_[i] : overflow_[i - kInline]; }
  void push(const T& node) {
    if (size_ < kInline) {
      inline_[size_] = node;
    } else {
      overflow_.push_back(node);
    }
    ++size_;
  }
  // A new slot on top, for the caller to fill in place (field by field:
  // building a T elsewhere and copying it stalls on store forwarding).
  T* emplace() {
    if (size_ < kInline) return &inline_[size_++];
    ++size_;
    overflow_.emplace_back();
    return &overflow_.back();
  }
  T pop() {
    --size_;
    if (size_ < kInline) return inline_[size_];
    T node = overflow_.back();
    overflow_.pop_back();
    return node;
  }

 private:
  static constexpr int kInline = 16;
  T inline_[kInline];
  int size_ = 0;
  std::vector<T> overflow_;
};

// Whether an output slot holds a value (a live tensor or a reference).
inline bool HasValue(const TensorValue& value) {
  return value.is_ref() || value.tensor.dtype() != DT_INVALID;
}

// Empties input slots, skipping the ones already empty (most are: a value
// is moved to its consumer and the consumer's slots are emptied after it
// ran). A slot without a value holds no buffer.
inline void ReleaseValues(std::vector<TensorValue>* values) {
  for (TensorValue& value : *values) {
    if (HasValue(value)) value = TensorValue();
  }
}

}  // namespace executor_internal
}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_EXECUTOR_INTERNAL_H_
