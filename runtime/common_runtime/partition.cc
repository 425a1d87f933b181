#include "runtime/common_runtime/partition.h"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/framework/node_def_util.h"
#include "runtime/graph/control_flow.h"

namespace tensorweave {

namespace {

void SetAttr(NodeDef* def, const std::string& name, const std::string& value) {
  SetAttrValue(value, &(*def->mutable_attr())[name]);
}
void SetAttr(NodeDef* def, const std::string& name, DataType value) {
  SetAttrValue(value, &(*def->mutable_attr())[name]);
}
void SetAttr(NodeDef* def, const std::string& name, int64_t value) {
  SetAttrValue(value, &(*def->mutable_attr())[name]);
}
void SetAttr(NodeDef* def, const std::string& name, bool value) {
  SetAttrValue(value, &(*def->mutable_attr())[name]);
}

// The attrs _Send and _Recv share; they decide the rendezvous key.
void SetTransferAttrs(NodeDef* def, const std::string& tensor_name, const std::string& send_device,
                      uint64_t send_device_incarnation, const std::string& recv_device) {
  SetAttr(def, "tensor_name", tensor_name);
  SetAttr(def, "send_device", send_device);
  // The attr is an int64 in TensorFlow's OpDef; the bits are the uint64.
  SetAttr(def, "send_device_incarnation", static_cast<int64_t>(send_device_incarnation));
  SetAttr(def, "recv_device", recv_device);
  SetAttr(def, "client_terminated", false);
}

class Partitioner {
 public:
  Partitioner(const PartitionOptions& options, const Graph& graph,
              std::map<std::string, std::unique_ptr<Graph>>* partitions)
      : options_(options),
        graph_(graph),
        partitions_(partitions),
        copies_(graph.num_node_ids(), nullptr),
        partition_of_(graph.num_node_ids(), nullptr) {}

  Status Run() {
    partitions_->clear();
    TW_RETURN_IF_ERROR(FindFrames());
    for (Node* node : graph_.op_nodes()) TW_RETURN_IF_ERROR(CopyNode(node));
    for (Node* node : graph_.op_nodes()) {
      for (const Edge* edge : node->in_edges()) {
        if (edge->src()->IsOp()) TW_RETURN_IF_ERROR(CopyEdge(edge));
      }
    }
    return Status::OK();
  }

 private:
  Graph* PartitionFor(const std::string& device) {
    std::unique_ptr<Graph>& partition = (*partitions_)[device];
    if (!partition) {
      partition = std::make_unique<Graph>(graph_.op_registry());
      partition->set_versions(graph_.versions());
    }
    return partition.get();
  }

  Status AddPlacedNode(Graph* partition, const NodeDef& def, const std::string& device,
                       Node** added) {
    TW_RETURN_IF_ERROR(partition->AddNode(def, added));
    (*added)->set_assigned_device_name(device);
    return Status::OK();
  }

  std::string LocationOf(const Node& node) const {
    return options_.node_to_location ? options_.node_to_location(node)
                                     : node.assigned_device_name();
  }

  Status CopyNode(const Node* node) {
    const std::string& device = node->assigned_device_name();
    if (device.empty()) {
      return errors::Internal("Node '", node->name(), "' was not placed before partitioning");
    }
    Graph* partition = PartitionFor(LocationOf(*node));
    partition_of_[node->id()] = partition;
    // A node's def holds no inputs (edges carry them), so it is added as is
    // and its copy then asks for the device it was placed on: one NodeDef
    // copy per node instead of two.
    Node*& copy = copies_[node->id()];
    TW_RETURN_IF_ERROR(AddPlacedNode(partition, node->def(), device, &copy));
    copy->set_requested_device(device);
    return Status::OK();
  }

  Status CopyEdge(const Edge* edge) {
    const Node* src = edge->src();
    const Node* dst = edge->dst();
    // One partition per location, so equal partitions mean equal locations
    // (without building two location strings per edge).
    Graph* dst_partition = partition_of_[dst->id()];
    if (partition_of_[src->id()] == dst_partition) {
      if (edge->IsControlEdge()) {
        dst_partition->AddControlEdge(copies_[src->id()], copies_[dst->id()]);
        return Status::OK();
      }
      return dst_partition->AddEdge(copies_[src->id()], edge->src_output(), copies_[dst->id()],
                                    edge->dst_input());
    }
    Node* recv = nullptr;
    TW_RETURN_IF_ERROR(RecvFor(edge, &recv));
    if (edge->IsControlEdge()) {
      dst_partition->AddControlEdge(recv, copies_[dst->id()]);
      return Status::OK();
    }
    return dst_partition->AddEdge(recv, 0, copies_[dst->id()], edge->dst_input());
  }

