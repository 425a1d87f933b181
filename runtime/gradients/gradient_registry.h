// GradientRegistry: the gradient function of each op type, as TensorFlow's
// C++ GradOpRegistry keeps them. A gradient function receives the forward
// node and the gradient of each of its outputs, and returns one gradient per
// data input (NoGradient() where none flows, e.g. into a shape or an axis).
// An op registered without a function (TW_REGISTER_NO_GRADIENT) passes no
// gradient to its inputs; an op not registered at all has no gradient
// defined, which is an error when a gradient has to flow through it.
//
//   Status SquareGrad(GradientScope& scope, const Node& op,
//                     const std::vector<NodeOutput>& grads,
//                     std::vector<NodeOutput>* input_grads) {
//     NodeOutput x = ForwardInput(op, 0);
//     NodeOutput two_x = scope.Mul(scope.Scalar(2, scope.DType(x)), x);
//     input_grads->push_back(scope.Mul(grads[0], two_x));
//     return scope.status();
//   }
//   TW_REGISTER_GRADIENT("Square", SquareGrad);
#ifndef TENSORWEAVE_GRADIENTS_GRADIENT_REGISTRY_H_
#define TENSORWEAVE_GRADIENTS_GRADIENT_REGISTRY_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/framework/status.h"
#include "runtime/gradients/gradient_scope.h"
#include "runtime/graph/graph.h"

namespace tensorweave {

using GradientFunction = Status (*)(GradientScope& scope, const Node& op,
                                    const std::vector<NodeOutput>& grads,
                                    std::vector<NodeOutput>* input_grads);

class GradientRegistry {
 public:
  static GradientRegistry* Global();

  // Registers `function` (null: the op passes no gradient) for `op`. A
  // second registration of one op is a programming error and aborts.
  bool Register(const std::string& op, GradientFunction function);

  // NOT_FOUND "No gradient defined for op: <op>. ..." (TensorFlow's words)
  // when `op` is not registered; *function is null for a no-gradient op.
  Status Lookup(const std::string& op, GradientFunction* function) const;

 private:
  std::unordered_map<std::string, GradientFunction> functions_;
};

// The tensor feeding data input `index` of `op` (NoGradient() if unwired).
NodeOutput ForwardInput(const Node& op, int index);

#define TW_GRADIENT_CONCAT_INNER(a, b) a##b
#define TW_GRADIENT_CONCAT(a, b) TW_GRADIENT_CONCAT_INNER(a, b)
#define TW_REGISTER_GRADIENT(op, function)                                     \
  static const bool TW_GRADIENT_CONCAT(tw_gradient_registered_, __COUNTER__) = \
      ::tensorweave::GradientRegistry::Global()->Register(op, function)
#define TW_REGISTER_NO_GRADIENT(op) TW_REGISTER_GRADIENT(op, nullptr)

}  // namespace tensorweave

#endif  // TENSORWEAVE_GRADIENTS_GRADIENT_REGISTRY_H_
