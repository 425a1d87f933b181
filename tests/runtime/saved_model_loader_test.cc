// The SavedModel loader's reading steps: saved_model.pb / .pbtxt, picking the
// meta graph by tag set, the asset feeds (field or Any collection) and the
// init op (signature, main op, legacy init op), with TensorFlow's errors.
// Loading and serving whole models is tested through the C API
// (tests/c_api/test_capi_saved_model.py) and tests/c/saved_model.c.
#include "runtime/common_runtime/saved_model_loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace tensorweave {
namespace {

class SavedModelLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/saved_model_loader_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << bytes;
  }

  static SavedModel TwoMetaGraphs() {
    SavedModel saved_model;
    saved_model.set_saved_model_schema_version(1);
    MetaGraphDef* serve = saved_model.add_meta_graphs();
    serve->mutable_meta_info_def()->add_tags("serve");
    serve->mutable_graph_def()->add_node()->set_name("served");
    MetaGraphDef* train = saved_model.add_meta_graphs();
    train->mutable_meta_info_def()->add_tags("train");
    train->mutable_meta_info_def()->add_tags("gpu");
    train->mutable_graph_def()->add_node()->set_name("trained");
    return saved_model;
  }

  std::string dir_;
};

TEST_F(SavedModelLoaderTest, ReadsBinaryThenTextAndReportsMissingOrDamagedFiles) {
  SavedModel read;
  Status status = ReadSavedModel(dir_, &read);
  EXPECT_EQ(status.code(), Code::NOT_FOUND);
  EXPECT_NE(status.message().find("Could not find SavedModel .pb or .pbtxt"), std::string::npos);

  Write("saved_model.pbtxt", "saved_model_schema_version: 1 meta_graphs { }");
  ASSERT_TRUE(ReadSavedModel(dir_, &read).ok());
  EXPECT_EQ(read.meta_graphs_size(), 1);

  // saved_model.pb wins over the text file.
  Write("saved_model.pb", TwoMetaGraphs().SerializeAsString());
  read.Clear();
  ASSERT_TRUE(ReadSavedModel(dir_, &read).ok());
  EXPECT_EQ(read.meta_graphs_size(), 2);

  Write("saved_model.pb", "\x12\xff\xff");
  status = ReadSavedModel(dir_, &read);
  EXPECT_EQ(status.code(), Code::DATA_LOSS);
  EXPECT_NE(status.message().find("saved_model.pb"), std::string::npos);
  std::filesystem::remove(dir_ + "/saved_model.pb");
  Write("saved_model.pbtxt", "not a { proto");
  EXPECT_EQ(ReadSavedModel(dir_, &read).code(), Code::DATA_LOSS);
}

TEST_F(SavedModelLoaderTest, PicksTheMetaGraphWhoseTagSetIsEqual) {
  SavedModel saved_model = TwoMetaGraphs();
  MetaGraphDef found;
  ASSERT_TRUE(FindMetaGraphDef({"gpu", "train"}, &saved_model, &found).ok());
  EXPECT_EQ(found.graph_def().node(0).name(), "trained");
  saved_model = TwoMetaGraphs();
  Status status = FindMetaGraphDef({"train"}, &saved_model, &found);
  EXPECT_EQ(status.code(), Code::NOT_FOUND);
  EXPECT_EQ(status.message(),
            "Could not find meta graph def matching supplied tags: { train }. To inspect "
            "available tag-sets in the SavedModel, please use the SavedModel CLI: "
            "`saved_model_cli`");
}

TEST_F(SavedModelLoaderTest, AssetFeedsComeFromTheFieldOrTheAnyCollection) {
  MetaGraphDef meta_graph_def;
  google::protobuf::Any* packed = (*meta_graph_def.mutable_collection_def())["saved_model_assets"]
                                      .mutable_any_list()
                                      ->add_value();
  AssetFileDef asset;
  asset.set_filename("vocab.txt");
  asset.mutable_tensor_info()->set_name("vocab:0");
  packed->set_type_url("type.googleapis.com/tensorflow.AssetFileDef");
  packed->set_value(asset.SerializeAsString());
  std::vector<std::pair<std::string, Tensor>> feeds;
  ASSERT_TRUE(AssetFeeds("/models/1", meta_graph_def, &feeds).ok());
  ASSERT_EQ(feeds.size(), 1u);
  EXPECT_EQ(feeds[0].first, "vocab:0");
  EXPECT_EQ(feeds[0].second.scalar<std::string>(), "/models/1/assets/vocab.txt");

  // The asset_file_def field, when present, is what counts.
  AssetFileDef* field = meta_graph_def.add_asset_file_def();
  field->set_filename("labels.txt");
  field->mutable_tensor_info()->set_name("labels:0");
  feeds.clear();
  ASSERT_TRUE(AssetFeeds("/models/1", meta_graph_def, &feeds).ok());
  ASSERT_EQ(feeds.size(), 1u);
  EXPECT_EQ(feeds[0].first, "labels:0");

  meta_graph_def.clear_asset_file_def();
  packed->set_type_url("type.googleapis.com/tensorflow.SaverDef");
  feeds.clear();
  EXPECT_EQ(AssetFeeds("/models/1", meta_graph_def, &feeds).code(), Code::INVALID_ARGUMENT);
}

TEST_F(SavedModelLoaderTest, InitOpIsTheSignatureThenTheMainOpThenTheLegacyInitOp) {
  MetaGraphDef meta_graph_def;
  std::string name = "stale";
  ASSERT_TRUE(InitOpName(meta_graph_def, &name).ok());
  EXPECT_EQ(name, "");
  auto& collections = *meta_graph_def.mutable_collection_def();
  collections["legacy_init_op"].mutable_node_list()->add_value("legacy");
  ASSERT_TRUE(InitOpName(meta_graph_def, &name).ok());
  EXPECT_EQ(name, "legacy");
  collections["saved_model_main_op"].mutable_node_list()->add_value("main");
  ASSERT_TRUE(InitOpName(meta_graph_def, &name).ok());
  EXPECT_EQ(name, "main");
  (*(*meta_graph_def.mutable_signature_def())["__saved_model_init_op"]
        .mutable_outputs())["__saved_model_init_op"]
      .set_name("from_signature");
  ASSERT_TRUE(InitOpName(meta_graph_def, &name).ok());
  EXPECT_EQ(name, "from_signature");

  meta_graph_def.clear_signature_def();
  collections["saved_model_main_op"].mutable_node_list()->add_value("second");
  EXPECT_EQ(InitOpName(meta_graph_def, &name).code(), Code::FAILED_PRECONDITION);
}

}  // namespace
}  // namespace tensorweave