  // The _Recv on the edge's destination device that delivers the edge's
  // tensor (or, for a control edge, the signal), creating the pair once.
  Status RecvFor(const Edge* edge, Node** recv) {
    const int slot = edge->IsControlEdge() ? Graph::kControlSlot : edge->src_output();
    return RecvOf(edge->src(), slot, *edge->dst(), TransferFrame(edge->src(), edge->dst()),
                  StrCat("edge_", edge->id(), "_", edge->src()->name()), recv);
  }

  // The _Recv next to `reader` (in its partition, on its device) of output
  // `slot` of `src` (kControlSlot: a signal that `src` ran), created with its
  // _Send once per source output and device. `frame` > 0: the pair sits in
  // that loop frame and the receiver runs once per iteration.
  Status RecvOf(const Node* src, int slot, const Node& reader, int frame,
                const std::string& tensor_name, Node** recv) {
    const std::string& src_device = src->assigned_device_name();
    const std::string& dst_device = reader.assigned_device_name();
    Node*& cached = recvs_[std::make_tuple(src->id(), slot, dst_device)];
    if (cached != nullptr) {
      *recv = cached;
      return Status::OK();
    }
    Graph* src_partition = PartitionFor(LocationOf(*src));
    Graph* dst_partition = PartitionFor(LocationOf(reader));
    const uint64_t incarnation =
        options_.device_incarnation ? options_.device_incarnation(src_device) : 1;

    Node* sent = copies_[src->id()];
    int sent_output = slot;
    DataType dtype = DT_FLOAT;
    if (slot == Graph::kControlSlot) {
      // A control edge carries no tensor, so send a tiny one that becomes
      // available only after `src` ran.
      NodeDef dummy;
      dummy.set_name(src_partition->NewName(src->name() + "/_control_signal"));
      dummy.set_op("Const");
      SetAttr(&dummy, "dtype", DT_FLOAT);
      Tensor zero(DT_FLOAT, TensorShape());
      zero.data<float>()[0] = 0.0f;
      SetAttrValue(zero, &(*dummy.mutable_attr())["value"]);
      TW_RETURN_IF_ERROR(AddPlacedNode(src_partition, dummy, src_device, &sent));
      src_partition->AddControlEdge(copies_[src->id()], sent);
      sent_output = 0;
    } else {
      dtype = BaseType(src->output_type(slot));
    }

    // Named after the first reader too, so errors raised at the _Send (an
    // uninitialized variable read across devices) point at who wanted it.
    NodeDef send;
    send.set_name(src_partition->NewName(src->name() + "/_send_for_" + reader.name()));
    send.set_op("_Send");
    SetAttr(&send, "T", dtype);
    SetTransferAttrs(&send, tensor_name, src_device, incarnation, dst_device);
    Node* send_node = nullptr;
    TW_RETURN_IF_ERROR(AddPlacedNode(src_partition, send, src_device, &send_node));
    TW_RETURN_IF_ERROR(src_partition->AddEdge(sent, sent_output, send_node, 0));

    NodeDef receive;
    receive.set_name(dst_partition->NewName(src->name() + "/_recv"));
    receive.set_op("_Recv");
    SetAttr(&receive, "tensor_type", dtype);
    SetTransferAttrs(&receive, tensor_name, src_device, incarnation, dst_device);
    TW_RETURN_IF_ERROR(AddPlacedNode(dst_partition, receive, dst_device, recv));
    cached = *recv;
    // Inside a loop the receiver runs once per iteration, driven by the
    // control loop of its frame on its own side.
    if (frame > 0) {
      Node* merge = nullptr;
      TW_RETURN_IF_ERROR(ControlLoopMerge(frame, reader, &merge));
      dst_partition->AddControlEdge(merge, *recv);
    }
    return Status::OK();
  }

