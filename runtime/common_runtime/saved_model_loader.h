// Loading a SavedModel directory (TensorFlow's format for a trained graph,
// written by tf.saved_model.builder / simple_save on either side) into a new
// session, as TensorFlow's C++ loader does:
//
//   SavedModelBundle bundle;
//   TW_RETURN_IF_ERROR(LoadSavedModel(SessionOptions(), RunOptions(), "export/1",
//                                     {"serve"}, &bundle));
//   const SignatureDef& signature = bundle.meta_graph_def.signature_def().at("serving_default");
//   std::vector<Tensor> outputs;
//   TW_RETURN_IF_ERROR(bundle.session->Run({{signature.inputs().at("x").name(), x}},
//                                          {signature.outputs().at("y").name()}, {}, &outputs));
//
// The directory holds saved_model.pb (or saved_model.pbtxt): a SavedModel
// proto with one MetaGraphDef per set of tags; variables/variables, the
// checkpoint the saver's restore op reads; assets/, files whose paths the
// init op is fed. Loading picks the meta graph whose tags equal the set
// asked for, creates a session over its graph, runs the restore op with the
// checkpoint prefix fed to the saver's filename tensor, then runs the init
// op (the init-op signature, else the main op collection, else the legacy
// init op collection) with each asset tensor fed its file's path.
// python/tensorweave/saved_model/loader.py follows the same steps for a
// Python session.
#ifndef TENSORWEAVE_COMMON_RUNTIME_SAVED_MODEL_LOADER_H_
#define TENSORWEAVE_COMMON_RUNTIME_SAVED_MODEL_LOADER_H_

#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/common_runtime/session.h"
#include "runtime/framework/status.h"
#include "tensorweave/proto/meta_graph.pb.h"
#include "tensorweave/proto/saved_model.pb.h"

namespace tensorweave {

// A loaded SavedModel: the meta graph chosen and the session running it.
struct SavedModelBundle {
  MetaGraphDef meta_graph_def;
  std::unique_ptr<Session> session;
};

// Reads <export_dir>/saved_model.pb, else saved_model.pbtxt. NOT_FOUND when
// neither exists; DATA_LOSS when the file does not parse.
Status ReadSavedModel(const std::string& export_dir, SavedModel* saved_model);

// Moves the meta graph whose tag set equals `tags` out of `saved_model`.
// NOT_FOUND listing the tags asked for otherwise (TensorFlow's message).
Status FindMetaGraphDef(const std::set<std::string>& tags, SavedModel* saved_model,
                        MetaGraphDef* meta_graph_def);

// (asset tensor name, path of its file under <export_dir>/assets), from the
// meta graph's asset_file_def field or else its "saved_model_assets"
// collection of Any-packed AssetFileDefs. INVALID_ARGUMENT for an Any of
// another type.
Status AssetFeeds(const std::string& export_dir, const MetaGraphDef& meta_graph_def,
                  std::vector<std::pair<std::string, Tensor>>* feeds);

// The name of the op to run after the restore, "" when there is none.
// FAILED_PRECONDITION when an init-op collection holds other than one op.
Status InitOpName(const MetaGraphDef& meta_graph_def, std::string* name);

// Restores the variables and runs the init op in `session`, which already
// holds `meta_graph_def`'s graph. A meta graph without a saver, or an export
// directory whose variables/ is missing or empty, has nothing to restore.
Status RestoreSavedModelSession(const std::string& export_dir, const MetaGraphDef& meta_graph_def,
                                const RunOptions& run_options, Session* session);

// The whole load: read, pick the meta graph, create the session, restore,
// run the init op. On error `bundle` holds no session.
Status LoadSavedModel(const SessionOptions& session_options, const RunOptions& run_options,
                      const std::string& export_dir, const std::set<std::string>& tags,
                      SavedModelBundle* bundle);

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_SAVED_MODEL_LOADER_H_
