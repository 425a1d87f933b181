// BuildWhileLoopGraphDef: the nodes of a TensorFlow 1.x while loop
// (Enter, Merge, Switch, LoopCond, NextIteration, Exit), with copies of a
// condition graph and a body graph, as a GraphDef to import into the parent
// graph. This is what TF_FinishWhile builds, as TensorFlow's BuildWhileLoop
// does.
//
//   WhileLoopSpec spec;
//   spec.prefix = "while";                 // unused by any parent node
//   spec.inputs = {"x:0"};                 // parent tensors, one per variable
//   spec.input_types = {DT_INT32};
//   spec.cond = &cond_graph;  spec.cond_shapes = &cond_refiner;
//   spec.cond_inputs = {cond_placeholder};  spec.cond_output = {less, 0};
//   spec.body = &body_graph;
//   spec.body_inputs = {body_placeholder};  spec.body_outputs = {{add, 0}};
//   GraphDef loop;  std::vector<std::string> exits;
//   TW_RETURN_IF_ERROR(BuildWhileLoopGraphDef(spec, &loop, &exits));
//   // import `loop` with allow_inputs_to_existing_nodes; exits[i] is
//   // variable i's final value.
//
// For variable i: prefix/Enter_i feeds prefix/Merge_i, whose output is the
// condition's input i; prefix/Switch_i routes it by prefix/LoopCond to
// prefix/Exit_i (false) or prefix/Identity_i, the body's input i (true); the
// body's output i goes through prefix/NextIteration_i back to Merge_i. The
// condition's operations become prefix/cond/<name>, the body's
// prefix/body/<name>; one with no inputs gets a control input from Merge_0
// (condition) or Identity_0 (body), so it runs in the loop's frame once per
// iteration.
#ifndef TENSORWEAVE_GRAPH_WHILE_LOOP_BUILDER_H_
#define TENSORWEAVE_GRAPH_WHILE_LOOP_BUILDER_H_

#include <string>
#include <vector>

#include "runtime/framework/status.h"
#include "runtime/framework/types.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/shape_refiner.h"

namespace tensorweave {

struct WhileLoopSpec {
  struct Tensor {
    const Node* node = nullptr;
    int index = 0;
  };
  std::string prefix;
  // TensorFlow's default: how many iterations may run at once.
  int parallel_iterations = 10;
  std::vector<std::string> inputs;  // parent tensor names
  DataTypeVector input_types;
  const Graph* cond = nullptr;
  const ShapeRefiner* cond_shapes = nullptr;
  std::vector<const Node*> cond_inputs;  // one Placeholder per variable
  Tensor cond_output;
  const Graph* body = nullptr;
  std::vector<const Node*> body_inputs;
  std::vector<Tensor> body_outputs;
};

// INVALID_ARGUMENT when the condition's output is unset, not in the
// condition graph, not a bool or not a scalar, or a body output is unset,
// not in the body graph or of another dtype than its variable.
Status BuildWhileLoopGraphDef(const WhileLoopSpec& spec, GraphDef* loop,
                              std::vector<std::string>* exit_names);

}  // namespace tensorweave

#endif  // TENSORWEAVE_GRAPH_WHILE_LOOP_BUILDER_H_
