#include "runtime/graph/control_flow.h"

#include <deque>
#include <string_view>
#include <unordered_map>

#include "runtime/framework/node_def_util.h"
#include "runtime/framework/str_util.h"

namespace tensorweave {
namespace {

// Views compare lengths first, so the usual non-control-flow op costs a
// size check, not a strcmp (these run for every node of every graph built).
bool TypeIs(const Node* node, std::string_view plain, std::string_view ref) {
  const std::string_view type = node->type_string();
  return type == plain || type == ref;
}

std::string FrameLabel(const ControlFlowInfo& info, int frame) {
  return frame == 0 ? std::string("the root frame")
                    : StrCat("frame '", info.frames[frame].name, "'");
}

}  // namespace

bool IsSwitchOp(const Node* node) { return TypeIs(node, "Switch", "RefSwitch"); }
bool IsMergeOp(const Node* node) { return TypeIs(node, "Merge", "RefMerge"); }
bool IsEnterOp(const Node* node) { return TypeIs(node, "Enter", "RefEnter"); }
bool IsExitOp(const Node* node) { return TypeIs(node, "Exit", "RefExit"); }
bool IsNextIterationOp(const Node* node) {
  return TypeIs(node, "NextIteration", "RefNextIteration");
}
bool IsControlTriggerOp(const Node* node) {
  return std::string_view(node->type_string()) == "ControlTrigger";
}
bool IsControlFlowOp(const Node* node) {
  return IsSwitchOp(node) || IsMergeOp(node) || IsEnterOp(node) || IsExitOp(node) ||
         IsNextIterationOp(node) || IsControlTriggerOp(node) ||
         std::string_view(node->type_string()) == "LoopCond";
}

Status BuildControlFlowInfo(const Graph& graph, ControlFlowInfo* info) {
  info->frames.assign(1, ControlFlowInfo::Frame());
  info->frame_of.assign(graph.num_node_ids(), -1);
  info->enters_frame.assign(graph.num_node_ids(), -1);
  std::unordered_map<std::string, int> frame_by_name;
  // The input through which each node got its frame, for error messages.
  std::vector<const Node*> reached_from(graph.num_node_ids(), nullptr);

  // Places `node` in `frame` (reached from `from`, null for a root).
  auto assign = [&](const Node* node, int frame, const Node* from) -> Status {
    if ((IsExitOp(node) || IsNextIterationOp(node)) && frame == 0) {
      return errors::InvalidArgument("Node '", node->name(), "' (", node->type_string(),
                                     ") is not inside any while loop: no Enter leads to it");
    }
    info->frame_of[node->id()] = frame;
    reached_from[node->id()] = from;
    if (!IsEnterOp(node)) return Status::OK();
    std::string name;
    TW_RETURN_IF_ERROR(GetNodeAttr(node->def(), "frame_name", &name));
    auto found = frame_by_name.find(name);
    int child;
    if (found == frame_by_name.end()) {
      child = static_cast<int>(info->frames.size());
      info->frames.push_back({name, frame, 0, 0});
      frame_by_name.emplace(name, child);
    } else {
      child = found->second;
      if (info->frames[child].parent != frame) {
        return errors::InvalidArgument("The Enter node '", node->name(), "' enters frame '", name,
                                       "' from ", FrameLabel(*info, frame),
                                       ", but other Enter nodes enter it from ",
                                       FrameLabel(*info, info->frames[child].parent));
      }
    }
    info->enters_frame[node->id()] = child;
    ++info->frames[child].num_enters;
    return Status::OK();
  };

  std::deque<const Node*> queue;
  for (const Node* node : graph.op_nodes()) {
    bool has_op_input = false;
    for (const Edge* edge : node->in_edges()) has_op_input |= edge->src()->IsOp();
    if (has_op_input) continue;
    TW_RETURN_IF_ERROR(assign(node, 0, nullptr));
    queue.push_back(node);
  }
  while (!queue.empty()) {
    const Node* node = queue.front();
    queue.pop_front();
    const int frame = info->frame_of[node->id()];
    int out_frame = frame;
    if (IsEnterOp(node)) out_frame = info->enters_frame[node->id()];
    if (IsExitOp(node)) {
      ++info->frames[frame].num_exits;
      out_frame = info->frames[frame].parent;
    }
    for (const Edge* edge : node->out_edges()) {
      const Node* dst = edge->dst();
      if (!dst->IsOp()) continue;
      const int known = info->frame_of[dst->id()];
      if (known < 0) {
        TW_RETURN_IF_ERROR(assign(dst, out_frame, node));
        queue.push_back(dst);
      } else if (known != out_frame) {
        const Node* other = reached_from[dst->id()];
        return errors::InvalidArgument(
            "The node '", dst->name(), "' has inputs from different frames. The input '",
            node->name(), "' is in ", FrameLabel(*info, out_frame), ". The input '",
            other == nullptr ? std::string("(none)") : other->name(), "' is in ",
            FrameLabel(*info, known), ".");
      }
    }
  }
  for (const Node* node : graph.op_nodes()) {
    if (info->frame_of[node->id()] < 0) {
      return errors::InvalidArgument("Node '", node->name(),
                                     "' is only reachable through a loop that no Enter node "
                                     "enters: every cycle must pass through a NextIteration and a "
                                     "Merge fed by an Enter");
    }
  }
  return Status::OK();
}

Status ValidateControlFlow(const Graph& graph) {
  ControlFlowInfo info;
  TW_RETURN_IF_ERROR(BuildControlFlowInfo(graph, &info));
  for (size_t f = 1; f < info.frames.size(); ++f) {
    if (info.frames[f].num_exits == 0) {
      return errors::InvalidArgument("While loop frame '", info.frames[f].name,
                                     "' has no Exit node: every Enter's frame needs a path to an "
                                     "Exit to hand its results back");
    }
  }
  return Status::OK();
}

}  // namespace tensorweave
