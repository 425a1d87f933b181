// What the graph knows of the values behind resource and variant handles:
// TF_GetHandleShapeAndType and TF_SetHandleShapeAndType, which TensorFlow's
// Python binding uses to carry a variable's dtype and shape into functions
// and loops. The bytes are a serialized CppShapeInferenceResult.HandleData
// (runtime/proto/cpp_shape_inference.proto, TensorFlow's field numbers); the
// graph's ShapeRefiner keeps it per output.
#include <climits>
#include <string>

#include "c_api/c_api_internal.h"

using tensorweave::Node;
using tensorweave::ShapeRefiner;
namespace c_api = tensorweave::c_api;
namespace errors = tensorweave::errors;

extern "C" {

TF_Buffer* TF_GetHandleShapeAndType(TF_Graph* graph, TF_Output output) {
  return c_api::Guard(nullptr, static_cast<TF_Buffer*>(nullptr), [&]() -> TF_Buffer* {
    // As in TensorFlow, an output nothing is known of gives an empty buffer;
    // so does a bad output here (TensorFlow would abort), having no status.
    std::string bytes;
    if (graph != nullptr && output.oper != nullptr) {
      std::lock_guard<std::mutex> lock(graph->mu);
      ShapeRefiner::HandleData data;
      if (graph->refiner.GetHandleData(c_api::ToNode(output.oper), output.index, &data).ok() &&
          data.is_set()) {
        data.SerializeToString(&bytes);
      }
    }
    return bytes.empty() ? TF_NewBuffer() : TF_NewBufferFromString(bytes.data(), bytes.size());
  });
}

void TF_SetHandleShapeAndType(TF_Graph* graph, TF_Output output, const void* proto,
                              size_t proto_len, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    if (graph == nullptr || output.oper == nullptr) {
      return c_api::Set(status, errors::InvalidArgument(
                                    "TF_SetHandleShapeAndType: the graph or operation is NULL"));
    }
    ShapeRefiner::HandleData data;
    if ((proto == nullptr && proto_len > 0) || proto_len > static_cast<size_t>(INT_MAX) ||
        !data.ParseFromArray(proto, static_cast<int>(proto_len))) {
      return c_api::Set(status, errors::InvalidArgument("Couldn't deserialize HandleData proto"));
    }
    std::lock_guard<std::mutex> lock(graph->mu);
    c_api::Set(status,
               graph->refiner.SetHandleData(c_api::ToNode(output.oper), output.index, data));
  });
}

}  // extern "C"
