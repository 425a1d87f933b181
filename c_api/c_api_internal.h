// The structs behind the opaque handles of c_api.h and the helpers the C API
// files share. Nothing here is public: C programs see only c_api.h.
#ifndef TENSORWEAVE_C_API_C_API_INTERNAL_H_
#define TENSORWEAVE_C_API_C_API_INTERNAL_H_

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "c_api/c_api.h"
#include "runtime/common_runtime/session.h"
#include "runtime/framework/status.h"
#include "runtime/framework/tensor.h"
#include "runtime/framework/tensor_shape.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/graph_def_import.h"
#include "runtime/graph/import_graph_def_extras.h"
#include "runtime/graph/node_builder.h"
#include "runtime/graph/shape_refiner.h"
#include "tensorweave/proto/function.pb.h"

struct TF_Status {
  tensorweave::Status status;
  // TF_SetPayload's (key, value) pairs in the order TensorFlow visits them:
  // setting a key again moves it to the end. Every new status clears them,
  // as replacing a TensorFlow Status drops its payloads (c_api::Set and
  // TF_SetStatus).
  std::vector<std::pair<std::string, std::string>> payloads;
};

// A TF_Tensor keeps the caller-visible bytes. For every type but TF_STRING
// those bytes are the elements, so a runtime Tensor can share the buffer
// without a copy. TF_STRING bytes are TensorFlow 1.x's encoding, which the
// runtime (one std::string per element) cannot share: strings are converted
// on the way in and out.
struct TF_Tensor {
  tensorweave::DataType dtype;
  tensorweave::TensorShape shape;
  std::shared_ptr<tensorweave::TensorBuffer> buffer;
};

struct TF_SessionOptions {
  tensorweave::SessionOptions options;
};

struct TF_Graph {
  TF_Graph();

  std::mutex mu;
  tensorweave::Graph graph;           // guarded by mu
  tensorweave::ShapeRefiner refiner;  // shapes of graph's outputs; guarded by mu
  // The graph outlives TF_DeleteGraph while sessions still use it; the last
  // of TF_DeleteGraph and TF_DeleteSession frees it. Guarded by mu.
  int num_sessions = 0;
  bool delete_requested = false;
  // Set on the cond and body graphs of a TF_NewWhile: the graph the loop
  // goes into and its loop variables there (TF_FinishWhile reads them).
  TF_Graph* while_parent = nullptr;
  std::vector<TF_Output> while_parent_inputs;
};

// TF_Operation has no definition: a TF_Operation* is a tensorweave::Node*
// owned by the graph, converted with the two helpers below.
namespace tensorweave {
namespace c_api {
inline TF_Operation* ToOperation(Node* node) { return reinterpret_cast<TF_Operation*>(node); }
inline Node* ToNode(TF_Operation* oper) { return reinterpret_cast<Node*>(oper); }
inline const Node* ToNode(const TF_Operation* oper) { return reinterpret_cast<const Node*>(oper); }
}  // namespace c_api
}  // namespace tensorweave

// The arguments of tensorweave::BuildNode, collected call by call.
struct TF_OperationDescription {
  TF_Graph* graph;
  // Name, op, device and attrs.
  tensorweave::NodeDef node_def;
  // One argument per TF_AddInput / TF_AddInputList call, in order, and the
  // TF_AddControlInput operations.
  tensorweave::BuildNodeInputs inputs;
  // The first error a setter without a TF_Status met; TF_FinishOperation
  // reports it.
  tensorweave::Status status;
  // "loc:@<op>" for each TF_ColocateWith; TF_FinishOperation sets them, sorted,
  // as the "_class" attr (replacing one set directly, as in TensorFlow).
  std::set<std::string> colocation_constraints;
};

// A function the caller holds: a FunctionDef, copied in and out.
struct TF_Function {
  tensorweave::FunctionDef fdef;
};

struct TF_ImportGraphDefOptions {
  tensorweave::ImportGraphDefOptions options;
  tensorweave::ImportGraphDefExtras extras;  // default device, uniquify, return operations
};

