// The C API's status, buffers, session options and sessions (graph-based and
// GraphDef-based): argument translation into the runtime's Session, nothing
// more. Graphs live in c_api_graph.cc, tensors in c_api_tensor.cc, prepared
// runs in c_api_callable.cc.
#include <cstdlib>
#include <cstring>
#include <utility>

#include "c_api/c_api_internal.h"

using tensorweave::GraphDef;
using tensorweave::Node;
using tensorweave::RunOptions;
using tensorweave::Session;
using tensorweave::Status;
using tensorweave::Tensor;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

namespace {

void FreeBytes(void* data, size_t) { std::free(data); }

// Owns the TF_Tensors a run produces until they are all made, so a failure
// halfway leaves nothing behind.
struct OwnedTensors {
  std::vector<TF_Tensor*> tensors;
  ~OwnedTensors() {
    for (TF_Tensor* t : tensors) TF_DeleteTensor(t);
  }
};

// Runs `session` and converts the results; `output_values` is written only on
// success (the callers have set it to NULLs beforehand). A non-NULL
// `run_metadata` gets the serialized RunMetadata, also when the run failed
// (as in TensorFlow, where it then holds what was recorded until the error).
Status RunAndConvert(Session* session, const TF_Buffer* run_options,
                     const std::vector<std::pair<std::string, Tensor>>& feeds,
                     const std::vector<std::string>& fetches,
                     const std::vector<std::string>& targets, TF_Tensor** output_values,
                     TF_Buffer* run_metadata) {
  std::vector<Tensor> outputs;
  if (run_metadata != nullptr) {
    RunOptions options;
    TW_RETURN_IF_ERROR(c_api::ParseRunOptions(run_options, &options));
    tensorweave::RunMetadata metadata;
    const Status run = session->Run(options, feeds, fetches, targets, &outputs, &metadata);
    TW_RETURN_IF_ERROR(c_api::StringToBuffer(metadata.SerializeAsString(), run_metadata));
    TW_RETURN_IF_ERROR(run);
  } else if (run_options != nullptr) {
    RunOptions options;
    TW_RETURN_IF_ERROR(c_api::ParseRunOptions(run_options, &options));
    TW_RETURN_IF_ERROR(session->Run(options, feeds, fetches, targets, &outputs));
  } else {
    TW_RETURN_IF_ERROR(session->Run(feeds, fetches, targets, &outputs));
  }
  return c_api::TensorsToC(&outputs, fetches.size(), output_values);
}

Status SessionRun(TF_Session* session, const TF_Buffer* run_options, const TF_Output* inputs,
                  TF_Tensor* const* input_values, int ninputs, const TF_Output* outputs,
                  TF_Tensor** output_values, int noutputs, const TF_Operation* const* target_opers,
                  int ntargets, TF_Buffer* run_metadata) {
  if (session == nullptr) return errors::InvalidArgument("TF_SessionRun: session is NULL");
  if (ninputs < 0 || noutputs < 0 || ntargets < 0) {
    return errors::InvalidArgument("TF_SessionRun: negative count of inputs, outputs or targets");
  }
  TW_RETURN_IF_ERROR(c_api::ExtendSessionWithNewNodes(session));

  std::vector<std::pair<std::string, Tensor>> feeds(ninputs);
  for (int i = 0; i < ninputs; ++i) {
    TW_RETURN_IF_ERROR(c_api::CheckOutput(inputs[i], "Input", i));
    if (input_values[i] == nullptr) {
      return errors::InvalidArgument("Input ", i, " ('", c_api::OutputName(inputs[i]),
                                     "') has a NULL tensor");
    }
    feeds[i].first = c_api::OutputName(inputs[i]);
    TW_RETURN_IF_ERROR(c_api::TensorFromC(*input_values[i], &feeds[i].second));
  }
  std::vector<std::string> fetches(noutputs);
  for (int i = 0; i < noutputs; ++i) {
    TW_RETURN_IF_ERROR(c_api::CheckOutput(outputs[i], "Output", i));
    fetches[i] = c_api::OutputName(outputs[i]);
  }
  std::vector<std::string> targets(ntargets);
  for (int i = 0; i < ntargets; ++i) {
    if (target_opers[i] == nullptr) return errors::InvalidArgument("Target ", i, " is NULL");
    targets[i] = c_api::ToNode(target_opers[i])->name();
  }
  return RunAndConvert(session->session.get(), run_options, feeds, fetches, targets, output_values,
                       run_metadata);
}

Status DeprecatedRun(TF_DeprecatedSession* session, const TF_Buffer* run_options,
                     const char** input_names, TF_Tensor** inputs, int ninputs,
                     const char** output_names, TF_Tensor** outputs, int noutputs,
                     const char** target_names, int ntargets, TF_Buffer* run_metadata) {
  if (session == nullptr) return errors::InvalidArgument("TF_Run: session is NULL");
  if (ninputs < 0 || noutputs < 0 || ntargets < 0) {
    return errors::InvalidArgument("TF_Run: negative count of inputs, outputs or targets");
  }
  std::vector<std::pair<std::string, Tensor>> feeds(ninputs);
  for (int i = 0; i < ninputs; ++i) {
    if (input_names[i] == nullptr || inputs[i] == nullptr) {
      return errors::InvalidArgument("Input ", i, " has a NULL name or tensor");
    }
    feeds[i].first = input_names[i];
    TW_RETURN_IF_ERROR(c_api::TensorFromC(*inputs[i], &feeds[i].second));
  }
  std::vector<std::string> fetches(noutputs);
  for (int i = 0; i < noutputs; ++i) {
    if (output_names[i] == nullptr) return errors::InvalidArgument("Output ", i, " is NULL");
    fetches[i] = output_names[i];
  }
  std::vector<std::string> targets(ntargets);
  for (int i = 0; i < ntargets; ++i) {
    if (target_names[i] == nullptr) return errors::InvalidArgument("Target ", i, " is NULL");
    targets[i] = target_names[i];
  }
  return RunAndConvert(session->session.get(), run_options, feeds, fetches, targets, outputs,
                       run_metadata);
}

TF_DeviceList* ListDevices(Session* session, TF_Status* status) {
  auto list = std::make_unique<TF_DeviceList>();
  Status result = session->ListDevices(&list->devices);
  c_api::Set(status, result);
  return result.ok() ? list.release() : nullptr;
}

// The device at `index`, or null with INVALID_ARGUMENT in `status`.
const tensorweave::DeviceAttributes* DeviceAt(const TF_DeviceList* list, int index,
                                              TF_Status* status) {
  if (list == nullptr || index < 0 || index >= static_cast<int>(list->devices.size())) {
    c_api::Set(status, errors::InvalidArgument("Device index ", index, " is out of range [0, ",
                                               list ? list->devices.size() : 0, ")"));
    return nullptr;
  }
  c_api::Set(status, Status::OK());
  return &list->devices[index];
}

void CopyStats(const tensorweave::SessionStats& stats, TW_SessionStats* out) {
  out->runs = stats.runs;
  out->executors_built = stats.executors_built;
  out->cache_hits = stats.cache_hits;
}

}  // namespace

