// AddSymbolicGradients: adds to a graph the nodes that compute the partial
// derivatives of sum(outputs) with respect to `inputs`, as TensorFlow's C++
// AddSymbolicGradients does (and TF_AddGradients on top of it).
//
//   // y = x * x + 3 * x;  dy/dx = 2x + 3
//   std::vector<NodeOutput> grads;
//   TW_RETURN_IF_ERROR(AddGradients(&graph, &refiner, /*prefix=*/nullptr, {y}, {x},
//                                   /*grad_inputs=*/nullptr, &grads));
//   // grads[0] is gradients/AddN:0 (the first call's nodes live under
//   // "gradients/", the next call's under "gradients_1/", ...).
//
// Backpropagation visits the nodes between `inputs` and `outputs` in reverse
// topological order; each node's output gradients (summed with AddN when
// several consumers contribute) go through the op's gradient function from
// GradientRegistry. An output of a node in `inputs` that no gradient reaches
// (every path passes a no-gradient op such as Shape) gets NoGradient().
#ifndef TENSORWEAVE_GRADIENTS_GRADIENTS_H_
#define TENSORWEAVE_GRADIENTS_GRADIENTS_H_

#include <string>
#include <vector>

#include "runtime/framework/status.h"
#include "runtime/gradients/gradient_scope.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/shape_refiner.h"

namespace tensorweave {

// The builder itself, with every node going to `scope`. `grad_inputs` holds
// one initial gradient per output (the derivatives of some loss with respect
// to `outputs`). Errors: INVALID_ARGUMENT when the counts differ or an input
// is not reachable from the outputs ("Cannot compute the partial derivative
// for node 'x' as it's unreachable from the output node(s)."), NOT_FOUND
// "No gradient defined for op: T" when a gradient must pass an op without a
// registered gradient, and the errors of building the gradient nodes. Nodes
// added before an error stay (AddGradients removes them).
Status AddSymbolicGradients(GradientScope& scope, const std::vector<NodeOutput>& outputs,
                            const std::vector<NodeOutput>& inputs,
                            const std::vector<NodeOutput>& grad_inputs,
                            std::vector<NodeOutput>* grad_outputs);

// AddSymbolicGradients for a loop body: an input no gradient can reach gets
// NoGradient() instead of an error.
Status AddSymbolicGradientsOfReachable(GradientScope& scope, const std::vector<NodeOutput>& outputs,
                                       const std::vector<NodeOutput>& inputs,
                                       const std::vector<NodeOutput>& grad_inputs,
                                       std::vector<NodeOutput>* grad_outputs);

// What TF_AddGradientsWithPrefix does: the nodes go under `*prefix`, which
// no node may use yet as its name or scope (INVALID_ARGUMENT "prefix [p]
// conflicts with existing node in the graph named [n]"), or, when `prefix`
// is null, under "gradients" made unique ("gradients_1", ...). With
// `grad_inputs` null every output starts from OnesLike(output). Checks that
// each tensor is an output of a node of `graph` (INVALID_ARGUMENT, OUT_OF_RANGE
// for a bad index). On error the graph is left as it was.
Status AddGradients(Graph* graph, ShapeRefiner* refiner, const std::string* prefix,
                    const std::vector<NodeOutput>& outputs, const std::vector<NodeOutput>& inputs,
                    const std::vector<NodeOutput>* grad_inputs,
                    std::vector<NodeOutput>* grad_outputs);

}  // namespace tensorweave

#endif  // TENSORWEAVE_GRADIENTS_GRADIENTS_H_
