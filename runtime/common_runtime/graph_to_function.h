// GraphToFunctionDef: turns nodes of a Graph into a FunctionDef, as
// TensorFlow's TF_GraphToFunction does. Chosen tensors become the function's
// arguments and return values; the chosen body nodes become its node_defs,
// their inputs rewritten to the "node:out_arg:index" form function bodies use.
//
//   GraphToFunctionOptions options;
//   options.name = "add_one";
//   options.inputs = {{placeholder, 0}};
//   options.outputs = {{add, 0}};
//   options.body = {one, add};   // or every op node but the inputs': AllBodyNodes
//   FunctionDef function;
//   TW_RETURN_IF_ERROR(GraphToFunctionDef(graph, options, &function));
//
// The body must be closed: every data or control input of a body node comes
// from a body node or is one of the inputs, and every output is a body
// node's output or an input (INVALID_ARGUMENT naming the tensor otherwise).
// Argument names are node names made lower-case identifiers ("Feed/x" gives
// "feed_x"), unique among themselves and the node names.
#ifndef TENSORWEAVE_COMMON_RUNTIME_GRAPH_TO_FUNCTION_H_
#define TENSORWEAVE_COMMON_RUNTIME_GRAPH_TO_FUNCTION_H_

#include <string>
#include <vector>

#include "runtime/framework/status.h"
#include "runtime/graph/graph.h"
#include "tensorweave/proto/function.pb.h"

namespace tensorweave {

struct GraphToFunctionOptions {
  struct Tensor {
    const Node* node;
    int index;
  };
  std::string name;
  // Appends "_" and a hash of the FunctionDef to `name`, so functions with
  // different bodies get different names.
  bool append_hash_to_name = false;
  std::vector<const Node*> body;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  // Empty, or one name per output (unique); empty derives them from the
  // output nodes' names.
  std::vector<std::string> output_names;
  // Body nodes that must run whenever the function runs, and their names
  // (empty: the nodes' names).
  std::vector<const Node*> control_outputs;
  std::vector<std::string> control_output_names;
  std::string description;
};

// Every op node of `graph` except those some input reads. INVALID_ARGUMENT
// when such a node has more than one output (TensorFlow's restriction: its
// other outputs could not be fed).
Status AllBodyNodes(const Graph& graph, const std::vector<GraphToFunctionOptions::Tensor>& inputs,
                    const std::string& function_name, std::vector<const Node*>* body);

// Checks `options` against `graph` (every node one of its op nodes, every
// index in range, no reference-typed argument or result, no input given
// twice) and builds the function.
Status GraphToFunctionDef(const Graph& graph, const GraphToFunctionOptions& options,
                          FunctionDef* function);

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_GRAPH_TO_FUNCTION_H_