  // --- Loops that span partitions ------------------------------------------
  //
  // As TensorFlow does it: in every partition that receives a value inside a
  // loop frame, a control loop of that frame (Enter of a dummy value, Merge,
  // Switch on the loop's predicate, NextIteration) iterates in step with the
  // real loop. Its Merge fires once per iteration and starts the frame's
  // receivers there; the predicate (the frame's LoopCond, sent over when it
  // lives elsewhere) ends it when the real loop ends. Nested frames stack
  // their control loops: the outer one's Merge feeds the inner one's Enter.

  Status FindFrames() {
    const std::vector<Node*> nodes = graph_.op_nodes();
    if (std::none_of(nodes.begin(), nodes.end(), [](const Node* n) { return IsEnterOp(n); })) {
      return Status::OK();  // no loops: frame_of_ stays empty
    }
    TW_RETURN_IF_ERROR(BuildControlFlowInfo(graph_, &cf_info_));
    frame_pivots_.assign(cf_info_.frames.size(), {nullptr, 0});
    frame_parallel_.assign(cf_info_.frames.size(), 10);
    for (Node* node : nodes) {
      const int frame = cf_info_.frame_of[node->id()];
      if (node->type_string() == "LoopCond") {
        frame_pivots_[frame] = {node, 0};
      } else if (IsEnterOp(node)) {
        int64_t parallel = 10;
        TW_RETURN_IF_ERROR(GetNodeAttr(node->def(), "parallel_iterations", &parallel));
        frame_parallel_[cf_info_.enters_frame[node->id()]] = parallel;
      }
    }
    // A graph that is itself a partition may hold a control loop of a frame
    // whose LoopCond lives elsewhere: its Switch's predicate stands in.
    for (Node* node : nodes) {
      const int frame = cf_info_.frame_of[node->id()];
      if (IsSwitchOp(node) && IsControlLoopNode(*node) && frame_pivots_[frame].first == nullptr) {
        for (const Edge* edge : node->in_edges()) {
          if (edge->dst_input() == 1) frame_pivots_[frame] = {edge->src(), edge->src_output()};
        }
      }
    }
    return Status::OK();
  }

  static bool IsControlLoopNode(const Node& node) { return node.name().rfind("_cloop", 0) == 0; }

  // The loop frame an edge from `src` to `dst` carries its value in, or 0
  // (the root frame) when there is none or the two ends differ (an Enter's
  // input comes from outside the loop, an Exit's output goes outside).
  int TransferFrame(const Node* src, const Node* dst) const {
    if (cf_info_.frame_of.empty()) return 0;
    // An Enter runs outside its frame but its output is inside; an Exit the
    // other way round.
    int src_frame = cf_info_.frame_of[src->id()];
    if (IsEnterOp(src)) src_frame = cf_info_.enters_frame[src->id()];
    if (IsExitOp(src)) src_frame = cf_info_.frames[src_frame].parent;
    const int dst_frame = cf_info_.frame_of[dst->id()];  // an Enter runs outside its frame
    return src_frame == dst_frame ? src_frame : 0;
  }

