// Tests of the checkpoint kernels (runtime/kernels/save_restore_ops.cc):
// SaveV2 writing TensorFlow's V2 format, RestoreV2 reading it and the older
// format, MergeV2Checkpoints with ShardedFilename for sharded saves, and the
// shape functions.
#include <gtest/gtest.h>

#include "runtime/util/checkpoint_format.h"
#include "runtime/util/tensor_bundle.h"
#include "tests/runtime/checkpoint_test_util.h"
#include "tests/runtime/kernel_test_util.h"

namespace tensorweave {
namespace test {
namespace {

// --- SaveV2 / RestoreV2 kernels --------------------------------------------------------

NodeDef SaveNode(const DataTypeVector& dtypes) {
  NodeDef node = NodeBuilder("SaveV2", "save/SaveV2").Build();
  AttrValue list;
  for (DataType dtype : dtypes) list.mutable_list()->add_type(dtype);
  (*node.mutable_attr())["dtypes"] = list;
  return node;
}

NodeDef RestoreNode(const DataTypeVector& dtypes) {
  NodeDef node = SaveNode(dtypes);
  node.set_op("RestoreV2");
  node.set_name("save/RestoreV2");
  return node;
}

TEST(CheckpointKernels, SaveThenRestoreInAnyOrderAndSubset) {
  const std::string prefix = MakeTempDir() + "/model-100";
  KernelRunner save(SaveNode({DT_FLOAT, DT_STRING, DT_INT64}));
  TW_ASSERT_OK(save.construction_status());
  TW_ASSERT_OK(
      save.Compute({Scalar<std::string>(prefix), Vector<std::string>({"w", "s", "step"}),
                    Vector<std::string>({"", "", ""}), MakeTensor<float>({2, 2}, {1, 2, 3, 4}),
                    Vector<std::string>({"x", "yz"}), Scalar<int64_t>(100)}));
  // TensorFlow's V2 files; the older format is not written any more.
  EXPECT_EQ(ListDir(prefix.substr(0, prefix.rfind('/'))),
            (std::vector<std::string>{"model-100.data-00000-of-00001", "model-100.index"}));

  KernelRunner restore(RestoreNode({DT_INT64, DT_FLOAT}));
  TW_ASSERT_OK(restore.Compute({Scalar<std::string>(prefix), Vector<std::string>({"step", "w"}),
                                Vector<std::string>({"", ""})}));
  ExpectValues<int64_t>(restore.output(0), {}, {100});
  ExpectValues<float>(restore.output(1), {2, 2}, {1, 2, 3, 4});
}

TEST(CheckpointKernels, BadInputsAndBadFiles) {
  const std::string prefix = MakeTempDir() + "/m";
  KernelRunner save(SaveNode({DT_FLOAT}));
  ExpectError(save.Compute({Scalar<std::string>(prefix), Vector<std::string>({"w"}),
                            Vector<std::string>({"2 0,1"}), Vector<float>({1, 2})}),
              Code::UNIMPLEMENTED, "Saving slices is not supported");
  ExpectError(save.Compute({Vector<std::string>({prefix}), Vector<std::string>({"w"}),
                            Vector<std::string>({""}), Vector<float>({1})}),
              Code::INVALID_ARGUMENT, "prefix must be a scalar");
  ExpectError(save.Compute({Scalar<std::string>(prefix), Vector<std::string>({"w", "v"}),
                            Vector<std::string>({""}), Vector<float>({1})}),
              Code::INVALID_ARGUMENT, "tensor_names must be a vector of 1 strings");
  ExpectError(save.Compute({Scalar<std::string>(""), Vector<std::string>({"w"}),
                            Vector<std::string>({""}), Vector<float>({1})}),
              Code::INVALID_ARGUMENT, "prefix must not be empty");

  // Missing parent directories are created; a file in the way is NOT_FOUND.
  const std::string nested = prefix + "_dir/a/b/model";
  TW_ASSERT_OK(save.Compute({Scalar<std::string>(nested), Vector<std::string>({"w"}),
                             Vector<std::string>({""}), Vector<float>({1})}));
  EXPECT_TRUE(BundleExists(nested));
  ExpectError(
      save.Compute({Scalar<std::string>(nested + ".index/sub/x"), Vector<std::string>({"w"}),
                    Vector<std::string>({""}), Vector<float>({1})}),
      Code::NOT_FOUND, "Cannot create directory " + nested + ".index");

  KernelRunner restore(RestoreNode({DT_FLOAT}));
  ExpectError(restore.Compute({Scalar<std::string>(prefix), Vector<std::string>({"w"}),
                               Vector<std::string>({""})}),
              Code::NOT_FOUND, "neither " + prefix + ".index nor " + prefix + ".twckpt exists");
  TW_ASSERT_OK(save.Compute({Scalar<std::string>(prefix), Vector<std::string>({"w"}),
                             Vector<std::string>({""}), Vector<float>({1})}));
  ExpectError(restore.Compute({Scalar<std::string>(prefix), Vector<std::string>({"mlp/w"}),
                               Vector<std::string>({""})}),
              Code::NOT_FOUND, "Key mlp/w not found in checkpoint");
  KernelRunner restore_int(RestoreNode({DT_INT32}));
  ExpectError(restore_int.Compute({Scalar<std::string>(prefix), Vector<std::string>({"w"}),
                                   Vector<std::string>({""})}),
              Code::INVALID_ARGUMENT, "expected dtype int32 does not equal original dtype float");
  // A slice of a one-element tensor is that element.
  TW_ASSERT_OK(restore.Compute(
      {Scalar<std::string>(prefix), Vector<std::string>({"w"}), Vector<std::string>({"1 0,1"})}));
  ExpectValues<float>(restore.output(0), {1}, {1});
}

TEST(CheckpointKernels, ShapeFunctionsCheckRanksAndCounts) {
  std::vector<PartialTensorShape> outputs;
  TW_EXPECT_OK(InferShapes(RestoreNode({DT_FLOAT, DT_INT32}),
                           {Partial({}), Partial({2}), Partial({-1})}, {}, &outputs));
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_TRUE(outputs[0].unknown_rank());
  ExpectError(
      InferShapes(RestoreNode({DT_FLOAT}), {Partial({}), Partial({2}), Partial({2})}, {}, &outputs),
      Code::INVALID_ARGUMENT, "tensor_names has 2 elements but there are 1 tensors");
  ExpectError(InferShapes(SaveNode({DT_FLOAT}),
                          {Partial({1}), Partial({1}), Partial({1}), Partial({3})}, {}, &outputs),
              Code::INVALID_ARGUMENT, "rank");
}

TEST(CheckpointKernels, RestoreCutsTheSlicesAShapeAndSliceSpecAsksFor) {
  const std::string prefix = MakeTempDir() + "/m";
  KernelRunner save(SaveNode({DT_FLOAT, DT_STRING}));
  std::vector<float> grid(15);
  for (int i = 0; i < 15; ++i) grid[i] = i;
  TW_ASSERT_OK(save.Compute({Scalar<std::string>(prefix), Vector<std::string>({"g", "s"}),
                             Vector<std::string>({"", ""}), MakeTensor<float>({5, 3}, grid),
                             Vector<std::string>({"a", "b", "c", "d"})}));
  KernelRunner restore(RestoreNode({DT_FLOAT, DT_STRING}));
  auto run = [&](const std::string& grid_spec, const std::string& strings_spec) {
    return restore.Compute({Scalar<std::string>(prefix), Vector<std::string>({"g", "s"}),
                            Vector<std::string>({grid_spec, strings_spec})});
  };
  TW_ASSERT_OK(run("5 3 1,2:0,2", "4 2,2"));
  ExpectValues<float>(restore.output(0), {2, 2}, {3, 4, 6, 7});
  EXPECT_EQ(Values<std::string>(restore.output(1)), (std::vector<std::string>{"c", "d"}));
  TW_ASSERT_OK(run("5 3 -:2,1", "4 -"));
  ExpectValues<float>(restore.output(0), {5, 1}, {2, 5, 8, 11, 14});
  EXPECT_EQ(restore.output(1).NumElements(), 4);
  TW_ASSERT_OK(run("5 3 4,1:-", ""));
  ExpectValues<float>(restore.output(0), {1, 3}, {12, 13, 14});
  ExpectError(run("5 4 -:-", ""), Code::INVALID_ARGUMENT,
              "shape in shape_and_slice spec [5,4] does not match the shape stored in "
              "checkpoint: [5,3]");
  for (const std::string& bad : {"5 3", "5 3 0,6:-", "5 3 -", "5 x -:-", "5 3 a,1:-", "-1 3 -:-",
                                 "5 3 -1,2:-", "99999999999999999999 3 -:-"}) {
    ExpectError(run(bad, ""), Code::INVALID_ARGUMENT, "Invalid shape_and_slice spec");
  }
}

TEST(CheckpointKernels, RestoreReadsTheOlderFormatToo) {
  const std::string prefix = MakeTempDir() + "/old";
  TW_ASSERT_OK(WriteCheckpointFile(prefix + ".twckpt", {{"w", Scalar<float>(3)}}));
  KernelRunner restore(RestoreNode({DT_FLOAT}));
  TW_ASSERT_OK(restore.Compute(
      {Scalar<std::string>(prefix), Vector<std::string>({"w"}), Vector<std::string>({""})}));
  ExpectValues<float>(restore.output(0), {}, {3});
}

NodeDef MergeNode(bool delete_old_dirs, bool allow_missing_files) {
  NodeDef node = NodeBuilder("MergeV2Checkpoints", "save/MergeV2Checkpoints").Build();
  (*node.mutable_attr())["delete_old_dirs"].set_b(delete_old_dirs);
  (*node.mutable_attr())["allow_missing_files"].set_b(allow_missing_files);
  return node;
}

TEST(CheckpointKernels, ShardedSaveThroughShardedFilenameAndMerge) {
  const std::string dir = MakeTempDir();
  KernelRunner filename(NodeBuilder("ShardedFilename", "f").Build());
  TW_ASSERT_OK(filename.Compute(
      {Scalar<std::string>(dir + "/m_temp/part"), Scalar<int32_t>(1), Scalar<int32_t>(2)}));
  EXPECT_EQ(filename.output(0).scalar<std::string>(), dir + "/m_temp/part-00001-of-00002");
  KernelRunner spec(NodeBuilder("ShardedFilespec", "s").Build());
  TW_ASSERT_OK(spec.Compute({Scalar<std::string>("a/b"), Scalar<int32_t>(3)}));
  EXPECT_EQ(spec.output(0).scalar<std::string>(), "a/b-" + std::string(5, '?') + "-of-00003");

  KernelRunner save(SaveNode({DT_FLOAT}));
  std::vector<std::string> parts;
  for (int shard = 0; shard < 2; ++shard) {
    char part[64];
    std::snprintf(part, sizeof(part), "/m_temp/part-%05d-of-00002", shard);
    parts.push_back(dir + part);
    TW_ASSERT_OK(save.Compute({Scalar<std::string>(parts.back()),
                               Vector<std::string>({shard == 0 ? "w0" : "w1"}),
                               Vector<std::string>({""}), Scalar<float>(shard + 0.5f)}));
  }
  KernelRunner merge(MergeNode(true, false));
  TW_ASSERT_OK(merge.Compute({Vector<std::string>(parts), Scalar<std::string>(dir + "/m")}));
  EXPECT_EQ(ListDir(dir), (std::vector<std::string>{"m.data-00000-of-00002",
                                                    "m.data-00001-of-00002", "m.index"}));
  KernelRunner restore(RestoreNode({DT_FLOAT, DT_FLOAT}));
  TW_ASSERT_OK(restore.Compute({Scalar<std::string>(dir + "/m"), Vector<std::string>({"w1", "w0"}),
                                Vector<std::string>({"", ""})}));
  ExpectValues<float>(restore.output(0), {}, {1.5f});
  ExpectValues<float>(restore.output(1), {}, {0.5f});
  ExpectError(merge.Compute({Scalar<std::string>("x"), Scalar<std::string>(dir + "/m")}),
              Code::INVALID_ARGUMENT, "checkpoint_prefixes must be a vector");
  ExpectError(
      merge.Compute({Vector<std::string>({dir + "/gone"}), Scalar<std::string>(dir + "/n")}),
      Code::NOT_FOUND, "gone.index");
  KernelRunner lenient(MergeNode(false, true));
  ExpectError(
      lenient.Compute({Vector<std::string>({dir + "/gone"}), Scalar<std::string>(dir + "/n")}),
      Code::INVALID_ARGUMENT, "found none of the 1 checkpoints");
}

}  // namespace
}  // namespace test
}  // namespace tensorweave
