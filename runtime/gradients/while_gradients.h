// WhileGradients: the gradient of a TensorFlow 1.x while loop (the Enter /
// Merge / Switch / LoopCond / NextIteration / Exit nodes TF_NewWhile builds)
// for the symbolic gradient builder, as TensorFlow's C++ builder
// (cc/framework/while_gradients.cc) makes it:
//   - a counter added to the forward loop counts its iterations;
//   - a backprop counter loop, in a frame of its own (<frame>_backprop),
//     counts that many iterations down, and its predicate drives
//   - the backprop loop, whose variables are the gradients of the loop
//     variables and whose body is the gradient of the forward body.
// Beyond TensorFlow's C++ builder, a forward value that the body's gradient
// reads is kept per iteration: the forward loop pushes it on a stack
// (StackV2 / StackPushV2) and the backprop loop pops it (StackPopV2), both
// ordered by their counters; constants are copied into the backprop frame
// and loop invariants entered into it. The gradient of a loop invariant
// (an Enter with is_constant, e.g. a weight read in the body) is summed over
// the iterations in an extra backprop loop variable.
//
//   WhileGradients loops(&scope, expects_gradient, needs_gradient);
//   // for each Exit node the builder reaches, with its summed gradient:
//   std::vector<std::pair<NodeOutput, NodeOutput>> entry_grads;
//   TW_RETURN_IF_ERROR(loops.AddExitGradient(*exit, grad, &entry_grads));
//   // once every exit of the loop has its gradient, entry_grads holds
//   // (tensor entering the loop, its gradient) pairs to propagate.
//
// Not supported (UNIMPLEMENTED): loops nested in the loop being
// differentiated.
#ifndef TENSORWEAVE_GRADIENTS_WHILE_GRADIENTS_H_
#define TENSORWEAVE_GRADIENTS_WHILE_GRADIENTS_H_

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtime/framework/status.h"
#include "runtime/gradients/gradient_scope.h"
#include "runtime/graph/graph.h"

namespace tensorweave {

class WhileGradients {
 public:
  // `expects_gradient(exit)`: whether the builder will hand that Exit a
  // gradient (others count as zero). `needs_gradient(enter)`: whether the
  // gradient of a loop-invariant Enter is wanted (the tensor it enters lies
  // on a path from the builder's inputs and the Enter reaches its outputs).
  WhileGradients(GradientScope* scope, std::function<bool(const Node*)> expects_gradient,
                 std::function<bool(const Node*)> needs_gradient)
      : scope_(scope),
        expects_gradient_(std::move(expects_gradient)),
        needs_gradient_(std::move(needs_gradient)) {}

  static bool IsLoopExit(const Node& node);

  // Records `grad` (NoGradient() for none) for `exit`; when the loop's last
  // expected exit arrives, builds the loop's gradient and appends to
  // `entry_grads` one (entering tensor, gradient) pair per loop variable and
  // per loop invariant that needs a gradient.
  Status AddExitGradient(const Node& exit, const NodeOutput& grad,
                         std::vector<std::pair<NodeOutput, NodeOutput>>* entry_grads);

 private:
  GradientScope* scope_;
  std::function<bool(const Node*)> expects_gradient_;
  std::function<bool(const Node*)> needs_gradient_;
  // By forward frame name: the gradients received per Exit node.
  std::map<std::string, std::map<const Node*, NodeOutput>> exit_grads_;
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_GRADIENTS_WHILE_GRADIENTS_H_