namespace tensorweave {
namespace c_api {

Status CheckOutput(const TF_Output& output, const char* role, int position) {
  if (output.oper == nullptr) {
    return errors::InvalidArgument(role, " ", position, " has no operation");
  }
  const Node* node = c_api::ToNode(output.oper);
  if (output.index < 0 || output.index >= node->num_outputs()) {
    return errors::OutOfRange(role, " ", position, " asks for output ", output.index, " of '",
                              node->name(), "', which has ", node->num_outputs(), " outputs");
  }
  return Status::OK();
}

Status StringToBuffer(const std::string& bytes, TF_Buffer* out) {
  if (out == nullptr) return errors::InvalidArgument("The output buffer is NULL");
  if (out->data != nullptr) {
    return errors::InvalidArgument("The output buffer must be empty (data == NULL)");
  }
  void* copy = std::malloc(bytes.empty() ? 1 : bytes.size());
  if (copy == nullptr)
    return errors::ResourceExhausted("Out of memory for ", bytes.size(), " bytes");
  if (!bytes.empty()) std::memcpy(copy, bytes.data(), bytes.size());
  out->data = copy;
  out->length = bytes.size();
  out->data_deallocator = FreeBytes;
  return Status::OK();
}

Status ExtendSessionWithNewNodes(TF_Session* session) {
  TF_Graph* graph = session->graph;
  if (graph->graph.num_node_ids_unlocked() <=
      session->num_node_ids_sent.load(std::memory_order_acquire)) {
    return Status::OK();
  }
  // Under the graph lock throughout, so concurrent runs extend once and in
  // order.
  std::lock_guard<std::mutex> lock(graph->mu);
  const int num_ids = graph->graph.num_node_ids();
  const int first_new = session->num_node_ids_sent.load(std::memory_order_relaxed);
  if (first_new >= num_ids) return Status::OK();
  GraphDef graph_def;
  *graph_def.mutable_versions() = graph->graph.versions();
  for (int id = first_new; id < num_ids; ++id) {
    const Node* node = graph->graph.FindNodeId(id);
    if (node != nullptr && node->IsOp()) {
      *graph_def.add_node() = graph->graph.NodeDefWithInputs(node);
    }
  }
  // The whole library each time: the session skips the functions it holds.
  if (!graph->graph.flib_def().empty())
    *graph_def.mutable_library() = graph->graph.flib_def().ToProto();
  if (graph_def.node_size() > 0) TW_RETURN_IF_ERROR(session->session->Extend(graph_def));
  session->num_node_ids_sent.store(num_ids, std::memory_order_release);
  return Status::OK();
}

Status TensorsToC(std::vector<Tensor>* outputs, size_t expected, TF_Tensor** output_values) {
  if (outputs->size() != expected) {
    return errors::Internal("The session returned ", outputs->size(), " tensors for ", expected,
                            " fetches");
  }
  OwnedTensors converted;
  converted.tensors.reserve(outputs->size());
  for (Tensor& output : *outputs) {
    TF_Tensor* result = nullptr;
    TW_RETURN_IF_ERROR(TensorToC(std::move(output), &result));
    converted.tensors.push_back(result);
  }
  for (size_t i = 0; i < converted.tensors.size(); ++i) output_values[i] = converted.tensors[i];
  converted.tensors.clear();
  return Status::OK();
}

Status ParseRunOptions(const TF_Buffer* run_options, RunOptions* out) {
  if (run_options == nullptr || run_options->length == 0) return Status::OK();
  if (run_options->data == nullptr ||
      !out->ParseFromArray(run_options->data, static_cast<int>(run_options->length))) {
    return errors::InvalidArgument("Unparseable RunOptions proto");
  }
  return Status::OK();
}

}  // namespace c_api
}  // namespace tensorweave

