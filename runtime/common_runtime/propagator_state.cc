#include "runtime/common_runtime/propagator_state.h"

#include <algorithm>
#include <deque>

#include "runtime/framework/node_def_util.h"
#include "runtime/framework/str_util.h"
#include "runtime/graph/control_flow.h"

namespace tensorweave {
namespace executor_internal {

struct FramePropagator::FrameState {
  int static_frame = 0;
  uint64_t frame_id = 0;                       // 0 for the root frame
  FrameState* parent = nullptr;                // null for the root frame
  IterationState* parent_iteration = nullptr;  // the iteration that entered it
  int64_t iteration_count = 0;                 // the newest iteration started
  int num_outstanding_iterations = 1;
  int num_pending_inputs = 0;  // Enters of this frame not run yet
  int max_parallel = 1;
  // The iterations alive, oldest first: first_alive, first_alive + 1, ...,
  // iteration_count. They finish in order, so only the oldest ever leaves.
  std::deque<IterationState*> alive;
  int64_t first_alive = 0;
  // NextIteration values waiting for an iteration slot (parallel_iterations
  // reached), and the values of constant Enters, seen by every iteration.
  std::vector<std::pair<int, TensorValue>> next_iteration_values;
  std::vector<std::pair<int, TensorValue>> loop_invariants;
  // Exits that were dead in the newest iteration: once the frame is done
  // their consumers in the parent are dead.
  std::vector<int> dead_exits;
  std::map<std::pair<int, IterationState*>, FrameState*> children;

