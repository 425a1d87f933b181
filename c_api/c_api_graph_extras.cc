// TF_Graph queries beyond walking it: TF_GraphGetOpDef, TF_GraphVersions,
// TF_TryEvaluateConstant (runtime/common_runtime/evaluate_constant.h does
// the work), and TF_ExtendSession.
#include <utility>

#include "c_api/c_api_internal.h"
#include "runtime/common_runtime/evaluate_constant.h"
#include "runtime/framework/op_def_proto.h"

using tensorweave::Status;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

extern "C" {

void TF_GraphGetOpDef(TF_Graph* graph, const char* op_name, TF_Buffer* output_op_def,
                      TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    std::string bytes;
    {
      std::lock_guard<std::mutex> lock(graph->mu);
      const tensorweave::OpDef* op_def =
          op_name == nullptr ? nullptr : graph->graph.op_registry()->LookUp(op_name);
      if (op_def == nullptr) {
        return c_api::Set(
            status, errors::NotFound("Op type not registered '", op_name ? op_name : "", "'"));
      }
      bytes = tensorweave::OpDefToProto(*op_def).SerializeAsString();
    }
    c_api::Set(status, c_api::StringToBuffer(bytes, output_op_def));
  });
}

void TF_GraphVersions(TF_Graph* graph, TF_Buffer* output_version_def, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    std::string bytes;
    {
      std::lock_guard<std::mutex> lock(graph->mu);
      bytes = graph->graph.versions().SerializeAsString();
    }
    c_api::Set(status, c_api::StringToBuffer(bytes, output_version_def));
  });
}

unsigned char TF_TryEvaluateConstant(TF_Graph* graph, TF_Output output, TF_Tensor** result,
                                     TF_Status* status) {
  return c_api::Guard(status, static_cast<unsigned char>(0), [&]() -> unsigned char {
    *result = nullptr;
    bool evaluated = false;
    tensorweave::Tensor value;
    Status outcome;
    {
      std::lock_guard<std::mutex> lock(graph->mu);
      outcome = tensorweave::TryEvaluateConstant(graph->graph, &graph->refiner,
                                                 {c_api::ToNode(output.oper), output.index},
                                                 &evaluated, &value);
    }
    if (outcome.ok() && evaluated) outcome = c_api::TensorToC(std::move(value), result);
    c_api::Set(status, outcome);
    return outcome.ok() && evaluated ? 1 : 0;
  });
}

void TF_ExtendSession(TF_Session* session, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    if (session == nullptr) {
      return c_api::Set(status, errors::InvalidArgument("TF_ExtendSession: session is NULL"));
    }
    c_api::Set(status, c_api::ExtendSessionWithNewNodes(session));
  });
}

}  // extern "C"