// What TF_GraphImportGraphDefWithResults returns; the arrays it hands out
// point in here.
struct TF_ImportGraphDefResults {
  std::vector<TF_Output> return_outputs;
  std::vector<TF_Operation*> return_operations;
  std::vector<std::string> missing_unused_names;
  std::vector<const char*> missing_unused_name_pointers;  // into missing_unused_names
  std::vector<int> missing_unused_indexes;
};

struct TF_Session {
  std::unique_ptr<tensorweave::Session> session;
  TF_Graph* graph;
  // Nodes with an id below this were sent to the session already (ids only
  // grow, so "new since the last run" is a range). Written under graph->mu;
  // read without it to compare with graph->graph.num_node_ids_unlocked().
  std::atomic<int> num_node_ids_sent{0};
};

struct TF_DeprecatedSession {
  std::unique_ptr<tensorweave::Session> session;
};

struct TF_DeviceList {
  std::vector<tensorweave::DeviceAttributes> devices;
};

namespace tensorweave {
namespace c_api {

inline void Set(TF_Status* out, Status status) {
  if (out == nullptr) return;
  out->status = std::move(status);
  out->payloads.clear();
}

// Runs `body`, turning any C++ exception into a status so none crosses the
// C boundary (errors::FromCurrentException says which code). `fallback` is
// what the C function returns when that happens.
template <typename Body, typename Result>
Result Guard(TF_Status* status, Result fallback, Body&& body) {
  try {
    return body();
  } catch (...) {
    Set(status, errors::FromCurrentException());
  }
  return fallback;
}

// The same for functions returning nothing.
template <typename Body>
void GuardVoid(TF_Status* status, Body&& body) {
  Guard(status, 0, [&] {
    body();
    return 0;
  });
}

// The attr `attr_name` of `oper`; INVALID_ARGUMENT when it has none.
Status FindAttr(TF_Operation* oper, const char* attr_name, const AttrValue** value);
// The attr, checked to hold a value of kind `expected` (`kind` names it in
// the error).
Status FindAttrOfKind(TF_Operation* oper, const char* attr_name, AttrValue::ValueCase expected,
                      const char* kind, const AttrValue** value);

// Tensors between the C API and the runtime. Both directions share the
// buffer when they can (every type but strings, and only when the buffer is
// not shared with the session on the way out).
Status TensorFromC(const TF_Tensor& in, Tensor* out);
// `out` is the only remaining holder of `in`'s buffer when `in` was moved
// from a run's outputs; a buffer someone else holds is copied so the caller
// may write to the result.
Status TensorToC(Tensor in, TF_Tensor** out);

// "name:index" for a tensor name the session understands.
std::string OutputName(const TF_Output& output);
// OK when `output` names an existing output of an operation; otherwise
// INVALID_ARGUMENT (no operation) or OUT_OF_RANGE naming `role` and
// `position` ("Input 2 ...").
Status CheckOutput(const TF_Output& output, const char* role, int position);

// Fills the empty `out` with a copy of `bytes`; INVALID_ARGUMENT when `out`
// already holds data.
Status StringToBuffer(const std::string& bytes, TF_Buffer* out);

// Parses RunOptions from an optional buffer.
Status ParseRunOptions(const TF_Buffer* run_options, RunOptions* out);

// Sends the operations added to the session's graph since it last saw them
// to the session (TF_SessionRun and TW_SessionMakeCallable do this first).
// Takes graph->mu only when some were added.
Status ExtendSessionWithNewNodes(TF_Session* session);

// Moves a run's results into `output_values` as new TF_Tensors: all of them
// on success, none (the array untouched) on failure. INTERNAL when the
// session returned another number of tensors than `expected`.
Status TensorsToC(std::vector<Tensor>* outputs, size_t expected, TF_Tensor** output_values);

}  // namespace c_api
}  // namespace tensorweave

#endif  // TENSORWEAVE_C_API_C_API_INTERNAL_H_
