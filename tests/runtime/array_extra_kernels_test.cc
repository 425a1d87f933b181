// Kernel and shape-function tests of ShapeN, IdentityN, Snapshot, Cumsum,
// TopKV2, InTopKV2, Unique, MatrixBandPart, GatherNd, ScatterNd,
// TensorScatterUpdate, MirrorPad(Grad), SpaceToDepth and SpaceToBatchND /
// BatchToSpaceND: values, and hostile values (extreme indices, paddings
// and crops near the int64 limits) that must give INVALID_ARGUMENT rather
// than overflow or a crash.
#include <limits>

#include "tests/runtime/kernel_test_util.h"

namespace tensorweave {
namespace test {
namespace {

constexpr int64_t kBig = std::numeric_limits<int64_t>::max();
constexpr int64_t kSmall = std::numeric_limits<int64_t>::min();

Tensor Iota(const TensorShape& shape) {
  Tensor t(DT_FLOAT, shape);
  for (int64_t i = 0; i < shape.num_elements(); ++i) t.data<float>()[i] = static_cast<float>(i);
  return t;
}

TEST(ArrayExtraKernels, ShapeNIdentityNSnapshot) {
  NodeDef shape_n = NodeBuilder("ShapeN").Attr("T", DT_FLOAT).Attr("N", 2).Build();
  KernelRunner shapes(shape_n);
  TW_ASSERT_OK(shapes.Compute({Iota({2, 3}), Iota({4})}));
  ExpectValues<int32_t>(shapes.output(0), {2}, {2, 3});
  ExpectValues<int32_t>(shapes.output(1), {1}, {4});

  const Tensor x = Iota({3});
  KernelRunner snapshot(NodeBuilder("Snapshot").Attr("T", DT_FLOAT).Build());
  TW_ASSERT_OK(snapshot.Compute({x}));
  ExpectValues<float>(snapshot.output(0), {3}, {0, 1, 2});
  EXPECT_FALSE(snapshot.output(0).SharesBufferWith(x));
}

TEST(ArrayExtraKernels, CumsumExclusiveReverseAndAxisErrors) {
  KernelRunner run(NodeBuilder("Cumsum")
                       .Attr("T", DT_INT64)
                       .Attr("exclusive", true)
                       .Attr("reverse", true)
                       .Build());
  TW_ASSERT_OK(run.Compute({Vector<int64_t>({1, 2, 3}), Scalar<int32_t>(0)}));
  ExpectValues<int64_t>(run.output(0), {3}, {5, 3, 0});
  ExpectError(run.Compute({Vector<int64_t>({1}), Scalar<int32_t>(1)}), Code::INVALID_ARGUMENT,
              "Expected scan axis in the range [-1, 1), but got 1");
  ExpectError(run.Compute({Vector<int64_t>({1}), Vector<int32_t>({0})}), Code::INVALID_ARGUMENT,
              "axis must be a scalar");
}

TEST(ArrayExtraKernels, TopKTiesAndBadK) {
  KernelRunner run(NodeBuilder("TopKV2").Attr("T", DT_FLOAT).Attr("index_type", DT_INT64).Build());
  TW_ASSERT_OK(run.Compute({MakeTensor<float>({2, 3}, {1, 1, 1, 0, 2, 2}), Scalar<int32_t>(2)}));
  ExpectValues<float>(run.output(0), {2, 2}, {1, 1, 2, 2});
  ExpectValues<int64_t>(run.output(1), {2, 2}, {0, 1, 1, 2});
  ExpectError(run.Compute({Iota({2, 3}), Scalar<int32_t>(4)}), Code::INVALID_ARGUMENT,
              "at least k columns");
  ExpectError(run.Compute({Scalar<float>(1), Scalar<int32_t>(0)}), Code::INVALID_ARGUMENT,
              "input must be >= 1-D");
}

TEST(ArrayExtraKernels, TopKRanksNanAboveNumbers) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  KernelRunner run(NodeBuilder("TopKV2").Attr("T", DT_FLOAT).Build());
  TW_ASSERT_OK(run.Compute({Vector<float>({1, nan, 2, nan, 0}), Scalar<int32_t>(5)}));
  ExpectValues<int32_t>(run.output(1), {5}, {1, 3, 2, 0, 4});
}

TEST(ArrayExtraKernels, InTopKIgnoresOutOfRangeTargets) {
  KernelRunner run(NodeBuilder("InTopKV2").Attr("T", DT_INT64).Build());
  TW_ASSERT_OK(run.Compute(
      {MakeTensor<float>({2, 2}, {1, 2, 3, 3}), Vector<int64_t>({kBig, 0}), Scalar<int64_t>(1)}));
  ExpectBools(run.output(0), {2}, {0, 1});
}

TEST(ArrayExtraKernels, UniqueWithInt64Indices) {
  KernelRunner run(NodeBuilder("Unique").Attr("T", DT_FLOAT).Attr("out_idx", DT_INT64).Build());
  TW_ASSERT_OK(run.Compute({Vector<float>({3, 3, -0.0f, 0.0f, 1})}));
  ExpectValues<float>(run.output(0), {3}, {3, 0, 1});
  ExpectValues<int64_t>(run.output(1), {5}, {0, 0, 1, 1, 2});
}

TEST(ArrayExtraKernels, MatrixBandPartBoundsAndEmpty) {
  KernelRunner run(NodeBuilder("MatrixBandPart").Attr("T", DT_FLOAT).Build());
  TW_ASSERT_OK(run.Compute({Iota({2, 2}), Scalar<int64_t>(0), Scalar<int64_t>(-1)}));
  ExpectValues<float>(run.output(0), {2, 2}, {0, 1, 0, 3});
  TW_ASSERT_OK(run.Compute({Iota({0, 3, 0}), Scalar<int64_t>(0), Scalar<int64_t>(0)}));
  ExpectError(run.Compute({Iota({2, 2}), Scalar<int64_t>(kBig), Scalar<int64_t>(0)}),
              Code::INVALID_ARGUMENT, "num_lower must be negative or less or equal");
}

TEST(ArrayExtraKernels, GatherNdExtremeIndicesAndIgnorePolicy) {
  NodeDef node =
      NodeBuilder("GatherNd").Attr("Tparams", DT_FLOAT).Attr("Tindices", DT_INT64).Build();
  KernelRunner run(node);
  for (int64_t bad : {kBig, kSmall, int64_t{-1}, int64_t{3}}) {
    ExpectError(run.Compute({Iota({2, 3}), MakeTensor<int64_t>({1, 2}, {1, bad})}),
                Code::INVALID_ARGUMENT, "does not index into param shape [2,3]");
  }
  TW_ASSERT_OK(run.Compute({Iota({2, 3}), MakeTensor<int64_t>({2, 1}, {1, 0})}));
  ExpectValues<float>(run.output(0), {2, 3}, {3, 4, 5, 0, 1, 2});
  // Depth 0 picks the whole tensor once per row.
  TW_ASSERT_OK(run.Compute({Iota({2}), MakeTensor<int64_t>({3, 0}, {})}));
  ExpectValues<float>(run.output(0), {3, 2}, {0, 1, 0, 1, 0, 1});

  KernelRunner ignoring(NodeBuilder("GatherNd")
                            .Attr("Tparams", DT_FLOAT)
                            .Attr("Tindices", DT_INT64)
                            .Attr("bad_indices_policy", "IGNORE")
                            .Build());
  TW_ASSERT_OK(ignoring.Compute({Iota({3}), MakeTensor<int64_t>({2, 1}, {kBig, 2})}));
  ExpectValues<float>(ignoring.output(0), {2}, {0, 2});
  KernelRunner unknown(NodeBuilder("GatherNd")
                           .Attr("Tparams", DT_FLOAT)
                           .Attr("Tindices", DT_INT64)
                           .Attr("bad_indices_policy", "SOMETIMES")
                           .Build());
  ExpectError(unknown.construction_status(), Code::INVALID_ARGUMENT, "bad_indices_policy");
}

TEST(ArrayExtraKernels, ScatterNdChecksShapeAndRows) {
  KernelRunner run(NodeBuilder("ScatterNd").Attr("T", DT_FLOAT).Attr("Tindices", DT_INT64).Build());
  TW_ASSERT_OK(run.Compute(
      {MakeTensor<int64_t>({2, 1}, {1, 1}), Vector<float>({2, 3}), Vector<int64_t>({3})}));
  ExpectValues<float>(run.output(0), {3}, {0, 5, 0});
  ExpectError(run.Compute({MakeTensor<int64_t>({1, 1}, {kSmall}), Vector<float>({2}),
                           Vector<int64_t>({3})}),
              Code::INVALID_ARGUMENT, "does not index into shape [3]");
  ExpectError(
      run.Compute({MakeTensor<int64_t>({1, 1}, {0}), Vector<float>({2}), Vector<int64_t>({-3})}),
      Code::INVALID_ARGUMENT, "");
  ExpectError(
      run.Compute({MakeTensor<int64_t>({1, 1}, {0}), Vector<float>({2}), Vector<int64_t>({0})}),
      Code::INVALID_ARGUMENT, "empty output shape");
}

TEST(ArrayExtraKernels, TensorScatterUpdateCopiesAShared_Input) {
  KernelRunner run(
      NodeBuilder("TensorScatterUpdate").Attr("T", DT_FLOAT).Attr("Tindices", DT_INT32).Build());
  const Tensor x = Iota({3});
  TW_ASSERT_OK(run.Compute({x, MakeTensor<int32_t>({1, 1}, {2}), Vector<float>({9})}));
  ExpectValues<float>(run.output(0), {3}, {0, 1, 9});
  ExpectValues<float>(x, {3}, {0, 1, 2});
}

TEST(ArrayExtraKernels, MirrorPadExtremePaddings) {
  KernelRunner pad(NodeBuilder("MirrorPad")
                       .Attr("T", DT_FLOAT)
                       .Attr("Tpaddings", DT_INT64)
                       .Attr("mode", "SYMMETRIC")
                       .Build());
  TW_ASSERT_OK(pad.Compute({Iota({3}), MakeTensor<int64_t>({1, 2}, {2, 1})}));
  ExpectValues<float>(pad.output(0), {6}, {1, 0, 0, 1, 2, 2});
  ExpectError(pad.Compute({Iota({3}), MakeTensor<int64_t>({1, 2}, {kBig, kBig})}),
              Code::INVALID_ARGUMENT, "no greater than the dimension size");
  ExpectError(pad.Compute({Iota({3}), MakeTensor<int64_t>({2, 2}, {0, 0, 0, 0})}),
              Code::INVALID_ARGUMENT, "paddings must be a matrix of shape [1, 2]");
  KernelRunner grad(NodeBuilder("MirrorPadGrad")
                        .Attr("T", DT_FLOAT)
                        .Attr("Tpaddings", DT_INT64)
                        .Attr("mode", "REFLECT")
                        .Build());
  TW_ASSERT_OK(grad.Compute(
      {Vector<float>({1, 10, 100, 1000, 10000}), MakeTensor<int64_t>({1, 2}, {1, 1})}));
  ExpectValues<float>(grad.output(0), {3}, {10, 10101, 1000});
  ExpectError(grad.Compute({Iota({5}), MakeTensor<int64_t>({1, 2}, {kBig, kBig})}),
              Code::INVALID_ARGUMENT, "must be non-negative and fit");
}

TEST(ArrayExtraKernels, SpaceToBatchAndBackWithExtremeValues) {
  KernelRunner to_batch(NodeBuilder("SpaceToBatchND")
                            .Attr("T", DT_FLOAT)
                            .Attr("Tblock_shape", DT_INT64)
                            .Attr("Tpaddings", DT_INT64)
                            .Build());
  TW_ASSERT_OK(
      to_batch.Compute({Iota({1, 3}), Vector<int64_t>({2}), MakeTensor<int64_t>({1, 2}, {1, 0})}));
  ExpectValues<float>(to_batch.output(0), {2, 2}, {0, 1, 0, 2});
  ExpectError(to_batch.Compute(
                  {Iota({1, 3}), Vector<int64_t>({2}), MakeTensor<int64_t>({1, 2}, {kBig, kBig})}),
              Code::INVALID_ARGUMENT, "overflows");
  ExpectError(to_batch.Compute(
                  {Iota({1, 4}), Vector<int64_t>({kBig}), MakeTensor<int64_t>({1, 2}, {0, 0})}),
              Code::INVALID_ARGUMENT, "not divisible");
  KernelRunner to_space(NodeBuilder("BatchToSpaceND")
                            .Attr("T", DT_FLOAT)
                            .Attr("Tblock_shape", DT_INT64)
                            .Attr("Tcrops", DT_INT64)
                            .Build());
  TW_ASSERT_OK(to_space.Compute({MakeTensor<float>({2, 2}, {0, 1, 0, 2}), Vector<int64_t>({2}),
                                 MakeTensor<int64_t>({1, 2}, {1, 0})}));
  ExpectValues<float>(to_space.output(0), {1, 3}, {0, 1, 2});
  ExpectError(to_space.Compute(
                  {Iota({2, 2}), Vector<int64_t>({2}), MakeTensor<int64_t>({1, 2}, {kBig, kBig})}),
              Code::INVALID_ARGUMENT, "cropped_shape[0] must be non-negative");
  ExpectError(to_space.Compute(
                  {Iota({2, 2}), Vector<int64_t>({kBig}), MakeTensor<int64_t>({1, 2}, {0, 0})}),
              Code::INVALID_ARGUMENT, "overflows");
}

TEST(ArrayExtraKernels, SpaceToDepthRejectsNchwOnCpu) {
  KernelRunner run(NodeBuilder("SpaceToDepth")
                       .Attr("T", DT_FLOAT)
                       .Attr("block_size", 2)
                       .Attr("data_format", "NCHW")
                       .Build());
  ExpectError(run.construction_status(), Code::INVALID_ARGUMENT, "Only NHWC");
}

TEST(ArrayExtraShapeFns, KnownShapesAndOverflowingValues) {
  std::vector<PartialTensorShape> out;
  const Tensor block = Vector<int64_t>({2, 2});
  const Tensor pads = MakeTensor<int64_t>({2, 2}, {1, 1, 0, 2});
  NodeDef to_batch = NodeBuilder("SpaceToBatchND")
                         .Attr("T", DT_FLOAT)
                         .Attr("Tblock_shape", DT_INT64)
                         .Attr("Tpaddings", DT_INT64)
                         .Build();
  TW_ASSERT_OK(InferShapes(to_batch, {Partial({3, 4, 6, 5}), Partial({2}), Partial({2, 2})},
                           {nullptr, &block, &pads}, &out));
  EXPECT_EQ(out[0].DebugString(), Partial({12, 3, 4, 5}).DebugString());
  const Tensor huge = MakeTensor<int64_t>({2, 2}, {kBig, kBig, 0, 0});
  EXPECT_FALSE(InferShapes(to_batch, {Partial({3, 4, 6, 5}), Partial({2}), Partial({2, 2})},
                           {nullptr, &block, &huge}, &out)
                   .ok());
  NodeDef mirror = NodeBuilder("MirrorPad")
                       .Attr("T", DT_FLOAT)
                       .Attr("Tpaddings", DT_INT64)
                       .Attr("mode", "REFLECT")
                       .Build();
  EXPECT_FALSE(
      InferShapes(mirror, {Partial({3, 4}), Partial({2, 2})}, {nullptr, &huge}, &out).ok());
  TW_ASSERT_OK(InferShapes(mirror, {Partial({3, -1}), Partial({2, 2})}, {nullptr, &pads}, &out));
  EXPECT_EQ(out[0].DebugString(), Partial({5, -1}).DebugString());
  NodeDef gather =
      NodeBuilder("GatherNd").Attr("Tparams", DT_FLOAT).Attr("Tindices", DT_INT32).Build();
  TW_ASSERT_OK(InferShapes(gather, {Partial({2, 3, 4}), Partial({5, 2})}, {}, &out));
  EXPECT_EQ(out[0].DebugString(), Partial({5, 4}).DebugString());
}

}  // namespace
}  // namespace test
}  // namespace tensorweave
