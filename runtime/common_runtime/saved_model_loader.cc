#include "runtime/common_runtime/saved_model_loader.h"

#include <google/protobuf/text_format.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>

#include "runtime/framework/str_util.h"

namespace tensorweave {
namespace {

// TensorFlow's names for the parts of a SavedModel directory
// (tensorflow/cc/saved_model/constants.h).
constexpr char kSavedModelFilenamePb[] = "saved_model.pb";
constexpr char kSavedModelFilenamePbTxt[] = "saved_model.pbtxt";
constexpr char kVariablesDirectory[] = "variables";
constexpr char kVariablesFilename[] = "variables";
constexpr char kAssetsDirectory[] = "assets";
constexpr char kAssetsKey[] = "saved_model_assets";
constexpr char kMainOpKey[] = "saved_model_main_op";
constexpr char kLegacyInitOpKey[] = "legacy_init_op";
constexpr char kInitOpSignatureKey[] = "__saved_model_init_op";

std::string JoinPath(const std::string& directory, const std::string& name) {
  return (std::filesystem::path(directory) / name).string();
}

bool IsRegularFile(const std::string& path) {
  std::error_code error;
  return std::filesystem::is_regular_file(path, error);
}

Status ReadFile(const std::string& path, std::string* contents) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return errors::NotFound("Could not open ", path);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  if (file.bad()) return errors::DataLoss("Could not read ", path);
  *contents = bytes.str();
  return Status::OK();
}

// TensorFlow packs AssetFileDefs as "type.googleapis.com/tensorflow.AssetFileDef";
// our own Python writes that name too, and older files may carry ours.
bool IsAssetFileDefTypeUrl(const std::string& type_url) {
  const std::string type_name = type_url.substr(type_url.rfind('/') + 1);
  return type_name == "tensorflow.AssetFileDef" ||
         type_name == AssetFileDef::descriptor()->full_name();
}

Status AssetFileDefs(const MetaGraphDef& meta_graph_def, std::vector<AssetFileDef>* assets) {
  if (meta_graph_def.asset_file_def_size() > 0) {
    assets->assign(meta_graph_def.asset_file_def().begin(), meta_graph_def.asset_file_def().end());
    return Status::OK();
  }
  auto collection = meta_graph_def.collection_def().find(kAssetsKey);
  if (collection == meta_graph_def.collection_def().end()) return Status::OK();
  for (const google::protobuf::Any& any : collection->second.any_list().value()) {
    AssetFileDef asset;
    if (!IsAssetFileDefTypeUrl(any.type_url()) || !asset.ParseFromString(any.value())) {
      return errors::InvalidArgument("The ", kAssetsKey, " collection holds a ", any.type_url(),
                                     ", not an AssetFileDef");
    }
    assets->push_back(std::move(asset));
  }
  return Status::OK();
}

Tensor StringScalar(const std::string& value) {
  Tensor tensor(DT_STRING, TensorShape({}));
  tensor.data<std::string>()[0] = value;
  return tensor;
}

// Whether <export_dir>/variables holds any file: TensorFlow's builder
// leaves it empty when the graph has no variables.
bool HasVariables(const std::string& export_dir) {
  std::error_code error;
  std::filesystem::directory_iterator entries(JoinPath(export_dir, kVariablesDirectory), error);
  return !error && entries != std::filesystem::directory_iterator();
}

Status RunRestore(const std::string& export_dir, const MetaGraphDef& meta_graph_def,
                  const RunOptions& run_options, Session* session) {
  const SaverDef& saver_def = meta_graph_def.saver_def();
  if (saver_def.restore_op_name().empty() || !HasVariables(export_dir)) return Status::OK();
  const std::string prefix =
      JoinPath(JoinPath(export_dir, kVariablesDirectory), kVariablesFilename);
  std::vector<Tensor> unused;
  return session->Run(run_options, {{saver_def.filename_tensor_name(), StringScalar(prefix)}}, {},
                      {saver_def.restore_op_name()}, &unused);
}

}  // namespace

Status ReadSavedModel(const std::string& export_dir, SavedModel* saved_model) {
  const std::string pb_path = JoinPath(export_dir, kSavedModelFilenamePb);
  const std::string pbtxt_path = JoinPath(export_dir, kSavedModelFilenamePbTxt);
  std::string contents;
  if (IsRegularFile(pb_path)) {
    TW_RETURN_IF_ERROR(ReadFile(pb_path, &contents));
    if (!saved_model->ParseFromString(contents)) {
      return errors::DataLoss("Can't parse ", pb_path, " as binary proto");
    }
    return Status::OK();
  }
  if (IsRegularFile(pbtxt_path)) {
    TW_RETURN_IF_ERROR(ReadFile(pbtxt_path, &contents));
    if (!google::protobuf::TextFormat::ParseFromString(contents, saved_model)) {
      return errors::DataLoss("Can't parse ", pbtxt_path, " as text proto");
    }
    return Status::OK();
  }
  return errors::NotFound(
      "Could not find SavedModel .pb or .pbtxt at supplied export directory path: ", export_dir,
      ". Check that the directory exists and that you have the right permissions for accessing "
      "it.");
}

