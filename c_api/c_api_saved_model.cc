// TF_LoadSessionFromSavedModel: the C face of the runtime's SavedModel loader
// (runtime/common_runtime/saved_model_loader.h). Translation only: the loader
// reads the directory, creates the session, restores and initializes; this
// copies the chosen meta graph's graph into the caller's TF_Graph (an
// equivalent graph, as TensorFlow's C API does) so operations can be looked
// up by name, and wraps the session.
#include <memory>
#include <set>
#include <string>

#include "c_api/c_api_internal.h"
#include "runtime/common_runtime/saved_model_loader.h"

using tensorweave::RunOptions;
using tensorweave::SavedModelBundle;
using tensorweave::Status;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

namespace {

Status CheckArguments(const TF_SessionOptions* session_options, const char* export_dir,
                      const char* const* tags, int tags_len, TF_Graph* graph,
                      const TF_Buffer* meta_graph_def) {
  if (session_options == nullptr || export_dir == nullptr || graph == nullptr) {
    return errors::InvalidArgument(
        "TF_LoadSessionFromSavedModel needs session options, an export directory and a graph");
  }
  if (tags_len < 0 || (tags_len > 0 && tags == nullptr)) {
    return errors::InvalidArgument("TF_LoadSessionFromSavedModel: ", tags_len,
                                   " tags but no tag array");
  }
  for (int i = 0; i < tags_len; ++i) {
    if (tags[i] == nullptr) return errors::InvalidArgument("Tag ", i, " is NULL");
  }
  if (meta_graph_def != nullptr && meta_graph_def->data != nullptr) {
    return errors::InvalidArgument("Passing non-empty TF_Buffer is invalid.");
  }
  std::lock_guard<std::mutex> lock(graph->mu);
  if (graph->graph.num_op_nodes() > 0) return errors::InvalidArgument("Graph is non-empty.");
  return Status::OK();
}

// Adds the loaded graph to `graph` (empty, checked before loading) and hands
// back the session, which already holds every node the graph now has.
Status WrapBundle(SavedModelBundle* bundle, TF_Graph* graph, TF_Buffer* meta_graph_def,
                  TF_Session** out) {
  auto session = std::make_unique<TF_Session>();
  session->graph = graph;
  std::lock_guard<std::mutex> lock(graph->mu);
  // Checked again: another thread may have added operations while loading.
  if (graph->graph.num_op_nodes() > 0) return errors::InvalidArgument("Graph is non-empty.");
  TW_RETURN_IF_ERROR(tensorweave::ImportGraphDef(tensorweave::ImportGraphDefOptions(),
                                                 bundle->meta_graph_def.graph_def(), &graph->graph,
                                                 &graph->refiner));
  if (meta_graph_def != nullptr) {
    TW_RETURN_IF_ERROR(
        c_api::StringToBuffer(bundle->meta_graph_def.SerializeAsString(), meta_graph_def));
  }
  session->session = std::move(bundle->session);
  session->num_node_ids_sent.store(graph->graph.num_node_ids(), std::memory_order_release);
  ++graph->num_sessions;
  *out = session.release();
  return Status::OK();
}

}  // namespace

TF_Session* TF_LoadSessionFromSavedModel(const TF_SessionOptions* session_options,
                                         const TF_Buffer* run_options, const char* export_dir,
                                         const char* const* tags, int tags_len, TF_Graph* graph,
                                         TF_Buffer* meta_graph_def, TF_Status* status) {
  return c_api::Guard(status, static_cast<TF_Session*>(nullptr), [&]() -> TF_Session* {
    Status checked =
        CheckArguments(session_options, export_dir, tags, tags_len, graph, meta_graph_def);
    RunOptions run_options_proto;
    if (checked.ok()) checked = c_api::ParseRunOptions(run_options, &run_options_proto);
    if (!checked.ok()) {
      c_api::Set(status, std::move(checked));
      return nullptr;
    }
    const std::set<std::string> tag_set(tags, tags + tags_len);
    SavedModelBundle bundle;
    Status loaded = tensorweave::LoadSavedModel(session_options->options, run_options_proto,
                                                export_dir, tag_set, &bundle);
    TF_Session* session = nullptr;
    if (loaded.ok()) loaded = WrapBundle(&bundle, graph, meta_graph_def, &session);
    if (!loaded.ok() && bundle.session != nullptr) bundle.session->Close();
    c_api::Set(status, std::move(loaded));
    return session;
  });
}
