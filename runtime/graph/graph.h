// Graph: a DAG of Nodes joined by Edges. A new graph holds _SOURCE (id 0) and
// _SINK (id 1) joined by a control edge. An Edge joins src:src_output to
// dst:dst_input; a control edge has both slots equal to Graph::kControlSlot.
//
// The graph itself keeps the SOURCE/SINK invariant after every call, so no
// caller wires them: an op node without other inputs hangs off SOURCE by a
// control edge and an op node without other consumers feeds SINK. AddNode
// connects SOURCE -> node -> SINK; an edge between two op nodes drops the
// hookups it makes redundant; removing an edge or node restores the hookups
// its neighbours need again.
//
// A Graph is not thread-safe; owners (TF_Graph, sessions) lock around it.
#ifndef TENSORWEAVE_GRAPH_GRAPH_H_
#define TENSORWEAVE_GRAPH_GRAPH_H_

#include <atomic>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/framework/function_library.h"
#include "runtime/framework/op_def.h"
#include "runtime/framework/status.h"
#include "runtime/framework/types.h"
#include "tensorweave/proto/graph.pb.h"
#include "tensorweave/proto/node_def.pb.h"

namespace tensorweave {

class Node;

// Output `index` of `node`: a tensor of the graph.
struct NodeOutput {
  Node* node = nullptr;
  int index = 0;
};

class Edge {
 public:
  Node* src() const { return src_; }
  Node* dst() const { return dst_; }
  int src_output() const { return src_output_; }
  int dst_input() const { return dst_input_; }
  int id() const { return id_; }
  bool IsControlEdge() const;

 private:
  friend class Graph;
  Node* src_ = nullptr;
  Node* dst_ = nullptr;
  int src_output_ = 0;
  int dst_input_ = 0;
  int id_ = -1;
  // Positions in src_->out_edges_ and dst_->in_edges_, so removing an edge
  // is O(1) even for SOURCE and SINK, which touch almost every node.
  int src_position_ = -1;
  int dst_position_ = -1;
};

class Node {
 public:
  int id() const { return id_; }
  const std::string& name() const { return def_.name(); }
  const std::string& type_string() const { return def_.op(); }
  const NodeDef& def() const { return def_; }
  const OpDef& op_def() const { return *op_def_; }

  // The device the NodeDef asks for (may be empty or partial).
  const std::string& requested_device() const { return def_.device(); }
  // The full device name the placer chose; empty before placement.
  const std::string& assigned_device_name() const { return assigned_device_; }
  void set_assigned_device_name(const std::string& name) { assigned_device_ = name; }
  void set_requested_device(const std::string& device) { def_.set_device(device); }

  // Edits the NodeDef in place (TF_SetAttr, TF_ClearAttr) and works the
  // input and output types out again from the new attrs (a While whose "T"
  // grew gets a free input slot). An edit the OpDef rejects, or one that
  // leaves an existing edge with a type its end does not accept, returns
  // INVALID_ARGUMENT naming the node and changes nothing. A cleared attr
  // with an OpDef default goes back to it.
  Status SetAttr(const std::string& attr_name, const AttrValue& value);
  Status ClearAttr(const std::string& attr_name);
  void set_full_type(const FullTypeDef& full_type) {
    *def_.mutable_experimental_type() = full_type;
  }

  int num_inputs() const { return static_cast<int>(input_types_.size()); }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  DataType input_type(int i) const { return input_types_[i]; }
  DataType output_type(int i) const { return output_types_[i]; }
  const DataTypeVector& input_types() const { return input_types_; }
  const DataTypeVector& output_types() const { return output_types_; }

  // Edges in no particular order; data and control alike.
  const std::vector<const Edge*>& in_edges() const { return in_edges_; }
  const std::vector<const Edge*>& out_edges() const { return out_edges_; }
  // The data edge into input `index`; NOT_FOUND naming the node if missing.
  Status input_edge(int index, const Edge** edge) const;

  bool IsSource() const { return id_ == 0; }
  bool IsSink() const { return id_ == 1; }
  bool IsOp() const { return id_ > 1; }
  bool IsStateful() const { return op_def_->is_stateful; }

 private:
  friend class Graph;
  int id_ = -1;
  NodeDef def_;
  const OpDef* op_def_ = nullptr;
  DataTypeVector input_types_;
  DataTypeVector output_types_;
  std::string assigned_device_;
  std::vector<const Edge*> in_edges_;
  std::vector<const Edge*> out_edges_;
  // The data edge into each input slot (null while unconnected): O(1) slot
  // checks in AddEdge and input_edge().
  std::vector<const Edge*> data_inputs_;
  // The control edge SOURCE -> this node and this node -> SINK when present
  // (op nodes only), so keeping the invariant is O(1) per edge.
  const Edge* source_hookup_ = nullptr;
  const Edge* sink_hookup_ = nullptr;
};

// Whether an output of dtype `output` may feed an input of dtype `input`:
// equal types, or a ref output feeding a value input of its base type.
bool IsCompatibleEdgeType(DataType output, DataType input);

class Graph {
 public:
  static constexpr int kControlSlot = -1;