  IterationState* Get(int64_t iter) const {
    const int64_t offset = iter - first_alive;
    return offset >= 0 && offset < static_cast<int64_t>(alive.size()) ? alive[offset] : nullptr;
  }
};

namespace {

// FNV-1a over the parent frame's id, the parent iteration and the frame's
// name: every partition of a step names a frame instance alike.
uint64_t ChildFrameId(uint64_t parent_id, int64_t parent_iter, const std::string& name) {
  const std::string text = StrCat(parent_id, ";", parent_iter, ";", name);
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash == 0 ? 1 : hash;  // 0 is the root frame
}

}  // namespace

FrameAndIter FramePropagator::FrameIterOf(const TaggedNode& tagged) {
  FrameAndIter frame_iter;
  frame_iter.frame_id = tagged.frame->frame_id;
  frame_iter.iter_id = tagged.iteration->iter;
  return frame_iter;
}

FramePropagator::~FramePropagator() = default;

Status FramePropagator::Initialize(const Graph& graph, const std::vector<int>& index_of) {
  ControlFlowInfo info;
  const Status frames = BuildControlFlowInfo(graph, &info);
  if (!frames.ok()) {
    // Imported graphs have valid frames (the importer checks them), so a
    // partition whose frames are broken had a loop cut by _Send/_Recv.
    const bool has_transfer = std::any_of(graph_->items.begin(), graph_->items.end(),
                                          [](const NodeItem& item) { return item.is_transfer; });
    if (!has_transfer) return frames;
    return errors::Unimplemented(
        "A while loop spans devices: its nodes were placed on more than one device, and loops "
        "that span devices are not supported yet; place the whole loop on one device (",
        frames.message(), ")");
  }
  frames_.resize(info.frames.size());
  for (size_t f = 0; f < info.frames.size(); ++f) {
    frames_[f].name = info.frames[f].name;
    frames_[f].parent = info.frames[f].parent;
    frames_[f].num_enters = info.frames[f].num_enters;
  }
  node_info_.resize(graph_->items.size());
  for (const Node* node : graph.op_nodes()) {
    const int index = index_of[node->id()];
    const NodeItem& item = graph_->items[index];
    NodeInfo& n = node_info_[index];
    n.frame = info.frame_of[node->id()];
    FrameInfo& frame = frames_[n.frame];
    n.local = static_cast<int>(frame.initial_counts.size());
    n.num_data_inputs = node->num_inputs();
    n.is_merge = IsMergeOp(node);
    n.is_control_trigger = IsControlTriggerOp(node);
    if (IsEnterOp(node)) {
      n.crossing = Crossing::kEnter;
    } else if (IsExitOp(node)) {
      n.crossing = Crossing::kExit;
    } else if (IsNextIterationOp(node)) {
      n.crossing = Crossing::kNextIteration;
    }
    if (n.frame != 0 && item.is_client_fetch) {
      return errors::Unimplemented("The fetch sent by '", node->name(),
                                   "' is inside the while loop '", info.frames[n.frame].name,
                                   "'; fetching a tensor from inside a loop is not supported by "
                                   "remote sessions");
    }
    if (n.crossing == Crossing::kEnter) {
      n.enters_frame = info.enters_frame[node->id()];
      TW_RETURN_IF_ERROR(GetNodeAttr(node->def(), "is_constant", &n.is_constant_enter));
      int64_t parallel = 0;
      TW_RETURN_IF_ERROR(GetNodeAttr(node->def(), "parallel_iterations", &parallel));
      if (parallel < 1) {
        return errors::InvalidArgument("The Enter node '", node->name(),
                                       "' has parallel_iterations ", parallel,
                                       "; it must be at least 1");
      }
      n.parallel_iterations = static_cast<int>(std::min<int64_t>(parallel, INT32_MAX));
    }
    int pending = item.initial_pending;
    if (n.is_merge) {
      // The low bit stands for "no live data input yet"; each control input
      // counts 2. A Merge is ready when only the low bit is left and a live
      // input arrives, or when every data input arrived dead.
      int controls = 0;
      for (const Edge* edge : node->in_edges())
        controls += edge->IsControlEdge() && edge->src()->IsOp();
      pending = 1 + 2 * controls;
    }
    frame.initial_counts.push_back({pending, 0});
    frame.num_inputs.push_back(node->num_inputs());
  }
  edges_.reserve(graph_->out_edges.size());
  for (const OutEdge& edge : graph_->out_edges) {
    const NodeInfo& dst = node_info_[edge.dst];
    edges_.push_back({edge.dst, dst.local, edge.dst_input, edge.src_output, dst.num_data_inputs,
                      edge.last_use, dst.is_merge, dst.is_control_trigger});
  }
  return Status::OK();
}

void FramePropagator::StartStep(StepData* step, NodeStack<TaggedNode>* roots) const {
  if (step->spare.size() != frames_.size()) step->spare.resize(frames_.size());
  auto* root = new FrameState;
  IterationState* first = NewIteration(step, root, 0);
  root->alive.push_back(first);
  step->root = root;
  for (int node : graph_->roots) roots->push({node, false, root, first});
  first->outstanding_ops = static_cast<int>(graph_->roots.size());
}

void FramePropagator::EndStep(StepData* step) const {
  std::lock_guard<PropagationLock> lock(step->mu);
  DeleteFrame(step, step->root);
  step->root = nullptr;
}

FramePropagator::IterationState* FramePropagator::NewIteration(StepData* step, FrameState* frame,
                                                               int64_t iter) const {
  const FrameInfo& info = frames_[frame->static_frame];
  std::vector<std::unique_ptr<IterationState>>& spare = step->spare[frame->static_frame];
  std::unique_ptr<IterationState> state;
  if (!spare.empty()) {
    state = std::move(spare.back());
    spare.pop_back();
  } else {
    state = std::make_unique<IterationState>();
    state->inputs.resize(info.num_inputs.size());
    for (size_t l = 0; l < info.num_inputs.size(); ++l) state->inputs[l].resize(info.num_inputs[l]);
  }
  state->iter = iter;
  state->counts = info.initial_counts;
  state->outstanding_ops = 0;
  state->outstanding_frames = 0;
  return state.release();
}

int FramePropagator::Activate(FrameState* frame, IterationState* iteration, int node, bool is_dead,
                              TensorValue* outputs, bool may_move,
                              NodeStack<TaggedNode>* ready) const {
  const NodeItem& item = graph_->items[node];
  const bool from_enter = node_info_[node].crossing == Crossing::kEnter;
  int activated = 0;
  for (int e = item.out_begin; e < item.out_end; ++e) {
    const EdgeInfo& edge = edges_[e];
    const bool is_control = edge.src_output < 0;
    const bool live =
        !is_dead && !is_control && outputs != nullptr && HasValue(outputs[edge.src_output]);
    PendingCounts& counts = iteration->counts[edge.dst_local];
    int& pending = counts.pending;
    int& dead = counts.dead;
    bool dst_dead = false;
    bool dst_ready = false;
    bool needs_input = false;
    if (edge.dst_is_merge) {
      if (is_control) {
        pending -= 2;
        dst_dead = dead == edge.dst_num_data_inputs;
        dst_ready = pending == 0 || (pending == 1 && dst_dead);
      } else if (live) {
        // Only the first live input is kept and may start the Merge.
        needs_input = (pending & 1) == 1;
        dst_ready = pending == 1;
        pending &= ~1;
      } else {
        // A dead Enter makes the Merge of a loop dead at once: its other
        // input, the back edge, never comes (a loop in an untaken branch).
        ++dead;
        dst_dead = dead == edge.dst_num_data_inputs || from_enter;
        dst_ready = pending == 1 && dst_dead;
      }
    } else {
      if (is_dead || (!is_control && !live)) ++dead;
      dst_dead = dead > 0;
      dst_ready = --pending == 0;
      needs_input = live;
    }
    if (needs_input) {
      TensorValue& slot = iteration->inputs[edge.dst_local][edge.dst_input];
      if (may_move && edge.last_use) {
        slot = std::move(outputs[edge.src_output]);
      } else {
        slot = outputs[edge.src_output];
      }
    }
    if (dst_ready) {
      if (edge.dst_is_control_trigger) dst_dead = false;
      TaggedNode* tagged = ready->emplace();
      tagged->node = edge.dst;
      tagged->dead = dst_dead;
      tagged->frame = frame;
      tagged->iteration = iteration;
      ++iteration->outstanding_ops;
      ++activated;
    }
  }
  return activated;
}

void FramePropagator::Propagate(StepData* step, const TaggedNode& tagged, TensorValue* outputs,
                                NodeStack<TaggedNode>* ready) const {
  const int node = tagged.node;
  const NodeInfo& info = node_info_[node];
  const bool is_dead = tagged.dead;
  FrameState* frame = tagged.frame;
  IterationState* iteration = tagged.iteration;
  std::lock_guard<PropagationLock> lock(step->mu);
  switch (info.crossing) {
    case Crossing::kNone:
      Activate(frame, iteration, node, is_dead, outputs, true, ready);
      break;
    case Crossing::kEnter:
      PropagateEnter(step, frame, iteration, node, is_dead, outputs, ready);
      break;
    case Crossing::kExit:
      if (is_dead) {
        if (iteration->iter == frame->iteration_count) frame->dead_exits.push_back(node);
      } else {
        Activate(frame->parent, frame->parent_iteration, node, false, outputs, true, ready);
      }
      break;
    case Crossing::kNextIteration:
      // A dead NextIteration ends its deadness here: the loop is over.
      if (is_dead) break;
      if (iteration->iter == frame->iteration_count &&
          frame->num_outstanding_iterations == frame->max_parallel) {
        frame->next_iteration_values.push_back({node, std::move(outputs[0])});
      } else {
        IterationState* next = iteration->iter == frame->iteration_count
                                   ? IncrementIteration(step, frame, ready)
                                   : frame->Get(iteration->iter + 1);
        Activate(frame, next, node, false, outputs, true, ready);
      }
      break;
  }
  // This node no longer counts against its iteration; the rest only matters
  // when that was the iteration's last piece of work.
  if (--iteration->outstanding_ops > 0 || iteration->outstanding_frames > 0) return;
  if (CleanupIterations(step, frame, iteration, ready)) FinishFrame(step, frame, ready);
}

void FramePropagator::PropagateEnter(StepData* step, FrameState* frame, IterationState* iteration,
                                     int node, bool is_dead, TensorValue* outputs,
                                     NodeStack<TaggedNode>* ready) const {
  FrameState* child = FindOrCreateChild(step, frame, iteration, node);
  if (node_info_[node].is_constant_enter) {
    child->loop_invariants.push_back({node, is_dead ? TensorValue() : outputs[0]});
    TensorValue* value = &child->loop_invariants.back().second;
    for (int64_t i = 0; i <= child->iteration_count; ++i) {
      IterationState* alive = child->Get(i);
      if (alive != nullptr) Activate(child, alive, node, is_dead, value, false, ready);
    }
  } else {
    IterationState* first = child->Get(0);
    if (first != nullptr) Activate(child, first, node, is_dead, outputs, true, ready);
  }
  --child->num_pending_inputs;
  // The last Enter may find the child's work all finished already (every
  // value it got was dead): then the child is done now.
  IterationState* first = child->Get(0);
  if (child->num_pending_inputs == 0 && first != nullptr && first->outstanding_ops == 0 &&
      first->outstanding_frames == 0 && CleanupIterations(step, child, first, ready)) {
    FinishFrame(step, child, ready);
  }
}

FramePropagator::FrameState* FramePropagator::FindOrCreateChild(StepData* step, FrameState* frame,
                                                                IterationState* iteration,
                                                                int enter) const {
  const NodeInfo& info = node_info_[enter];
  const auto key = std::make_pair(info.enters_frame, iteration);
  auto found = frame->children.find(key);
  if (found != frame->children.end()) return found->second;
  auto* child = new FrameState;
  child->static_frame = info.enters_frame;
  child->frame_id = ChildFrameId(frame->frame_id, iteration->iter, frames_[info.enters_frame].name);
  child->parent = frame;
  child->parent_iteration = iteration;
  child->max_parallel = info.parallel_iterations;
  child->num_pending_inputs = frames_[info.enters_frame].num_enters;
  child->alive.push_back(NewIteration(step, child, 0));
  frame->children.emplace(key, child);
  ++iteration->outstanding_frames;
  return child;
}

FramePropagator::IterationState* FramePropagator::IncrementIteration(
    StepData* step, FrameState* frame, NodeStack<TaggedNode>* ready) const {
  const int64_t iter = ++frame->iteration_count;
  IterationState* state = NewIteration(step, frame, iter);
  frame->alive.push_back(state);
  ++frame->num_outstanding_iterations;
  frame->dead_exits.clear();
  std::vector<std::pair<int, TensorValue>> deferred;
  deferred.swap(frame->next_iteration_values);
  for (auto& [node, value] : deferred) Activate(frame, state, node, false, &value, true, ready);
  for (auto& [node, value] : frame->loop_invariants) {
    Activate(frame, state, node, !HasValue(value), &value, false, ready);
  }
  return state;
}

bool FramePropagator::CleanupIterations(StepData* step, FrameState* frame,
                                        IterationState* iteration,
                                        NodeStack<TaggedNode>* ready) const {
  if (frame->parent == nullptr) return false;  // the root frame lives for the whole step
  auto is_done = [frame](const IterationState* state) {
    if (state->outstanding_ops > 0 || state->outstanding_frames > 0) return false;
    // Iteration 0 may still get values from Enters not run yet; a later one
    // finishes only after the one before it.
    return state->iter == 0 ? frame->num_pending_inputs == 0
                            : frame->Get(state->iter - 1) == nullptr;
  };
  IterationState* state = iteration;
  while (state != nullptr && is_done(state)) {
    const int64_t iter = state->iter;
    frame->alive.pop_front();  // `state`: the oldest, since the one before is gone
    ++frame->first_alive;
    for (std::vector<TensorValue>& inputs : state->inputs) ReleaseValues(&inputs);
    step->spare[frame->static_frame].emplace_back(state);
    --frame->num_outstanding_iterations;
    // A slot is free: start the iteration a NextIteration had to defer.
    if (!frame->next_iteration_values.empty()) IncrementIteration(step, frame, ready);
    state = iter + 1 <= frame->iteration_count ? frame->Get(iter + 1) : nullptr;
  }
  return frame->num_pending_inputs == 0 && frame->num_outstanding_iterations == 0;
}

void FramePropagator::FinishFrame(StepData* step, FrameState* frame,
                                  NodeStack<TaggedNode>* ready) const {
  while (frame->parent != nullptr) {
    FrameState* parent = frame->parent;
    IterationState* parent_iteration = frame->parent_iteration;
    for (int exit : frame->dead_exits) {
      Activate(parent, parent_iteration, exit, true, nullptr, false, ready);
    }
    parent->children.erase(std::make_pair(frame->static_frame, parent_iteration));
    --parent_iteration->outstanding_frames;
    DeleteFrame(step, frame);
    if (parent_iteration->outstanding_ops > 0 || parent_iteration->outstanding_frames > 0 ||
        !CleanupIterations(step, parent, parent_iteration, ready)) {
      return;
    }
    frame = parent;
  }
}

void FramePropagator::DeleteFrame(StepData* step, FrameState* frame) const {
  if (frame == nullptr) return;
  for (auto& [key, child] : frame->children) DeleteFrame(step, child);
  for (IterationState* state : frame->alive) {
    for (std::vector<TensorValue>& inputs : state->inputs) ReleaseValues(&inputs);
    step->spare[frame->static_frame].emplace_back(state);
  }
  delete frame;
}

}  // namespace executor_internal
}  // namespace tensorweave
