// Changing operations already in a graph, from the part of TensorFlow's C API
// that its Python binding uses: TF_AddOperationControlInput,
// TF_RemoveAllControlInputs, TF_SetRequestedDevice. A session that already
// received the operation (a run happened since it was added) does not see
// the change, as in TensorFlow.
#include <vector>

#include "c_api/c_api_internal.h"

using tensorweave::Edge;
using tensorweave::Node;
namespace c_api = tensorweave::c_api;

extern "C" {

void TF_AddOperationControlInput(TF_Graph* graph, TF_Operation* op, TF_Operation* input) {
  c_api::GuardVoid(nullptr, [&] {
    if (graph == nullptr || op == nullptr || input == nullptr) return;
    std::lock_guard<std::mutex> lock(graph->mu);
    graph->graph.AddControlEdge(c_api::ToNode(input), c_api::ToNode(op));
  });
}

void TF_RemoveAllControlInputs(TF_Graph* graph, TF_Operation* op) {
  c_api::GuardVoid(nullptr, [&] {
    if (graph == nullptr || op == nullptr) return;
    std::lock_guard<std::mutex> lock(graph->mu);
    Node* node = c_api::ToNode(op);
    // Collected first: removing an edge changes in_edges().
    std::vector<const Edge*> control_inputs;
    for (const Edge* edge : node->in_edges()) {
      if (edge->IsControlEdge() && edge->src()->IsOp()) control_inputs.push_back(edge);
    }
    for (const Edge* edge : control_inputs) graph->graph.RemoveEdge(edge);
  });
}

void TF_SetRequestedDevice(TF_Graph* graph, TF_Operation* op, const char* device) {
  c_api::GuardVoid(nullptr, [&] {
    if (graph == nullptr || op == nullptr) return;
    std::lock_guard<std::mutex> lock(graph->mu);
    c_api::ToNode(op)->set_requested_device(device ? device : "");
  });
}

}  // extern "C"
