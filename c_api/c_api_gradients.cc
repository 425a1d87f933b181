// TF_AddGradients / TF_AddGradientsWithPrefix: translations of
// tensorweave::AddGradients (runtime/gradients/gradients.h), which builds
// the gradient nodes in the graph under its lock.
#include <string>
#include <vector>

#include "c_api/c_api_internal.h"
#include "runtime/gradients/gradients.h"

using tensorweave::NodeOutput;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

namespace {

std::vector<NodeOutput> ToNodeOutputs(const TF_Output* outputs, int n) {
  std::vector<NodeOutput> tensors;
  for (int i = 0; i < n; ++i) tensors.push_back({c_api::ToNode(outputs[i].oper), outputs[i].index});
  return tensors;
}

tensorweave::Status AddGradients(TF_Graph* g, const char* prefix, TF_Output* y, int ny,
                                 TF_Output* x, int nx, TF_Output* dx, TF_Output* dy) {
  if (g == nullptr) return errors::InvalidArgument("TF_AddGradients: the graph is NULL");
  if (ny < 0 || nx < 0 || (ny > 0 && y == nullptr) || (nx > 0 && (x == nullptr || dy == nullptr))) {
    return errors::InvalidArgument(
        "TF_AddGradients: y and x need non-negative counts and non-NULL arrays (and dy nx "
        "entries)");
  }
  const std::vector<NodeOutput> outputs = ToNodeOutputs(y, ny);
  const std::vector<NodeOutput> inputs = ToNodeOutputs(x, nx);
  const std::vector<NodeOutput> grad_inputs =
      dx == nullptr ? std::vector<NodeOutput>() : ToNodeOutputs(dx, ny);
  const std::string prefix_name = prefix == nullptr ? std::string() : std::string(prefix);
  std::vector<NodeOutput> grads;
  tensorweave::Status status;
  {
    std::lock_guard<std::mutex> lock(g->mu);
    status = tensorweave::AddGradients(&g->graph, &g->refiner,
                                       prefix == nullptr ? nullptr : &prefix_name, outputs, inputs,
                                       dx == nullptr ? nullptr : &grad_inputs, &grads);
  }
  for (int i = 0; i < nx && i < static_cast<int>(grads.size()); ++i) {
    dy[i] = TF_Output{c_api::ToOperation(grads[i].node), grads[i].index};
  }
  return status;
}

}  // namespace

extern "C" {

void TF_AddGradients(TF_Graph* g, TF_Output* y, int ny, TF_Output* x, int nx, TF_Output* dx,
                     TF_Status* status, TF_Output* dy) {
  TF_AddGradientsWithPrefix(g, nullptr, y, ny, x, nx, dx, status, dy);
}

void TF_AddGradientsWithPrefix(TF_Graph* g, const char* prefix, TF_Output* y, int ny, TF_Output* x,
                               int nx, TF_Output* dx, TF_Status* status, TF_Output* dy) {
  c_api::GuardVoid(status,
                   [&] { c_api::Set(status, AddGradients(g, prefix, y, ny, x, nx, dx, dy)); });
}

}  // extern "C"
