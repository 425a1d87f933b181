// Control-flow structure of a graph with TensorFlow 1.x while loops: which
// frame (loop body) each node runs in.
//
//   ControlFlowInfo info;
//   TW_RETURN_IF_ERROR(BuildControlFlowInfo(graph, &info));
//   const ControlFlowInfo::Frame& frame = info.frames[info.frame_of[node->id()]];
//
// Frames are found as TensorFlow finds them: walking forward from the nodes
// without inputs, a node is in the frame of its inputs, except that the
// consumers of an Enter are in the frame the Enter names (frame_name, a child
// of the Enter's own frame) and the consumers of an Exit are in the parent of
// the Exit's frame. The Enter itself runs in the outer frame, the Exit in the
// inner one. Frame 0 is the root frame (name "").
#ifndef TENSORWEAVE_GRAPH_CONTROL_FLOW_H_
#define TENSORWEAVE_GRAPH_CONTROL_FLOW_H_

#include <string>
#include <vector>

#include "runtime/graph/graph.h"

namespace tensorweave {

// Kinds of node the executor and the importer treat specially (the Ref
// variants included).
bool IsSwitchOp(const Node* node);
bool IsMergeOp(const Node* node);
bool IsEnterOp(const Node* node);
bool IsExitOp(const Node* node);
bool IsNextIterationOp(const Node* node);
bool IsControlTriggerOp(const Node* node);
// Any of the ops above or LoopCond: a graph without them runs on the
// executor's plain path.
bool IsControlFlowOp(const Node* node);

struct ControlFlowInfo {
  struct Frame {
    std::string name;  // the Enters' frame_name; "" for the root frame
    int parent = -1;   // index of the enclosing frame; -1 for the root
    int num_enters = 0;
    int num_exits = 0;
  };
  std::vector<Frame> frames;  // frames[0] is the root frame
  // Per node id: the index of the frame the node runs in (-1 for SOURCE,
  // SINK and removed ids).
  std::vector<int> frame_of;
  // Per node id: for an Enter, the index of the frame it enters; else -1.
  std::vector<int> enters_frame;
};

// Assigns every op node to its frame. INVALID_ARGUMENT naming the nodes for
// a node whose inputs come from different frames, an Exit or NextIteration
// outside every loop, one frame name entered from two different frames, and
// a node that no path from the graph's inputs reaches (a loop nothing
// enters).
Status BuildControlFlowInfo(const Graph& graph, ControlFlowInfo* info);

// BuildControlFlowInfo's checks, and every loop frame must have an Exit (a
// frame without one could never hand a result back). The importer runs it on
// graphs that contain control-flow ops.
Status ValidateControlFlow(const Graph& graph);

}  // namespace tensorweave

#endif  // TENSORWEAVE_GRAPH_CONTROL_FLOW_H_