extern "C" {

const char* TF_Version(void) { return "0.1.0"; }

// ---- Status ----

TF_Status* TF_NewStatus(void) { return new (std::nothrow) TF_Status; }

void TF_DeleteStatus(TF_Status* s) { delete s; }

void TF_SetStatus(TF_Status* s, TF_Code code, const char* msg) {
  c_api::GuardVoid(s, [&] {
    if (code == TF_OK) {
      c_api::Set(s, Status::OK());
    } else {
      const bool known = code > TF_OK && code <= TF_UNAUTHENTICATED;
      c_api::Set(s,
                 Status(known ? static_cast<tensorweave::Code>(code) : tensorweave::Code::UNKNOWN,
                        msg ? msg : ""));
    }
  });
}

TF_Code TF_GetCode(const TF_Status* s) { return static_cast<TF_Code>(s->status.code()); }

const char* TF_Message(const TF_Status* s) { return s->status.message().c_str(); }

// ---- Buffers ----

TF_Buffer* TF_NewBufferFromString(const void* proto, size_t proto_len) {
  TF_Buffer* buffer = TF_NewBuffer();
  if (buffer == nullptr) return nullptr;
  void* copy = std::malloc(proto_len == 0 ? 1 : proto_len);
  if (copy == nullptr) {
    delete buffer;
    return nullptr;
  }
  if (proto_len > 0) std::memcpy(copy, proto, proto_len);
  buffer->data = copy;
  buffer->length = proto_len;
  buffer->data_deallocator = FreeBytes;
  return buffer;
}

TF_Buffer* TF_NewBuffer(void) { return new (std::nothrow) TF_Buffer{nullptr, 0, nullptr}; }

void TF_DeleteBuffer(TF_Buffer* buffer) {
  if (buffer == nullptr) return;
  if (buffer->data_deallocator != nullptr) {
    buffer->data_deallocator(const_cast<void*>(buffer->data), buffer->length);
  }
  delete buffer;
}

TF_Buffer TF_GetBuffer(TF_Buffer* buffer) { return *buffer; }

// ---- Session options ----

TF_SessionOptions* TF_NewSessionOptions(void) {
  return c_api::Guard(nullptr, static_cast<TF_SessionOptions*>(nullptr),
                      [] { return new TF_SessionOptions; });
}

void TF_SetTarget(TF_SessionOptions* options, const char* target) {
  c_api::GuardVoid(nullptr, [&] { options->options.target = target ? target : ""; });
}

void TF_SetConfig(TF_SessionOptions* options, const void* proto, size_t proto_len,
                  TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    tensorweave::ConfigProto config;
    if ((proto == nullptr && proto_len > 0) ||
        !config.ParseFromArray(proto, static_cast<int>(proto_len))) {
      c_api::Set(status, errors::InvalidArgument("Unparseable ConfigProto"));
      return;
    }
    options->options.config = std::move(config);
    c_api::Set(status, Status::OK());
  });
}