Status FindMetaGraphDef(const std::set<std::string>& tags, SavedModel* saved_model,
                        MetaGraphDef* meta_graph_def) {
  for (MetaGraphDef& candidate : *saved_model->mutable_meta_graphs()) {
    const auto& candidate_tags = candidate.meta_info_def().tags();
    if (std::set<std::string>(candidate_tags.begin(), candidate_tags.end()) == tags) {
      *meta_graph_def = std::move(candidate);
      return Status::OK();
    }
  }
  return errors::NotFound("Could not find meta graph def matching supplied tags: { ",
                          StrJoin(tags, " "),
                          " }. To inspect available tag-sets in the SavedModel, please use the "
                          "SavedModel CLI: `saved_model_cli`");
}

Status AssetFeeds(const std::string& export_dir, const MetaGraphDef& meta_graph_def,
                  std::vector<std::pair<std::string, Tensor>>* feeds) {
  std::vector<AssetFileDef> assets;
  TW_RETURN_IF_ERROR(AssetFileDefs(meta_graph_def, &assets));
  const std::string assets_dir = JoinPath(export_dir, kAssetsDirectory);
  for (const AssetFileDef& asset : assets) {
    feeds->emplace_back(asset.tensor_info().name(),
                        StringScalar(JoinPath(assets_dir, asset.filename())));
  }
  return Status::OK();
}

Status InitOpName(const MetaGraphDef& meta_graph_def, std::string* name) {
  name->clear();
  auto signature = meta_graph_def.signature_def().find(kInitOpSignatureKey);
  if (signature != meta_graph_def.signature_def().end()) {
    auto output = signature->second.outputs().find(kInitOpSignatureKey);
    if (output != signature->second.outputs().end()) {
      *name = output->second.name();
      return Status::OK();
    }
  }
  for (const char* key : {kMainOpKey, kLegacyInitOpKey}) {
    auto collection = meta_graph_def.collection_def().find(key);
    if (collection == meta_graph_def.collection_def().end()) continue;
    const auto& names = collection->second.node_list().value();
    if (names.size() != 1) {
      return errors::FailedPrecondition("Expected exactly one main op in : ", key);
    }
    *name = names[0];
    return Status::OK();
  }
  return Status::OK();
}

Status RestoreSavedModelSession(const std::string& export_dir, const MetaGraphDef& meta_graph_def,
                                const RunOptions& run_options, Session* session) {
  // Both are checked before anything runs, so a bad init op leaves the
  // variables untouched too.
  std::vector<std::pair<std::string, Tensor>> asset_feeds;
  TW_RETURN_IF_ERROR(AssetFeeds(export_dir, meta_graph_def, &asset_feeds));
  std::string init_op;
  TW_RETURN_IF_ERROR(InitOpName(meta_graph_def, &init_op));
  TW_RETURN_IF_ERROR(RunRestore(export_dir, meta_graph_def, run_options, session));
  if (init_op.empty()) return Status::OK();
  std::vector<Tensor> unused;
  return session->Run(run_options, asset_feeds, {}, {init_op}, &unused);
}

Status LoadSavedModel(const SessionOptions& session_options, const RunOptions& run_options,
                      const std::string& export_dir, const std::set<std::string>& tags,
                      SavedModelBundle* bundle) {
  bundle->session.reset();
  SavedModel saved_model;
  TW_RETURN_IF_ERROR(ReadSavedModel(export_dir, &saved_model));
  TW_RETURN_IF_ERROR(FindMetaGraphDef(tags, &saved_model, &bundle->meta_graph_def));
  std::unique_ptr<Session> session;
  TW_RETURN_IF_ERROR(NewSession(session_options, &session));
  Status loaded = session->Create(bundle->meta_graph_def.graph_def());
  if (loaded.ok()) {
    loaded =
        RestoreSavedModelSession(export_dir, bundle->meta_graph_def, run_options, session.get());
  }
  if (!loaded.ok()) {
    session->Close();
    return loaded;
  }
  bundle->session = std::move(session);
  return Status::OK();
}

}  // namespace tensorweave
