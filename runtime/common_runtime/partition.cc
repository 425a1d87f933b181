#include "runtime/common_runtime/partition.h"

#include <tuple>
#include <vector>

#include "runtime/framework/node_def_util.h"

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
        copies_(graph.num_node_ids(), nullptr) {}

  Status Run() {
    partitions_->clear();
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
    NodeDef def = node->def();
    def.clear_input();
    def.set_device(device);
    return AddPlacedNode(PartitionFor(LocationOf(*node)), def, device, &copies_[node->id()]);
  }

  Status CopyEdge(const Edge* edge) {
    const Node* src = edge->src();
    const Node* dst = edge->dst();
    const std::string src_location = LocationOf(*src);
    const std::string dst_location = LocationOf(*dst);
    Graph* dst_partition = PartitionFor(dst_location);
    if (src_location == dst_location) {
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
    const Node* src = edge->src();
    const std::string& src_device = src->assigned_device_name();
    const std::string& dst_device = edge->dst()->assigned_device_name();
    const int slot = edge->IsControlEdge() ? Graph::kControlSlot : edge->src_output();
    Node*& cached = recvs_[std::make_tuple(src->id(), slot, dst_device)];
    if (cached != nullptr) {
      *recv = cached;
      return Status::OK();
    }
    Graph* src_partition = PartitionFor(LocationOf(*src));
    Graph* dst_partition = PartitionFor(LocationOf(*edge->dst()));
    const std::string tensor_name = StrCat("edge_", edge->id(), "_", src->name());
    const uint64_t incarnation =
        options_.device_incarnation ? options_.device_incarnation(src_device) : 1;

    Node* sent = copies_[src->id()];
    int sent_output = slot;
    DataType dtype = DT_FLOAT;
    if (edge->IsControlEdge()) {
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
    send.set_name(src_partition->NewName(src->name() + "/_send_for_" + edge->dst()->name()));
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
    return Status::OK();
  }

  const PartitionOptions& options_;
  const Graph& graph_;
  std::map<std::string, std::unique_ptr<Graph>>* partitions_;
  std::vector<Node*> copies_;  // by id in graph_: the node's copy in its partition
  std::map<std::tuple<int, int, std::string>, Node*> recvs_;
};

}  // namespace

Status PartitionGraph(const PartitionOptions& options, const Graph& graph,
                      std::map<std::string, std::unique_ptr<Graph>>* partitions) {
  return Partitioner(options, graph, partitions).Run();
}

}  // namespace tensorweave
