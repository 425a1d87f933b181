// TF_Graph: lifetime, tensor shapes, walking and serializing. Importing is
// in c_api_import.cc, reading operations and their attributes is in c_api_inspect.cc, building
// them in c_api_operation.cc.
#include <utility>

#include "c_api/c_api_internal.h"
#include "runtime/framework/node_def_util.h"

using tensorweave::GraphDef;
using tensorweave::Node;
using tensorweave::PartialTensorShape;
using tensorweave::Status;
using tensorweave::StrCat;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

TF_Graph::TF_Graph() : graph(tensorweave::OpRegistry::Global()), refiner(graph) {
  // TensorFlow's C API graphs refuse ops without a shape function until
  // TF_SetRequireShapeInferenceFns says otherwise (its Python turns it off).
  refiner.set_require_shape_inference_fns(true);
}

extern "C" {

TF_Graph* TF_NewGraph(void) {
  return c_api::Guard(nullptr, static_cast<TF_Graph*>(nullptr), [] { return new TF_Graph; });
}

void TF_DeleteGraph(TF_Graph* graph) {
  if (graph == nullptr) return;
  bool delete_now = false;
  {
    std::lock_guard<std::mutex> lock(graph->mu);
    graph->delete_requested = true;
    delete_now = graph->num_sessions == 0;
  }
  if (delete_now) delete graph;
}

void TF_GraphSetTensorShape(TF_Graph* graph, TF_Output output, const int64_t* dims,
                            const int num_dims, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    PartialTensorShape wanted;
    if (num_dims != -1) {
      if (num_dims < 0 || (num_dims > 0 && dims == nullptr)) {
        return c_api::Set(status, errors::InvalidArgument("Invalid number of dims ", num_dims));
      }
      Status built =
          PartialTensorShape::Build(std::vector<int64_t>(dims, dims + num_dims), &wanted);
      if (!built.ok()) return c_api::Set(status, std::move(built));
    }
    std::lock_guard<std::mutex> lock(graph->mu);
    c_api::Set(status, graph->refiner.SetShape(c_api::ToNode(output.oper), output.index, wanted));
  });
}

int TF_GraphGetTensorNumDims(TF_Graph* graph, TF_Output output, TF_Status* status) {
  return c_api::Guard(status, -1, [&] {
    std::lock_guard<std::mutex> lock(graph->mu);
    PartialTensorShape known;
    Status found = graph->refiner.GetShape(c_api::ToNode(output.oper), output.index, &known);
    c_api::Set(status, found);
    return found.ok() ? known.dims() : -1;
  });
}

void TF_GraphGetTensorShape(TF_Graph* graph, TF_Output output, int64_t* dims, int num_dims,
                            TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    std::lock_guard<std::mutex> lock(graph->mu);
    PartialTensorShape known;
    Status found = graph->refiner.GetShape(c_api::ToNode(output.oper), output.index, &known);
    if (!found.ok()) return c_api::Set(status, std::move(found));
    if (num_dims != known.dims()) {
      return c_api::Set(status, errors::InvalidArgument(
                                    "Output ", output.index, " of '",
                                    c_api::ToNode(output.oper)->name(), "' has rank ", known.dims(),
                                    " (", known.DebugString(), "), but num_dims is ", num_dims));
    }
    for (int i = 0; i < num_dims; ++i) dims[i] = known.dim_size(i);
    c_api::Set(status, Status::OK());
  });
}

TF_Operation* TF_GraphOperationByName(TF_Graph* graph, const char* oper_name) {
  return c_api::Guard(nullptr, static_cast<TF_Operation*>(nullptr), [&]() -> TF_Operation* {
    if (oper_name == nullptr) return nullptr;
    std::lock_guard<std::mutex> lock(graph->mu);
    Node* node = graph->graph.FindNode(oper_name);
    return node != nullptr && node->IsOp() ? c_api::ToOperation(node) : nullptr;
  });
}

TF_Operation* TF_GraphNextOperation(TF_Graph* graph, size_t* pos) {
  std::lock_guard<std::mutex> lock(graph->mu);
  const size_t end = static_cast<size_t>(graph->graph.num_node_ids());
  while (*pos < end) {
    Node* node = graph->graph.FindNodeId(static_cast<int>((*pos)++));
    if (node != nullptr && node->IsOp()) return c_api::ToOperation(node);
  }
  return nullptr;
}

void TF_GraphToGraphDef(TF_Graph* graph, TF_Buffer* output_graph_def, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    GraphDef graph_def;
    {
      std::lock_guard<std::mutex> lock(graph->mu);
      graph->graph.ToGraphDef(&graph_def);
    }
    c_api::Set(status, c_api::StringToBuffer(graph_def.SerializeAsString(), output_graph_def));
  });
}

}  // extern "C"