void TF_DeleteSessionOptions(TF_SessionOptions* options) { delete options; }

// ---- Sessions on a TF_Graph ----

TF_Session* TF_NewSession(TF_Graph* graph, const TF_SessionOptions* opts, TF_Status* status) {
  return c_api::Guard(status, static_cast<TF_Session*>(nullptr), [&]() -> TF_Session* {
    if (graph == nullptr || opts == nullptr) {
      c_api::Set(status, errors::InvalidArgument("TF_NewSession needs a graph and options"));
      return nullptr;
    }
    auto session = std::make_unique<TF_Session>();
    session->graph = graph;
    Status result = tensorweave::NewSession(opts->options, &session->session);
    c_api::Set(status, result);
    if (!result.ok()) return nullptr;
    std::lock_guard<std::mutex> lock(graph->mu);
    ++graph->num_sessions;
    return session.release();
  });
}

void TF_SessionRun(TF_Session* session, const TF_Buffer* run_options, const TF_Output* inputs,
                   TF_Tensor* const* input_values, int ninputs, const TF_Output* outputs,
                   TF_Tensor** output_values, int noutputs, const TF_Operation* const* target_opers,
                   int ntargets, TF_Buffer* run_metadata, TF_Status* status) {
  for (int i = 0; i < noutputs; ++i) output_values[i] = nullptr;
  c_api::GuardVoid(status, [&] {
    c_api::Set(status, SessionRun(session, run_options, inputs, input_values, ninputs, outputs,
                                  output_values, noutputs, target_opers, ntargets, run_metadata));
  });
}

void TF_CloseSession(TF_Session* session, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    c_api::Set(status, session == nullptr
                           ? errors::InvalidArgument("TF_CloseSession: session is NULL")
                           : session->session->Close());
  });
}

void TF_DeleteSession(TF_Session* session, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    c_api::Set(status, Status::OK());
    if (session == nullptr) return;
    std::unique_ptr<TF_Session> owned(session);
    c_api::Set(status, owned->session->Close());
    owned->session.reset();
    TF_Graph* graph = owned->graph;
    bool delete_graph = false;
    {
      std::lock_guard<std::mutex> lock(graph->mu);
      --graph->num_sessions;
      delete_graph = graph->delete_requested && graph->num_sessions == 0;
    }
    if (delete_graph) delete graph;
  });
}

void TW_SessionGetStats(TF_Session* session, TW_SessionStats* out) {
  if (out == nullptr) return;
  CopyStats(session == nullptr ? tensorweave::SessionStats() : session->session->stats(), out);
}

TF_DeviceList* TF_SessionListDevices(TF_Session* session, TF_Status* status) {
  return c_api::Guard(status, static_cast<TF_DeviceList*>(nullptr), [&]() -> TF_DeviceList* {
    if (session == nullptr) {
      c_api::Set(status, errors::InvalidArgument("TF_SessionListDevices: session is NULL"));
      return nullptr;
    }
    return ListDevices(session->session.get(), status);
  });
}