  // The Merge of the control loop of `frame` in the partition of `dst`,
  // built on first use (with those of the frames around it).
  Status ControlLoopMerge(int frame, const Node& dst, Node** merge) {
    const std::string location = LocationOf(dst);
    const std::string& device = dst.assigned_device_name();
    Node*& cached = control_loops_[std::make_pair(frame, location)];
    if (cached != nullptr) {
      *merge = cached;
      return Status::OK();
    }
    const ControlFlowInfo::Frame& info = cf_info_.frames[frame];
    const std::pair<Node*, int> pivot = frame_pivots_[frame];
    if (pivot.first == nullptr) {
      return errors::InvalidArgument("The while loop '", info.name,
                                     "' spans devices but has no LoopCond to drive it");
    }
    Graph* partition = PartitionFor(location);
    // What enters the control loop: the outer control loop's Merge, or at
    // the root a dummy constant.
    Node* outer = nullptr;
    if (info.parent > 0) {
      TW_RETURN_IF_ERROR(ControlLoopMerge(info.parent, dst, &outer));
    } else {
      NodeDef dummy;
      dummy.set_name(partition->NewName("_cloop/" + info.name + "/start"));
      dummy.set_op("Const");
      SetAttr(&dummy, "dtype", DT_FLOAT);
      SetAttrValue(Tensor(DT_FLOAT, TensorShape({0})), &(*dummy.mutable_attr())["value"]);
      TW_RETURN_IF_ERROR(AddPlacedNode(partition, dummy, device, &outer));
    }
    const std::string prefix = "_cloop/" + info.name + "/";
    NodeDef enter_def;
    enter_def.set_name(partition->NewName(prefix + "Enter"));
    enter_def.set_op("Enter");
    SetAttr(&enter_def, "T", DT_FLOAT);
    SetAttr(&enter_def, "frame_name", info.name);
    SetAttr(&enter_def, "is_constant", false);
    SetAttr(&enter_def, "parallel_iterations", frame_parallel_[frame]);
    NodeDef merge_def;
    merge_def.set_name(partition->NewName(prefix + "Merge"));
    merge_def.set_op("Merge");
    SetAttr(&merge_def, "T", DT_FLOAT);
    SetAttr(&merge_def, "N", int64_t{2});
    NodeDef switch_def;
    switch_def.set_name(partition->NewName(prefix + "Switch"));
    switch_def.set_op("Switch");
    SetAttr(&switch_def, "T", DT_FLOAT);
    NodeDef next_def;
    next_def.set_name(partition->NewName(prefix + "NextIteration"));
    next_def.set_op("NextIteration");
    SetAttr(&next_def, "T", DT_FLOAT);
    Node *enter, *switch_node, *next;
    TW_RETURN_IF_ERROR(AddPlacedNode(partition, enter_def, device, &enter));
    TW_RETURN_IF_ERROR(AddPlacedNode(partition, merge_def, device, merge));
    TW_RETURN_IF_ERROR(AddPlacedNode(partition, switch_def, device, &switch_node));
    TW_RETURN_IF_ERROR(AddPlacedNode(partition, next_def, device, &next));
    TW_RETURN_IF_ERROR(partition->AddEdge(outer, 0, enter, 0));
    TW_RETURN_IF_ERROR(partition->AddEdge(enter, 0, *merge, 0));
    TW_RETURN_IF_ERROR(partition->AddEdge(next, 0, *merge, 1));
    TW_RETURN_IF_ERROR(partition->AddEdge(*merge, 0, switch_node, 0));
    TW_RETURN_IF_ERROR(partition->AddEdge(switch_node, 1, next, 0));
    cached = *merge;  // before the predicate: its receiver needs this Merge
    // The predicate, received from the LoopCond's partition when elsewhere.
    Node* predicate = nullptr;
    int predicate_output = pivot.second;
    if (LocationOf(*pivot.first) == location) {
      predicate = copies_[pivot.first->id()];
    } else {
      TW_RETURN_IF_ERROR(RecvOf(pivot.first, pivot.second, dst, frame,
                                StrCat("loop_cond_", pivot.first->id(), "_", pivot.first->name()),
                                &predicate));
      predicate_output = 0;
    }
    return partition->AddEdge(predicate, predicate_output, switch_node, 1);
  }

  const PartitionOptions& options_;
  const Graph& graph_;
  std::map<std::string, std::unique_ptr<Graph>>* partitions_;
  std::vector<Node*> copies_;         // by id in graph_: the node's copy in its partition
  std::vector<Graph*> partition_of_;  // by id in graph_: the partition holding the copy
  std::map<std::tuple<int, int, std::string>, Node*> recvs_;
  // Loop frames (empty without loops), each frame's predicate (a LoopCond,
  // or the predicate of a control loop already in `graph_`) and its Enters'
  // parallel_iterations; the control loops built, by frame and location.
  ControlFlowInfo cf_info_;
  std::vector<std::pair<Node*, int>> frame_pivots_;
  std::vector<int64_t> frame_parallel_;
  std::map<std::pair<int, std::string>, Node*> control_loops_;
};

}  // namespace

Status PartitionGraph(const PartitionOptions& options, const Graph& graph,
                      std::map<std::string, std::unique_ptr<Graph>>* partitions) {
  return Partitioner(options, graph, partitions).Run();
}

}  // namespace tensorweave
