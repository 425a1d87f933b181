#include "runtime/gradients/gradient_registry.h"

#include <cstdio>
#include <cstdlib>

namespace tensorweave {

GradientRegistry* GradientRegistry::Global() {
  static GradientRegistry* registry = new GradientRegistry;
  return registry;
}

bool GradientRegistry::Register(const std::string& op, GradientFunction function) {
  if (!functions_.emplace(op, function).second) {
    std::fprintf(stderr, "Gradient registered twice for op %s\n", op.c_str());
    std::abort();
  }
  return true;
}

Status GradientRegistry::Lookup(const std::string& op, GradientFunction* function) const {
  auto found = functions_.find(op);
  if (found == functions_.end()) {
    return errors::NotFound("No gradient defined for op: ", op,
                            ". Please see "
                            "https://www.tensorflow.org/code/tensorflow/cc/gradients/README.md"
                            " for instructions on how to add C++ gradients.");
  }
  *function = found->second;
  return Status::OK();
}

NodeOutput ForwardInput(const Node& op, int index) {
  const Edge* edge = nullptr;
  if (!op.input_edge(index, &edge).ok()) return NoGradient();
  return NodeOutput{edge->src(), edge->src_output()};
}

}  // namespace tensorweave