void TF_DeleteDeviceList(TF_DeviceList* list) { delete list; }

int TF_DeviceListCount(const TF_DeviceList* list) { return static_cast<int>(list->devices.size()); }

const char* TF_DeviceListName(const TF_DeviceList* list, int index, TF_Status* status) {
  const auto* device = DeviceAt(list, index, status);
  return device ? device->name.c_str() : nullptr;
}

const char* TF_DeviceListType(const TF_DeviceList* list, int index, TF_Status* status) {
  const auto* device = DeviceAt(list, index, status);
  return device ? device->device_type.c_str() : nullptr;
}

int64_t TF_DeviceListMemoryBytes(const TF_DeviceList* list, int index, TF_Status* status) {
  const auto* device = DeviceAt(list, index, status);
  return device ? device->memory_limit_bytes : -1;
}

uint64_t TF_DeviceListIncarnation(const TF_DeviceList* list, int index, TF_Status* status) {
  const auto* device = DeviceAt(list, index, status);
  return device ? device->incarnation : 0;
}

// ---- Deprecated, GraphDef-based sessions ----

TF_DeprecatedSession* TF_NewDeprecatedSession(const TF_SessionOptions* opts, TF_Status* status) {
  return c_api::Guard(
      status, static_cast<TF_DeprecatedSession*>(nullptr), [&]() -> TF_DeprecatedSession* {
        if (opts == nullptr) {
          c_api::Set(status, errors::InvalidArgument("TF_NewDeprecatedSession needs options"));
          return nullptr;
        }
        auto session = std::make_unique<TF_DeprecatedSession>();
        Status result = tensorweave::NewSession(opts->options, &session->session);
        c_api::Set(status, result);
        return result.ok() ? session.release() : nullptr;
      });
}

void TF_CloseDeprecatedSession(TF_DeprecatedSession* session, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    c_api::Set(status, session == nullptr
                           ? errors::InvalidArgument("TF_CloseSession: session is NULL")
                           : session->session->Close());
  });
}

void TF_DeleteDeprecatedSession(TF_DeprecatedSession* session, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    c_api::Set(status, Status::OK());
    if (session == nullptr) return;
    std::unique_ptr<TF_DeprecatedSession> owned(session);
    c_api::Set(status, owned->session->Close());
  });
}

void TF_ExtendGraph(TF_DeprecatedSession* session, const void* proto, size_t proto_len,
                    TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    GraphDef graph_def;
    if ((proto == nullptr && proto_len > 0) ||
        !graph_def.ParseFromArray(proto, static_cast<int>(proto_len))) {
      c_api::Set(status, errors::InvalidArgument("Unparseable GraphDef"));
      return;
    }
    c_api::Set(status, session->session->Extend(graph_def));
  });
}

void TF_Run(TF_DeprecatedSession* session, const TF_Buffer* run_options, const char** input_names,
            TF_Tensor** inputs, int ninputs, const char** output_names, TF_Tensor** outputs,
            int noutputs, const char** target_names, int ntargets, TF_Buffer* run_metadata,
            TF_Status* status) {
  // The inputs stay the caller's, as in TensorFlow 1.15 and 2.x.
  for (int i = 0; i < noutputs; ++i) outputs[i] = nullptr;
  c_api::GuardVoid(status, [&] {
    c_api::Set(status,
               DeprecatedRun(session, run_options, input_names, inputs, ninputs, output_names,
                             outputs, noutputs, target_names, ntargets, run_metadata));
  });
}

TF_DeviceList* TF_DeprecatedSessionListDevices(TF_DeprecatedSession* session, TF_Status* status) {
  return c_api::Guard(status, static_cast<TF_DeviceList*>(nullptr), [&]() -> TF_DeviceList* {
    if (session == nullptr) {
      c_api::Set(status, errors::InvalidArgument("TF_SessionListDevices: session is NULL"));
      return nullptr;
    }
    return ListDevices(session->session.get(), status);
  });
}

void TW_DeprecatedSessionGetStats(TF_DeprecatedSession* session, TW_SessionStats* out) {
  CopyStats(session->session->stats(), out);
}

}  // extern "C"
