#include "runtime/common_runtime/subgraph.h"

#include <map>
#include <set>
#include <utility>

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

Status RewriteForSignature(const FeedFetchSignature& signature, Graph* graph,
                           RewriteResult* result) {
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

    Node* arg = nullptr;
    TW_RETURN_IF_ERROR(AddInternalNode(graph, "_Arg", graph->NewName(producer->name() + "/_arg"),
                                       dtype, static_cast<int>(i), producer->requested_device(),
                                       &arg));
    std::vector<const Edge*> rewired;
    for (const Edge* edge : producer->out_edges()) {
      if (edge->src_output() == output) rewired.push_back(edge);
    }
    for (const Edge* edge : rewired) {
      Node* consumer = edge->dst();
      const int input = edge->dst_input();
      graph->RemoveEdge(edge);
      Status status = graph->AddEdge(arg, 0, consumer, input);
      if (!status.ok()) {
        return errors::InvalidArgument("Cannot feed '", TensorIdString(signature.feeds[i]),
                                       "': ", status.message());
      }
    }
  }

  for (size_t i = 0; i < fetched.size(); ++i) {
    Node* producer = fetched[i];
    const int output = signature.fetches[i].index;
    Node* retval = nullptr;
    TW_RETURN_IF_ERROR(
        AddInternalNode(graph, "_Retval", graph->NewName(producer->name() + "/_retval"),
                        BaseType(producer->output_type(output)), static_cast<int>(i), "", &retval));
    TW_RETURN_IF_ERROR(graph->AddEdge(producer, output, retval, 0));
    needed.push_back(retval);
  }

  PruneForTargets(graph, needed);
  return Status::OK();
}

}  // namespace tensorweave
