// FramePropagator: how the executor moves outputs to consumers in a graph
// with TensorFlow 1.x control flow (tf.cond's Switch/Merge, tf.while_loop's
// Enter/Exit/NextIteration). Graphs without those ops use the executor's
// plain propagator and pay nothing for this.
//
//   FramePropagator propagator(&graph_view);
//   TW_RETURN_IF_ERROR(propagator.Initialize(graph, index_of));
//   // per step:
//   propagator.StartStep(&step, &roots);            // root nodes, tagged
//   ... run a node's kernel, then:
//   propagator.Propagate(&step, tagged, outputs, &ready);  // outputs null: dead
//   propagator.EndStep(&step);
//
// The model is TensorFlow's (tensorflow/core/common_runtime/propagator_state):
// - Every node runs in a frame: the root frame, or one execution of a while
//   loop (a child frame, created by the first Enter that runs for it in a
//   given iteration of its parent). A frame has iterations; each iteration
//   keeps its own pending counts, dead counts and input slots.
// - A tensor may be dead (the untaken output of a Switch). A node with a dead
//   input is dead: its kernel is skipped and all its outputs (control edges
//   too) are dead. A Merge runs on its first live input and is dead only
//   when every data input is. A ControlTrigger is never dead.
// - Enter moves values into iteration 0 of its child frame (a constant Enter
//   into every iteration), NextIteration into the next iteration, Exit back
//   to the parent frame. At most parallel_iterations iterations of a frame
//   are alive at once: a NextIteration that would start one more waits until
//   the oldest finishes. The Exits of a frame that end dead make their
//   consumers in the parent dead once the frame is done.
// All of one step's frame bookkeeping is guarded by one lock.
#ifndef TENSORWEAVE_COMMON_RUNTIME_PROPAGATOR_STATE_H_
#define TENSORWEAVE_COMMON_RUNTIME_PROPAGATOR_STATE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/common_runtime/executor_internal.h"
#include "runtime/graph/graph.h"

namespace tensorweave {
namespace executor_internal {

// The lock around one step's frame bookkeeping. Each hold is one node's
// propagation (a few hundred instructions), taken once per node run, so an
// uncontended acquire must be cheap: one atomic exchange, where a
// std::mutex costs ~60 instructions a lock/unlock pair. A waiter spins
// briefly, then yields its core (the holder may have been descheduled).
class PropagationLock {
 public:
  void lock() {
    for (int spins = 0; locked_.exchange(true, std::memory_order_acquire); ++spins) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins > kSpinsBeforeYield) std::this_thread::yield();
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  static constexpr int kSpinsBeforeYield = 64;
  std::atomic<bool> locked_{false};
};

class FramePropagator {
 public:
  struct FrameState;

  // A node's counts in one iteration, side by side: Activate touches both.
  struct PendingCounts {
    int pending = 0;  // inputs still to come (for a Merge, see Initialize)
    int dead = 0;     // inputs that came dead
  };

  struct IterationState {
    int64_t iter = 0;
    std::vector<PendingCounts> counts;             // per frame-local node
    std::vector<std::vector<TensorValue>> inputs;  // per frame-local node, per slot
    int outstanding_ops = 0;                       // nodes of this iteration ready or running
    int outstanding_frames = 0;                    // child frames started from this iteration
  };

  // One unit of work: a node in a frame's iteration, live or dead.
  struct TaggedNode {
    int node;
    bool dead;
    FrameState* frame;
    IterationState* iteration;
  };

  struct StepData {
    PropagationLock mu;
    FrameState* root = nullptr;
    // Finished iterations, per static frame, reused by the next ones.
    std::vector<std::vector<std::unique_ptr<IterationState>>> spare;
  };

  explicit FramePropagator(const ExecutorGraph* graph) : graph_(graph) {}
  ~FramePropagator();

  // Finds the frames of `graph`, whose op node with id i has executor index
  // index_of[i]. INVALID_ARGUMENT for a malformed frame structure;
  // UNIMPLEMENTED for a client's fetch inside a loop, and for a loop cut by
  // _Send/_Recv without the control loops partitioning adds (partition.h).
  Status Initialize(const Graph& graph, const std::vector<int>& index_of);

