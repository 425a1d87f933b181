#include "runtime/common_runtime/subgraph.h"

#include <map>
#include <set>
#include <utility>

#include "runtime/framework/rendezvous.h"
#include "runtime/graph/algorithm.h"

namespace tensorweave {

namespace {

Status ParseTensor(const std::string& name, const char* role, TensorId* id) {
  if (!ParseTensorName(name, id) || id->index < 0) {
    return errors::InvalidArgument(role, " name '", name,
                                   "' is not a tensor name of the form 'node' or 'node:index'");
  }
  return Status::OK();
}

struct TensorIdLess {
  bool operator()(const TensorId& a, const TensorId& b) const {
    return a.index != b.index ? a.index < b.index : a.node < b.node;
  }
};

Status FindTensor(const Graph& graph, const TensorId& id, const char* role, Node** node) {
  *node = graph.FindNode(id.node);
  if (*node == nullptr || !(*node)->IsOp()) {
    return errors::NotFound(role, " tensor '", TensorIdString(id), "' not found: the graph has",
                            " no node '", id.node, "'");
  }
  if (id.index >= (*node)->num_outputs()) {
    return errors::NotFound(role, " tensor '", TensorIdString(id), "' not found: node '", id.node,
                            "' has ", (*node)->num_outputs(), " output(s)");
  }
  return Status::OK();
}

bool IsPlaceholder(const Node& node) {
  const std::string& op = node.type_string();
  return op == "Placeholder" || op == "PlaceholderV2" || op == "PlaceholderWithDefault";
}

Status AddInternalNode(Graph* graph, const std::string& op, const std::string& name, DataType dtype,
                       int index, const std::string& device, Node** added) {
  NodeDef def;
  def.set_name(name);
  def.set_op(op);
  def.set_device(device);
  SetAttrValue(dtype, &(*def.mutable_attr())["T"]);
  SetAttrValue(int64_t{index}, &(*def.mutable_attr())["index"]);
  return graph->AddNode(def, added);
}

void SetAttr(NodeDef* def, const char* name, const std::string& value) {
  SetAttrValue(value, &(*def->mutable_attr())[name]);
}

// The attrs a client-terminated _Recv (feed) or _Send (fetch) carries: they
// decide the rendezvous key, which the master computes the same way.
NodeDef ClientTerminatedDef(const SignatureEndpoints& endpoints, const char* op,
                            const std::string& name, const TensorId& id) {
  NodeDef def;
  def.set_name(name);
  def.set_op(op);
  def.set_device(endpoints.client_device);
  SetAttr(&def, "tensor_name", TensorIdString(id));
  SetAttr(&def, "send_device", endpoints.client_device);
  SetAttr(&def, "recv_device", endpoints.client_device);
  // An int64 attr in TensorFlow's OpDef; the bits are the uint64.
  SetAttrValue(static_cast<int64_t>(endpoints.client_device_incarnation),
               &(*def.mutable_attr())["send_device_incarnation"]);
  SetAttrValue(true, &(*def.mutable_attr())["client_terminated"]);
  return def;
}

// The node the consumers of fed tensor `id` read from instead of `producer`.
Status AddFeedNode(const SignatureEndpoints& endpoints, const TensorId& id, int index,
                   DataType dtype, Node* producer, Graph* graph, Node** added) {
  if (endpoints.client_device.empty()) {
    return AddInternalNode(graph, "_Arg", graph->NewName(producer->name() + "/_arg"), dtype, index,
                           producer->requested_device(), added);
  }
  NodeDef def =
      ClientTerminatedDef(endpoints, "_Recv", StrCat("_recv_", id.node, "_", id.index), id);
  SetAttrValue(dtype, &(*def.mutable_attr())["tensor_type"]);
  TW_RETURN_IF_ERROR(graph->AddNode(def, added));
  (*added)->set_assigned_device_name(endpoints.client_device);
  return Status::OK();
}

// The node that takes fetched tensor `id` (output `id.index` of `producer`).
Status AddFetchNode(const SignatureEndpoints& endpoints, const TensorId& id, int index,
                    Node* producer, Graph* graph, Node** added) {
  const DataType dtype = BaseType(producer->output_type(id.index));
  if (endpoints.client_device.empty()) {
    TW_RETURN_IF_ERROR(AddInternalNode(
        graph, "_Retval", graph->NewName(producer->name() + "/_retval"), dtype, index, "", added));
  } else {
    NodeDef def =
        ClientTerminatedDef(endpoints, "_Send", StrCat("_send_", id.node, "_", id.index), id);
    SetAttrValue(dtype, &(*def.mutable_attr())["T"]);
    TW_RETURN_IF_ERROR(graph->AddNode(def, added));
    (*added)->set_assigned_device_name(endpoints.client_device);
  }
  return graph->AddEdge(producer, id.index, *added, 0);
}

}  // namespace

std::string TensorIdString(const TensorId& id) { return StrCat(id.node, ":", id.index); }

Status ParseSignature(const std::vector<std::string>& feeds,
                      const std::vector<std::string>& fetches,
                      const std::vector<std::string>& targets, FeedFetchSignature* signature) {
  if (fetches.empty() && targets.empty()) {
    return errors::InvalidArgument("Run needs at least one fetch or target");
  }
  *signature = FeedFetchSignature();
  std::set<TensorId, TensorIdLess> fed;
  for (const std::string& name : feeds) {
    TensorId id;
    TW_RETURN_IF_ERROR(ParseTensor(name, "Feed", &id));
    if (!fed.insert(id).second) {
      return errors::InvalidArgument("Tensor '", TensorIdString(id), "' is fed more than once");
    }
    signature->feeds.push_back(std::move(id));
  }
  std::vector<TensorId>& distinct = signature->fetches;
  std::map<TensorId, int, TensorIdLess> positions;
  for (const std::string& name : fetches) {
    TensorId id;
    TW_RETURN_IF_ERROR(ParseTensor(name, "Fetch", &id));
    if (fed.count(id) != 0) {
      return errors::InvalidArgument("Tensor '", TensorIdString(id), "' is both fed and fetched");
    }
    auto inserted = positions.emplace(id, static_cast<int>(distinct.size()));
    if (inserted.second) distinct.push_back(id);
    signature->output_to_fetch.push_back(inserted.first->second);
  }
  for (const std::string& name : targets) {
    // "^name" is how TF_Run spells a target in some callers; accept it.
    signature->targets.push_back(!name.empty() && name[0] == '^' ? name.substr(1) : name);
  }
  return Status::OK();
}

std::string ClientTerminatedKey(const SignatureEndpoints& endpoints, const TensorId& id) {
  return Rendezvous::CreateKey(endpoints.client_device, endpoints.client_device_incarnation,
                               endpoints.client_device, TensorIdString(id));
}

Status RewriteForSignature(const FeedFetchSignature& signature, Graph* graph,
                           RewriteResult* result) {
  return RewriteForSignature(signature, SignatureEndpoints(), graph, result);
}

Status RewriteForSignature(const FeedFetchSignature& signature, const SignatureEndpoints& endpoints,
                           Graph* graph, RewriteResult* result) {
  *result = RewriteResult();
  // Resolve everything before changing the graph.
  std::vector<Node*> fed(signature.feeds.size()), fetched(signature.fetches.size());
  std::vector<const Node*> needed;
  for (size_t i = 0; i < signature.feeds.size(); ++i) {
    TW_RETURN_IF_ERROR(FindTensor(*graph, signature.feeds[i], "Feed", &fed[i]));
  }
  for (size_t i = 0; i < signature.fetches.size(); ++i) {
    TW_RETURN_IF_ERROR(FindTensor(*graph, signature.fetches[i], "Fetch", &fetched[i]));
  }
  for (const std::string& target : signature.targets) {
    const Node* node = graph->FindNode(target);
    if (node == nullptr || !node->IsOp()) {
      return errors::NotFound("Target node '", target, "' not found in the graph");
    }
    needed.push_back(node);
  }

  for (size_t i = 0; i < fed.size(); ++i) {
    Node* producer = fed[i];
    const int output = signature.feeds[i].index;
    const DataType dtype = BaseType(producer->output_type(output));
    PartialTensorShape shape;
    if (IsPlaceholder(*producer) && FindNodeAttr(producer->def(), "shape") != nullptr) {
      TW_RETURN_IF_ERROR(GetNodeAttr(producer->def(), "shape", &shape));
    }
    result->feed_dtypes.push_back(dtype);
    result->feed_shapes.push_back(shape);

    Node* feed = nullptr;
    TW_RETURN_IF_ERROR(AddFeedNode(endpoints, signature.feeds[i], static_cast<int>(i), dtype,
                                   producer, graph, &feed));
    std::vector<const Edge*> rewired;
    for (const Edge* edge : producer->out_edges()) {
      // As TensorFlow does: a fed placeholder's control dependents wait for
      // the feed instead, or the placeholder would have to run.
      const bool placeholder_control = edge->IsControlEdge() && IsPlaceholder(*producer);
      if ((!edge->IsControlEdge() && edge->src_output() == output) || placeholder_control) {
        rewired.push_back(edge);
      }
    }
    for (const Edge* edge : rewired) {
      Node* consumer = edge->dst();
      const int input = edge->dst_input();
      const bool control = edge->IsControlEdge();
      graph->RemoveEdge(edge);
      if (control) {
        graph->AddControlEdge(feed, consumer);
        continue;
      }
      Status status = graph->AddEdge(feed, 0, consumer, input);
      if (!status.ok()) {
        return errors::InvalidArgument("Cannot feed '", TensorIdString(signature.feeds[i]),
                                       "': ", status.message());
      }
    }
  }

  for (size_t i = 0; i < fetched.size(); ++i) {
    Node* fetch = nullptr;
    TW_RETURN_IF_ERROR(AddFetchNode(endpoints, signature.fetches[i], static_cast<int>(i),
                                    fetched[i], graph, &fetch));
    needed.push_back(fetch);
  }

  PruneForTargets(graph, needed);
  return Status::OK();
}

}  // namespace tensorweave
