// Evaluates a graph tensor whose value does not depend on any feed or state:
// the output of a Const, or of stateless ops over Consts only. TensorFlow's
// TF_TryEvaluateConstant does this (there through EvaluateConstantTensor).
//
//   bool evaluated = false;
//   Tensor value;
//   TW_RETURN_IF_ERROR(TryEvaluateConstant(graph, {add_node, 0}, &evaluated, &value));
//   if (evaluated) { ... value holds Add(Const, Const) ... }
//
// The tensor's ancestors (data and control inputs) are copied into a
// private session and run once; an ancestor that is stateful (variables,
// random ops, queues), a placeholder or v1 control flow makes the result "not
// constant" (evaluated false, OK). Errors of the run itself are returned.
// Given the graph's shape refiner, a Shape, Size or Rank whose input's shape
// fixes its value counts as a constant of that value, whatever computes the
// input (so the shape of a placeholder of known shape evaluates), as in
// TensorFlow.
#ifndef TENSORWEAVE_COMMON_RUNTIME_EVALUATE_CONSTANT_H_
#define TENSORWEAVE_COMMON_RUNTIME_EVALUATE_CONSTANT_H_

#include "runtime/framework/tensor.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/shape_refiner.h"

namespace tensorweave {

// The subgraphs evaluated are at most this many nodes (a guard against
// copying and running a whole model to answer a shape question).
constexpr int kMaxConstantSubgraphNodes = 1000;

// `refiner` may be null (no shape is known then).
Status TryEvaluateConstant(const Graph& graph, const ShapeRefiner* refiner, NodeOutput output,
                           bool* evaluated, Tensor* result);

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_EVALUATE_CONSTANT_H_