  void StartStep(StepData* step, NodeStack<TaggedNode>* roots) const;
  // Frees the frames left over (a step that failed leaves some behind).
  void EndStep(StepData* step) const;

  static int NodeOf(const TaggedNode& tagged) { return tagged.node; }
  static bool IsDead(const TaggedNode& tagged) { return tagged.dead; }
  static FrameAndIter FrameIterOf(const TaggedNode& tagged);
  std::vector<TensorValue>* Inputs(const TaggedNode& tagged) const {
    return &tagged.iteration->inputs[node_info_[tagged.node].local];
  }

  // Delivers the outputs of a finished node (`outputs`: its num_outputs
  // values; null when the node was dead or has none) and appends the nodes it made
  // ready. Values of last uses are moved out of `outputs`.
  void Propagate(StepData* step, const TaggedNode& tagged, TensorValue* outputs,
                 NodeStack<TaggedNode>* ready) const;

 private:
  struct FrameInfo {
    std::string name;
    int parent = -1;
    int num_enters = 0;
    std::vector<PendingCounts> initial_counts;  // per frame-local node
    std::vector<int> num_inputs;                // per frame-local node
  };
  // What Activate needs of an out edge (parallel to ExecutorGraph::out_edges),
  // in one place rather than spread over the edge and its destination's
  // NodeInfo.
  struct EdgeInfo {
    int dst;
    int dst_local;
    int dst_input;
    int src_output;  // Graph::kControlSlot for a control edge
    int dst_num_data_inputs;
    bool last_use;
    bool dst_is_merge;
    bool dst_is_control_trigger;
  };
  // How Propagate hands on a node's outputs: within its iteration (most
  // nodes), or across a frame or iteration boundary. One field, so the
  // common case costs Propagate a single test.
  enum class Crossing : uint8_t { kNone, kEnter, kExit, kNextIteration };
  struct NodeInfo {
    int frame = 0;
    int local = 0;          // index within its frame's iteration state
    int enters_frame = -1;  // Enter: the static frame it enters
    int num_data_inputs = 0;
    int parallel_iterations = 1;  // Enter
    Crossing crossing = Crossing::kNone;
    bool is_merge = false;
    bool is_constant_enter = false;
    bool is_control_trigger = false;
  };

  int Activate(FrameState* frame, IterationState* iteration, int node, bool is_dead,
               TensorValue* outputs, bool may_move, NodeStack<TaggedNode>* ready) const;
  // An Enter's outputs go to the first iteration of its child frame (a
  // constant Enter's to every iteration, now and later).
  void PropagateEnter(StepData* step, FrameState* frame, IterationState* iteration, int node,
                      bool is_dead, TensorValue* outputs, NodeStack<TaggedNode>* ready) const;
  FrameState* FindOrCreateChild(StepData* step, FrameState* frame, IterationState* iteration,
                                int enter) const;
  IterationState* NewIteration(StepData* step, FrameState* frame, int64_t iter) const;
  IterationState* IncrementIteration(StepData* step, FrameState* frame,
                                     NodeStack<TaggedNode>* ready) const;
  // After the last op of `iteration` finished: frees the iterations of
  // `frame` that are done, oldest first, starting deferred ones; true when
  // the whole frame is done.
  bool CleanupIterations(StepData* step, FrameState* frame, IterationState* iteration,
                         NodeStack<TaggedNode>* ready) const;
  // Deletes a finished frame (its dead Exits make their consumers dead) and
  // any ancestors its completion finishes.
  void FinishFrame(StepData* step, FrameState* frame, NodeStack<TaggedNode>* ready) const;
  void DeleteFrame(StepData* step, FrameState* frame) const;

  const ExecutorGraph* graph_;
  std::vector<FrameInfo> frames_;  // frames_[0] is the root frame
  std::vector<NodeInfo> node_info_;
  std::vector<EdgeInfo> edges_;
};

}  // namespace executor_internal
}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_PROPAGATOR_STATE_H_
