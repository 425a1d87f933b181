#include "runtime/graph/graph.h"

#include <algorithm>

#include "runtime/framework/node_def_util.h"

namespace tensorweave {
namespace {

// SOURCE and SINK have no registered op: they are bookkeeping, never run, and
// must exist whatever registry the graph was given. Executors skip them
// (Node::IsOp() is false).
const OpDef& BookkeepingOpDef(const char* op_name) {
  // Leaked on purpose: nodes of every graph point at these until exit.
  static const OpDef* source = [] {
    auto* def = new OpDef;
    def->name = "_Source";
    return def;
  }();
  static const OpDef* sink = [] {
    auto* def = new OpDef;
    def->name = "_Sink";
    return def;
  }();
  return op_name == std::string("_Source") ? *source : *sink;
}

// A node name must survive being written as a tensor name ("name:1",
// "^name") and parsed back, so ':' and a leading '^' are out.
Status ValidateNodeName(const std::string& name) {
  if (name.empty()) return errors::InvalidArgument("A node has an empty name");
  if (name[0] == '^' || name.find(':') != std::string::npos) {
    return errors::InvalidArgument("Node '", name,
                                   "' has an invalid name (no ':' and no leading '^')");
  }
  return Status::OK();
}

// Appends `edge` to `list` and returns its position there.
int Append(std::vector<const Edge*>* list, const Edge* edge) {
  list->push_back(edge);
  return static_cast<int>(list->size()) - 1;
}

}  // namespace

bool IsCompatibleEdgeType(DataType output, DataType input) {
  if (output == input) return true;
  // Reading a variable through a value input dereferences the ref; the
  // opposite (a value feeding a ref input) would let an op mutate a
  // temporary, so it stays an error.
  return IsRefType(output) && !IsRefType(input) && BaseType(output) == input;
}

bool Edge::IsControlEdge() const { return src_output_ == Graph::kControlSlot; }

Status Node::input_edge(int index, const Edge** edge) const {
  if (index < 0 || index >= static_cast<int>(data_inputs_.size()) ||
      data_inputs_[index] == nullptr) {
    *edge = nullptr;
    return errors::NotFound("Node '", name(), "' has no data edge into input ", index, " (it has ",
                            num_inputs(), " inputs)");
  }
  *edge = data_inputs_[index];
  return Status::OK();
}

namespace {

// Checks that `edited` (the node's NodeDef after TF_SetAttr or TF_ClearAttr)
// is valid for its op and that every edge of the node still fits the types it
// implies, and works those types out. A slot the edit adds may stay empty: a
// While whose "T" grew waits for TF_AddWhileInputHack to wire it.
Status CheckEditedNode(const Node& node, const NodeDef& edited, DataTypeVector* input_types,
                       DataTypeVector* output_types) {
  const auto invalid = [&](const Status& status) {
    return errors::InvalidArgument("Cannot change the attrs of node '", node.name(),
                                   "': ", status.message());
  };
  Status types = InOutTypesForNode(edited, node.op_def(), input_types, output_types);
  if (!types.ok()) return invalid(types);
  // ValidateNodeDef also counts inputs: one placeholder per expected input.
  NodeDef counted = edited;
  counted.clear_input();
  for (size_t i = 0; i < input_types->size(); ++i) counted.add_input("_");
  Status valid = ValidateNodeDef(counted, node.op_def());
  if (!valid.ok()) return invalid(valid);
  for (const Edge* edge : node.in_edges()) {
    if (edge->IsControlEdge()) continue;
    const int slot = edge->dst_input();
    const DataType given = edge->src()->output_type(edge->src_output());
    if (slot >= static_cast<int>(input_types->size()) ||
        !IsCompatibleEdgeType(given, (*input_types)[slot])) {
      return errors::InvalidArgument("Cannot change the attrs of node '", node.name(),
                                     "': its input ", slot, " is connected to '",
                                     edge->src()->name(), ":", edge->src_output(), "' (",
                                     DataTypeString(given), "), which the new attrs do not accept");
    }
  }
  for (const Edge* edge : node.out_edges()) {
    if (edge->IsControlEdge()) continue;
    const int slot = edge->src_output();
    if (slot >= static_cast<int>(output_types->size()) ||
        !IsCompatibleEdgeType((*output_types)[slot], edge->dst()->input_type(edge->dst_input()))) {
      return errors::InvalidArgument("Cannot change the attrs of node '", node.name(),
                                     "': its output ", slot, " feeds '", edge->dst()->name(),
                                     "', which would no longer accept it");
    }
  }
  return Status::OK();
}

// Replaces a node's NodeDef, input/output types and input slots (the
// private members Node::SetAttr and ClearAttr hand over) with `edited`'s
// once CheckEditedNode accepts it; on error nothing changes.
Status ReplaceEditedNodeDef(const Node& node, NodeDef edited, NodeDef* def,
                            DataTypeVector* input_types, DataTypeVector* output_types,
                            std::vector<const Edge*>* data_inputs) {
  DataTypeVector inputs, outputs;
  TW_RETURN_IF_ERROR(CheckEditedNode(node, edited, &inputs, &outputs));
  *def = std::move(edited);
  *input_types = std::move(inputs);
  *output_types = std::move(outputs);
  data_inputs->resize(input_types->size(), nullptr);
  return Status::OK();
}

}  // namespace

Status Node::SetAttr(const std::string& attr_name, const AttrValue& value) {
  if (!IsOp()) return errors::InvalidArgument("Cannot set attrs of ", name());
  if (attr_name.empty()) {
    return errors::InvalidArgument("Node '", name(), "': an attr name must not be empty");
  }
  NodeDef edited = def_;
  (*edited.mutable_attr())[attr_name] = value;
  return ReplaceEditedNodeDef(*this, std::move(edited), &def_, &input_types_, &output_types_,
                              &data_inputs_);
}

Status Node::ClearAttr(const std::string& attr_name) {
  if (!IsOp()) return errors::InvalidArgument("Cannot clear attrs of ", name());
  NodeDef edited = def_;
  edited.mutable_attr()->erase(attr_name);
  // An attr of the OpDef that has a default goes back to it, which is what
  // a NodeDef without it means to TensorFlow when it is imported.
  AddDefaultsToNodeDef(*op_def_, &edited);
  return ReplaceEditedNodeDef(*this, std::move(edited), &def_, &input_types_, &output_types_,
                              &data_inputs_);
}

Graph::Graph(const OpRegistry* registry)
    : library_(std::make_unique<FunctionLibraryDefinition>(
          registry != nullptr ? registry : OpRegistry::Global())),
      registry_(library_->op_registry()) {
  Node* source = AllocateNode();
  source->def_.set_name("_SOURCE");
  source->def_.set_op("_Source");
  source->op_def_ = &BookkeepingOpDef("_Source");
  names_[source->name()] = source;

  Node* sink = AllocateNode();
  sink->def_.set_name("_SINK");
  sink->def_.set_op("_Sink");
  sink->op_def_ = &BookkeepingOpDef("_Sink");
  names_[sink->name()] = sink;

  AddControlEdge(source, sink);
}

Graph::~Graph() {
  for (Node* node : nodes_) delete node;
  for (Edge* edge : edges_) delete edge;
}

Node* Graph::AllocateNode() {
  Node* node = new Node;
  node->id_ = static_cast<int>(nodes_.size());
  nodes_.push_back(node);
  num_node_ids_.store(static_cast<int>(nodes_.size()), std::memory_order_release);
  ++num_nodes_;
  return node;
}

Status Graph::AddNode(const NodeDef& node_def, Node** node) {
  if (node != nullptr) *node = nullptr;
  TW_RETURN_IF_ERROR(ValidateNodeName(node_def.name()));
  // The name's entry is claimed now and filled once the node exists (or
  // given back on error): one hash lookup per node instead of two, which
  // shows in graphs of thousands of nodes copied once per signature.
  const auto claimed = names_.try_emplace(node_def.name(), nullptr);
  if (!claimed.second) {
    return errors::AlreadyExists("Node '", node_def.name(), "' already exists in the graph");
  }
  const auto give_back = [&](Status status) {
    names_.erase(claimed.first);
    return status;
  };
  const OpDef* op_def = registry_->LookUp(node_def.op());
  if (op_def == nullptr) {
    return give_back(errors::NotFound("Node '", node_def.name(), "' has op '", node_def.op(),
                                      "', which is not registered"));
  }

  NodeDef def = node_def;
  def.clear_input();
  AddDefaultsToNodeDef(*op_def, &def);
  DataTypeVector input_types, output_types;
  const Status types = InOutTypesForNode(def, *op_def, &input_types, &output_types);

  // Inputs of `node_def` are ignored (edges come separately), but
  // ValidateNodeDef also checks the input count; one placeholder per
  // expected input leaves only the attrs to judge. When the attrs are too
  // broken to compute the arity, validation names the problem.
  if (types.ok()) {
    for (size_t i = 0; i < input_types.size(); ++i) def.add_input("_");
  }
  Status valid = ValidateNodeDef(def, *op_def);
  if (valid.ok()) valid = types;
  if (!valid.ok()) return give_back(std::move(valid));
  def.clear_input();

  Node* added = AllocateNode();
  added->def_ = std::move(def);
  added->op_def_ = op_def;
  added->input_types_ = std::move(input_types);
  added->output_types_ = std::move(output_types);
  added->data_inputs_.assign(added->input_types_.size(), nullptr);
  claimed.first->second = added;
  HookUp(added);
  if (node != nullptr) *node = added;
  return Status::OK();
}

void Graph::RemoveNode(Node* node) {
  // SOURCE, SINK and foreign nodes are refused quietly: removing them would
  // break the graph's invariants, and nothing here may abort.
  if (node == nullptr || !node->IsOp() || FindNodeId(node->id()) != node) return;
  std::vector<Node*> neighbours;
  while (!node->in_edges_.empty()) {
    neighbours.push_back(node->in_edges_.back()->src());
    UnlinkEdge(node->in_edges_.back());
  }
  while (!node->out_edges_.empty()) {
    neighbours.push_back(node->out_edges_.back()->dst());
    UnlinkEdge(node->out_edges_.back());
  }
  names_.erase(node->name());
  nodes_[node->id()] = nullptr;
  --num_nodes_;
  delete node;
  for (Node* neighbour : neighbours) {
    if (neighbour != node) HookUp(neighbour);  // a self-loop names the deleted node
  }
}

Status Graph::AddEdge(Node* src, int x, Node* dst, int y, const Edge** edge) {
  if (edge != nullptr) *edge = nullptr;
  if (src == nullptr || dst == nullptr || FindNodeId(src->id()) != src ||
      FindNodeId(dst->id()) != dst) {
    return errors::InvalidArgument("AddEdge: both ends must be nodes of this graph");
  }
  if (x == kControlSlot || y == kControlSlot) {
    if (x != y) {
      return errors::InvalidArgument("Edge ", src->name(), ":", x, " -> ", dst->name(), ":", y,
                                     " mixes a control slot with a data slot");
    }
    const Edge* control = AddControlEdge(src, dst);
    if (edge != nullptr) *edge = control;
    return Status::OK();
  }
  if (x < 0 || x >= src->num_outputs()) {
    return errors::InvalidArgument("Node '", dst->name(), "': input ", y, " asks for output ", x,
                                   " of node '", src->name(), "', which has ", src->num_outputs(),
                                   " outputs");
  }
  if (y < 0 || y >= dst->num_inputs()) {
    return errors::InvalidArgument("Node '", dst->name(), "' has ", dst->num_inputs(),
                                   " inputs; cannot connect '", src->name(), ":", x, "' to input ",
                                   y);
  }
  if (dst->data_inputs_[y] != nullptr) {
    const Edge* taken = dst->data_inputs_[y];
    return errors::InvalidArgument(
        "Node '", dst->name(), "': input ", y, " is already connected to '", taken->src()->name(),
        ":", taken->src_output(), "'; cannot also connect '", src->name(), ":", x, "'");
  }
  if (!IsCompatibleEdgeType(src->output_type(x), dst->input_type(y))) {
    return errors::InvalidArgument("Node '", dst->name(), "': input ", y, " expects ",
                                   DataTypeString(dst->input_type(y)), " but '", src->name(), ":",
                                   x, "' is ", DataTypeString(src->output_type(x)));
  }
  Edge* added = LinkEdge(src, x, dst, y);
  dst->data_inputs_[y] = added;
  DropRedundantHookups(src, dst);
  if (edge != nullptr) *edge = added;
  return Status::OK();
}

const Edge* Graph::AddControlEdge(Node* src, Node* dst) {
  if (src == nullptr || dst == nullptr || FindNodeId(src->id()) != src ||
      FindNodeId(dst->id()) != dst) {
    return nullptr;
  }
  // Hookups are found in O(1); any other duplicate by scanning the shorter
  // of the two edge lists.
  if (src->IsSource() && dst->IsOp()) {
    if (dst->source_hookup_ == nullptr) {
      dst->source_hookup_ = LinkEdge(src, kControlSlot, dst, kControlSlot);
    }
    return dst->source_hookup_;
  }
  if (dst->IsSink() && src->IsOp()) {
    if (src->sink_hookup_ == nullptr) {
      src->sink_hookup_ = LinkEdge(src, kControlSlot, dst, kControlSlot);
    }
    return src->sink_hookup_;
  }
  const bool scan_src = src->out_edges_.size() <= dst->in_edges_.size();
  for (const Edge* existing : scan_src ? src->out_edges_ : dst->in_edges_) {
    if (existing->IsControlEdge() && existing->src() == src && existing->dst() == dst) {
      return existing;
    }
  }
  Edge* added = LinkEdge(src, kControlSlot, dst, kControlSlot);
  DropRedundantHookups(src, dst);
  return added;
}

void Graph::RemoveEdge(const Edge* edge) {
  if (edge == nullptr || edge->id() < 0 || edge->id() >= static_cast<int>(edges_.size()) ||
      edges_[edge->id()] != edge) {
    return;
  }
  Node* src = edge->src();
  Node* dst = edge->dst();
  UnlinkEdge(edge);
  HookUp(src);
  HookUp(dst);
}

Edge* Graph::LinkEdge(Node* src, int x, Node* dst, int y) {
  Edge* added = new Edge;
  added->src_ = src;
  added->dst_ = dst;
  added->src_output_ = x;
  added->dst_input_ = y;
  added->id_ = static_cast<int>(edges_.size());
  added->src_position_ = Append(&src->out_edges_, added);
  added->dst_position_ = Append(&dst->in_edges_, added);
  edges_.push_back(added);
  ++num_edges_;
  return added;
}

void Graph::UnlinkEdge(const Edge* edge) {
  Edge* owned = edges_[edge->id()];
  // Swap-with-last removal; the moved edge learns its new position.
  auto unlink = [this](std::vector<const Edge*>* list, int position, bool from_src) {
    const Edge* last = list->back();
    (*list)[position] = last;
    Edge* moved = edges_[last->id()];
    if (from_src) {
      moved->src_position_ = position;
    } else {
      moved->dst_position_ = position;
    }
    list->pop_back();
  };
  unlink(&owned->src_->out_edges_, owned->src_position_, true);
  unlink(&owned->dst_->in_edges_, owned->dst_position_, false);
  if (!owned->IsControlEdge()) owned->dst_->data_inputs_[owned->dst_input_] = nullptr;
  if (owned->dst_->source_hookup_ == owned) owned->dst_->source_hookup_ = nullptr;
  if (owned->src_->sink_hookup_ == owned) owned->src_->sink_hookup_ = nullptr;
  edges_[owned->id_] = nullptr;
  --num_edges_;
  delete owned;
}

void Graph::HookUp(Node* node) {
  if (!node->IsOp()) return;
  if (node->in_edges_.empty()) AddControlEdge(source_node(), node);
  if (node->out_edges_.empty()) AddControlEdge(node, sink_node());
}

void Graph::DropRedundantHookups(Node* src, Node* dst) {
  if (!src->IsOp() || !dst->IsOp()) return;
  if (dst->source_hookup_ != nullptr) UnlinkEdge(dst->source_hookup_);
  if (src->sink_hookup_ != nullptr) UnlinkEdge(src->sink_hookup_);
}

Node* Graph::FindNode(const std::string& name) const {
  auto it = names_.find(name);
  return it == names_.end() ? nullptr : it->second;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> live;
  live.reserve(num_nodes_);
  for (Node* node : nodes_) {
    if (node != nullptr) live.push_back(node);
  }
  return live;
}

std::vector<Node*> Graph::op_nodes() const {
  std::vector<Node*> live;
  live.reserve(num_op_nodes());
  for (Node* node : nodes_) {
    if (node != nullptr && node->IsOp()) live.push_back(node);
  }
  return live;
}

std::string Graph::NewName(const std::string& prefix) {
  // Skip counters whose name a user already took. Appended by hand rather
  // than with StrCat (a stream per call): optimizer passes name one new node
  // per rewrite, thousands in a big graph.
  std::string name = prefix.empty() ? std::string("_") : prefix + "/_";
  const size_t stem = name.size();
  while (true) {
    name.resize(stem);
    name += std::to_string(name_counter_++);
    if (!names_.count(name)) return name;
  }
}

NodeDef Graph::NodeDefWithInputs(const Node* node) {
  NodeDef def = node->def();
  def.clear_input();
  for (const Edge* edge : node->data_inputs_) {
    if (edge == nullptr) {
      // An input never connected: written empty so the gap stays visible
      // (and a re-import fails) instead of shifting later inputs down a slot.
      def.add_input("");
    } else if (edge->src_output() == 0) {
      def.add_input(edge->src()->name());
    } else {
      def.add_input(StrCat(edge->src()->name(), ":", edge->src_output()));
    }
  }
  std::vector<const std::string*> controls;
  for (const Edge* edge : node->in_edges()) {
    if (edge->IsControlEdge() && edge->src()->IsOp()) controls.push_back(&edge->src()->name());
  }
  // in_edges() has no order; sorting makes the serialization deterministic.
  std::sort(controls.begin(), controls.end(),
            [](const std::string* a, const std::string* b) { return *a < *b; });
  for (const std::string* name : controls) def.add_input("^" + *name);
  if (!node->assigned_device_name().empty()) def.set_device(node->assigned_device_name());
  return def;
}

void Graph::ToGraphDef(GraphDef* graph_def) const {
  graph_def->Clear();
  *graph_def->mutable_versions() = versions_;
  graph_def->mutable_node()->Reserve(num_op_nodes());
  for (const Node* node : nodes_) {
    if (node != nullptr && node->IsOp()) *graph_def->add_node() = NodeDefWithInputs(node);
  }
  if (!library_->empty()) *graph_def->mutable_library() = library_->ToProto();
}

}  // namespace tensorweave
