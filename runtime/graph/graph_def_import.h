// GraphDef → Graph with validation. Every problem is an error naming the
// node: unknown op, bad or missing attr, input naming a missing node or a
// missing output, dtype mismatch on an edge, duplicate node name, cycle,
// unsupported producer version, and (with a ShapeRefiner) a shape
// function's complaint. The GraphDef's function library joins the graph's
// (FunctionLibraryDefinition::AddLibrary checks it); a node may have a
// function's name as its op, and a func attr must name a function of it.
#ifndef TENSORWEAVE_GRAPH_GRAPH_DEF_IMPORT_H_
#define TENSORWEAVE_GRAPH_GRAPH_DEF_IMPORT_H_

#include <map>
#include <string>
#include <vector>

#include "runtime/graph/graph.h"
#include "runtime/graph/shape_refiner.h"

namespace tensorweave {

struct ImportGraphDefOptions {
  // Prepended with '/' to every imported node name and to the inputs that
  // refer to imported nodes ("" for none).
  std::string prefix;
  // Inputs of imported nodes that name these tensors ("name:index" of the
  // GraphDef) are wired to the given existing nodes' outputs instead
  // (node name, output index in `graph`).
  std::map<std::string, std::pair<std::string, int>> input_map;
  // Existing node names that imported control inputs "^x" resolve to
  // instead of imported nodes (keys without '^').
  std::map<std::string, std::string> control_input_map;
  // Existing op nodes (by name) every imported node must run after: each
  // imported node with no input from another imported node gets a control
  // input from each of them (TF_ImportGraphDefOptionsAddControlDependency).
  std::vector<std::string> control_dependencies;
  // When true, inputs that name nodes absent from the GraphDef may refer to
  // nodes already in `graph` (used by session Extend).
  bool allow_inputs_to_existing_nodes = false;
  // Outputs (GraphDef node name, output index) the caller will ask for after
  // the import, as TensorFlow's return tensors: each must name a node of the
  // GraphDef and one of its outputs, checked before anything is added.
  std::vector<std::pair<std::string, int>> return_outputs;
  // True for GraphDefs that come from outside the runtime (the C API, the
  // Python front end, Session::Create/Extend): every node must pass
  // ValidateUserNode. Only graphs the runtime built itself (partitions, and
  // tests that drive the executor directly) may turn this off.
  bool user_graph = true;
};

// TensorFlow's rule for node names: [A-Za-z0-9.][A-Za-z0-9_.\-/>]*. Names the
// runtime gives its own nodes ("_SOURCE", "_recv_x_0") fall outside it, so a
// user cannot collide with them.
bool IsValidNodeName(const std::string& name);

// The runtime's plumbing ops (_Arg, _Retval, _Send, _Recv and the _Host
// forms): it inserts them when it partitions a graph and wires them to the
// step's call frame and rendezvous. In a user graph they would hang the step
// or fail with INTERNAL, so user graphs may not contain them.
bool IsInternalOp(const std::string& op_type);

// What every node a user supplies must satisfy beyond its OpDef: a valid
// name and no internal op. INVALID_ARGUMENT naming the node otherwise. Used
// by ImportGraphDef (user_graph) and BuildNode (TF_FinishOperation).
Status ValidateUserNode(const NodeDef& node_def);

// What a successful import added.
struct ImportGraphDefResults {
  // The new nodes in GraphDef order.
  std::vector<Node*> nodes;
  // One per options.return_outputs: the imported node's output, or the
  // existing output an input_map entry put in its place (as TensorFlow
  // returns it).
  std::vector<NodeOutput> return_outputs;
};

// Adds every node of `graph_def` to `graph`, wired, and hands each to
// `refiner` producers first, so a shape function's error (a MatMul whose
// inner dimensions differ) rejects the import. On error `graph` and
// `refiner` are unchanged. `refiner` belongs to `graph`; it is null only for
// graphs the runtime built itself, whose shapes nobody asks for.
// `results` (optional) is filled on success and cleared on error.
Status ImportGraphDef(const ImportGraphDefOptions& options, const GraphDef& graph_def, Graph* graph,
                      ShapeRefiner* refiner, ImportGraphDefResults* results = nullptr);

// Convenience for graphs the runtime (or a test of the executor) built
// itself: a fresh graph, no prefix, internal ops and names allowed
// (user_graph off). User-supplied GraphDefs go through ImportGraphDef.
Status ConvertGraphDefToGraph(const GraphDef& graph_def, Graph* graph);

}  // namespace tensorweave

#endif  // TENSORWEAVE_GRAPH_GRAPH_DEF_IMPORT_H_