  // `registry` (not owned) resolves ops; usually OpRegistry::Global(). The
  // graph's own function library (empty at first) resolves its functions'
  // names before it.
  explicit Graph(const OpRegistry* registry);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Adds a node from `node_def` (inputs in the NodeDef are ignored; add
  // edges separately), hooked up as SOURCE -> node -> SINK. Looks up the op,
  // fills attr defaults, validates the attrs and computes input/output
  // dtypes. Errors name the node. The name must be new (ALREADY_EXISTS
  // otherwise).
  Status AddNode(const NodeDef& node_def, Node** node);
  // Removes `node` and all its edges; neighbours left without inputs or
  // consumers are hooked to SOURCE or SINK. Not for SOURCE or SINK.
  void RemoveNode(Node* node);

  // Data edge src:x → dst:y, or control edge with both slots kControlSlot.
  // Checks slot ranges and, for data edges, dtype compatibility (a ref
  // output may feed a value input of the base type). The dst slot must be
  // free. Errors name both nodes. An edge between two op nodes removes the
  // SOURCE hookup of dst and the SINK hookup of src.
  Status AddEdge(Node* src, int x, Node* dst, int y, const Edge** edge = nullptr);
  // A control edge; an existing identical one is returned instead of a
  // second. Null when an end is not a node of this graph.
  const Edge* AddControlEdge(Node* src, Node* dst);
  // Removes `edge`. An op node it leaves without inputs (consumers) gets its
  // SOURCE (SINK) hookup back, so removing a hookup a node still needs
  // replaces it with a new one.
  void RemoveEdge(const Edge* edge);

  Node* source_node() const { return nodes_[0]; }
  Node* sink_node() const { return nodes_[1]; }
  // Null when absent.
  Node* FindNode(const std::string& name) const;
  // By id; null for a removed node.
  Node* FindNodeId(int id) const { return id >= 0 && id < num_node_ids() ? nodes_[id] : nullptr; }

  // Live nodes, including SOURCE and SINK.
  int num_nodes() const { return num_nodes_; }
  int num_op_nodes() const { return num_nodes_ - 2; }
  // One past the largest id ever used; ids of removed nodes are not reused.
  int num_node_ids() const { return static_cast<int>(nodes_.size()); }
  // num_node_ids() for a thread that does not hold the owner's lock and only
  // needs to know whether nodes were added since it last looked (to read
  // them it takes the lock). Ids count from the moment a node is allocated,
  // so a node still being built, or removed again, may be counted.
  int num_node_ids_unlocked() const { return num_node_ids_.load(std::memory_order_acquire); }
  int num_edges() const { return num_edges_; }
  // Live nodes in id order (null entries skipped).
  std::vector<Node*> nodes() const;
  std::vector<Node*> op_nodes() const;

  // The graph's functions, then the registry it was made with. A graph made
  // from this one's op_registry() resolves this graph's functions too.
  const OpRegistry* op_registry() const { return registry_; }

  // The functions of the graph (GraphDef.library), which nodes may call.
  const FunctionLibraryDefinition& flib_def() const { return *library_; }
  // Adds functions (FunctionLibraryDefinition::AddLibrary): on error the
  // library is unchanged.
  Status AddFunctionLibrary(const FunctionDefLibrary& library) {
    return library_->AddLibrary(library);
  }

  // A fresh name "prefix/_N" not used by any node yet.
  std::string NewName(const std::string& prefix);

  // Serializes op nodes in id order with their inputs (data in slot order,
  // then "^ctrl") and devices (assigned device if set, else requested), and
  // the function library when it is not empty.
  void ToGraphDef(GraphDef* graph_def) const;
  // The NodeDef of one node with its current inputs written out. Static: it
  // reads only the node, so callers holding a bare Node (the C API) use it too.
  static NodeDef NodeDefWithInputs(const Node* node);

  const VersionDef& versions() const { return versions_; }
  void set_versions(const VersionDef& versions) { versions_ = versions; }

 private:
  Node* AllocateNode();
  // The edge bookkeeping without the SOURCE/SINK invariant.
  Edge* LinkEdge(Node* src, int x, Node* dst, int y);
  void UnlinkEdge(const Edge* edge);
  // Hooks an op node without inputs to SOURCE and one without consumers to
  // SINK.
  void HookUp(Node* node);
  // After an edge src -> dst between op nodes: the hookups it made redundant
  // go.
  void DropRedundantHookups(Node* src, Node* dst);

  std::unique_ptr<FunctionLibraryDefinition> library_;
  const OpRegistry* registry_;        // library_'s
  std::vector<Node*> nodes_;          // by id; null for removed nodes (owned)
  std::atomic<int> num_node_ids_{0};  // nodes_.size(), for num_node_ids_unlocked()
  std::vector<Edge*> edges_;          // by id; null for removed edges (owned)
  std::unordered_map<std::string, Node*> names_;
  int num_nodes_ = 0;
  int num_edges_ = 0;
  int name_counter_ = 0;
  VersionDef versions_;
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_GRAPH_GRAPH_H_
