// Changing operations already in a graph, from the part of TensorFlow's C API
// that its Python binding uses: TF_AddOperationControlInput,
// TF_RemoveAllControlInputs, TF_SetRequestedDevice, TF_SetAttr, TF_ClearAttr,
// TF_SetFullType, TF_AddWhileInputHack, and the graph's
// TF_SetRequireShapeInferenceFns. A session that already received the
// operation (a run happened since it was added) does not see the change, as
// in TensorFlow.
#include <climits>
#include <vector>

#include "c_api/c_api_internal.h"

using tensorweave::AttrValue;
using tensorweave::Edge;
using tensorweave::Node;
using tensorweave::Status;
namespace errors = tensorweave::errors;
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

void TF_SetAttr(TF_Graph* graph, TF_Operation* op, const char* attr_name,
                TF_Buffer* attr_value_proto, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    if (graph == nullptr || op == nullptr || attr_name == nullptr) {
      return c_api::Set(
          status, errors::InvalidArgument("TF_SetAttr: the graph, operation or attr name is NULL"));
    }
    AttrValue value;
    if (attr_value_proto == nullptr ||
        (attr_value_proto->data == nullptr && attr_value_proto->length > 0) ||
        attr_value_proto->length > static_cast<size_t>(INT32_MAX) ||
        !value.ParseFromArray(attr_value_proto->data, static_cast<int>(attr_value_proto->length))) {
      return c_api::Set(
          status, errors::InvalidArgument("Invalid AttrValue proto for attr '", attr_name, "'"));
    }
    std::lock_guard<std::mutex> lock(graph->mu);
    c_api::Set(status, c_api::ToNode(op)->SetAttr(attr_name, value));
  });
}

void TF_ClearAttr(TF_Graph* graph, TF_Operation* op, const char* attr_name, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    if (graph == nullptr || op == nullptr || attr_name == nullptr) {
      return c_api::Set(status, errors::InvalidArgument(
                                    "TF_ClearAttr: the graph, operation or attr name is NULL"));
    }
    std::lock_guard<std::mutex> lock(graph->mu);
    c_api::Set(status, c_api::ToNode(op)->ClearAttr(attr_name));
  });
}

void TF_SetFullType(TF_Graph* graph, TF_Operation* op, const TF_Buffer* full_type_proto) {
  c_api::GuardVoid(nullptr, [&] {
    if (graph == nullptr || op == nullptr || full_type_proto == nullptr) return;
    // There is no status to report a bad proto in: it changes nothing.
    tensorweave::FullTypeDef full_type;
    if ((full_type_proto->data == nullptr && full_type_proto->length > 0) ||
        full_type_proto->length > static_cast<size_t>(INT32_MAX) ||
        !full_type.ParseFromArray(full_type_proto->data,
                                  static_cast<int>(full_type_proto->length))) {
      return;
    }
    std::lock_guard<std::mutex> lock(graph->mu);
    c_api::ToNode(op)->set_full_type(full_type);
  });
}

void TF_SetRequireShapeInferenceFns(TF_Graph* graph, bool require) {
  if (graph == nullptr) return;
  std::lock_guard<std::mutex> lock(graph->mu);
  graph->refiner.set_require_shape_inference_fns(require);
}

void TF_AddWhileInputHack(TF_Graph* graph, TF_Output new_src, TF_Operation* dst,
                          TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    if (graph == nullptr || dst == nullptr) {
      return c_api::Set(
          status, errors::InvalidArgument("TF_AddWhileInputHack: the graph or operation is NULL"));
    }
    Status valid = c_api::CheckOutput(new_src, "New input", 0);
    if (!valid.ok()) return c_api::Set(status, std::move(valid));
    std::lock_guard<std::mutex> lock(graph->mu);
    Node* loop = c_api::ToNode(dst);
    if (loop->type_string() != "While" && loop->type_string() != "StatelessWhile") {
      return c_api::Set(status, errors::Internal("TF_AddWhileInputHack: '", loop->name(), "' is a ",
                                                 loop->type_string(), ", not a While op"));
    }
    // The new edge takes the first input slot after the wired ones; the
    // caller has grown "T" (TF_SetAttr) so that slot exists.
    int slot = 0;
    for (const Edge* edge : loop->in_edges()) {
      if (!edge->IsControlEdge()) ++slot;
    }
    c_api::Set(status,
               graph->graph.AddEdge(c_api::ToNode(new_src.oper), new_src.index, loop, slot));
  });
}

}  // extern "C"
