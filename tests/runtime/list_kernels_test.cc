// DT_VARIANT tensors (runtime/framework/variant.h), TensorList
// (tensor_list.h) and the TensorList kernels (runtime/kernels/
// list_kernels.cc): values, copy on write, every error path a graph can
// reach, and the shape functions.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "runtime/framework/tensor_list.h"
#include "runtime/framework/variant.h"
#include "tests/runtime/kernel_test_util.h"

namespace tensorweave {
namespace {

using test::KernelRunner;
using test::NodeBuilder;
using test::Scalar;
using test::Values;
using test::Vector;

Tensor ListOf(const std::vector<std::vector<float>>& rows, int64_t width) {
  auto list =
      std::make_shared<TensorList>(DT_FLOAT, PartialTensorShape::FromShape(TensorShape({width})));
  for (const auto& row : rows) list->tensors.push_back(Vector<float>(row));
  Tensor handle;
  EXPECT_TRUE(TensorListToTensor(list, &handle).ok());
  return handle;
}

const TensorList& ListIn(const Tensor& handle) {
  const TensorList* list = nullptr;
  EXPECT_TRUE(TensorListFromHandle(handle, "handle", &list).ok());
  static const TensorList empty(DT_INVALID, PartialTensorShape());
  return list ? *list : empty;
}

void ExpectInvalid(const Status& status, const std::string& fragment) {
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find(fragment), std::string::npos) << status;
}

TEST(VariantTensorTest, HoldsSharedValuesAndStaysInsideTheProcess) {
  // A tensor holds variants, but neither the generic containers
  // (TensorCanHold: TensorArray, Stack) nor the C API, checkpoints and the
  // wire (DataTypeIsSupported) take them.
  EXPECT_FALSE(TensorCanHold(DT_VARIANT));
  EXPECT_FALSE(DataTypeIsSupported(DT_VARIANT));
  Tensor tensor(DT_VARIANT, TensorShape({2}));
  EXPECT_TRUE(tensor.data<Variant>()[0].is_empty());
  tensor.data<Variant>()[1] = Variant(std::make_shared<TensorList>(DT_FLOAT, PartialTensorShape()));
  EXPECT_EQ(tensor.data<Variant>()[1].TypeName(), "tensorflow::TensorList");
  Tensor copy = tensor.DeepCopy();
  EXPECT_FALSE(copy.SharesBufferWith(tensor));
  EXPECT_EQ(copy.data<Variant>()[1].value(), tensor.data<Variant>()[1].value());
  EXPECT_EQ(tensor.data<Variant>()[1].use_count(), 2);
  EXPECT_NE(tensor.DebugString().find("TensorList<element_dtype: float"), std::string::npos)
      << tensor.DebugString();

  TensorProto proto;
  tensor.AsProtoTensorContent(&proto);
  EXPECT_EQ(proto.dtype(), DT_VARIANT);
  Tensor back;
  ExpectInvalid(Tensor::FromProto(proto, &back), "variant");
}

TEST(VariantTensorTest, HandlesThatAreNotListsAreInvalidArgument) {
  const TensorList* list = nullptr;
  ExpectInvalid(TensorListFromHandle(Scalar<float>(1), "input_handle", &list), "scalar variant");
  Tensor empty(DT_VARIANT, TensorShape());
  ExpectInvalid(TensorListFromHandle(empty, "input_handle", &list), "<empty>");
  KernelRunner run(NodeBuilder("TensorListLength").Build());
  ExpectInvalid(run.Compute({empty}), "TensorList");
}

TEST(ShapeTensorTest, ScalarMinusOneIsUnknownRankOtherScalarsAreNot) {
  PartialTensorShape shape;
  TW_ASSERT_OK(PartialShapeFromShapeTensor(Scalar<int32_t>(-1), &shape));
  EXPECT_TRUE(shape.unknown_rank());
  TW_ASSERT_OK(PartialShapeFromShapeTensor(Vector<int64_t>({-1, 3}), &shape));
  EXPECT_EQ(shape.dims(), 2);
  EXPECT_EQ(shape.dim_size(1), 3);
  ExpectInvalid(PartialShapeFromShapeTensor(Scalar<int32_t>(4), &shape), "-1");
  ExpectInvalid(PartialShapeFromShapeTensor(Vector<int32_t>({2, -3}), &shape), "-3");
  ExpectInvalid(PartialShapeFromShapeTensor(Vector<float>({2}), &shape), "int32 or int64");
}

TEST(ListKernelsTest, SetItemChangesAnUnsharedListInPlaceAndCopiesASharedOne) {
  KernelRunner run(NodeBuilder("TensorListSetItem").Attr("element_dtype", DT_FLOAT).Build());
  // Shared: the caller keeps `handle`, so its list must not change.
  Tensor handle = ListOf({{1, 2}, {3, 4}}, 2);
  TW_ASSERT_OK(run.Compute({handle, Scalar<int32_t>(0), Vector<float>({9, 9})}));
  EXPECT_EQ(Values<float>(ListIn(handle).tensors[0]), (std::vector<float>{1, 2}));
  EXPECT_EQ(Values<float>(ListIn(run.output(0)).tensors[0]), (std::vector<float>{9, 9}));
  EXPECT_NE(&ListIn(handle), &ListIn(run.output(0)));

  // Unshared: the kernel holds the only reference and reuses the list.
  Tensor alone = ListOf({{1, 2}, {3, 4}}, 2);
  const TensorList* before = &ListIn(alone);
  std::vector<Tensor> inputs = {std::move(alone), Scalar<int32_t>(1), Vector<float>({7, 7})};
  TW_ASSERT_OK(run.Compute(std::move(inputs)));
  EXPECT_EQ(&ListIn(run.output(0)), before);
  EXPECT_EQ(Values<float>(ListIn(run.output(0)).tensors[1]), (std::vector<float>{7, 7}));
}

TEST(ListKernelsTest, SetItemErrors) {
  KernelRunner run(NodeBuilder("TensorListSetItem").Attr("element_dtype", DT_FLOAT).Build());
  const Tensor handle = ListOf({{1, 2}}, 2);
  ExpectInvalid(run.Compute({handle, Scalar<int32_t>(1), Vector<float>({1, 1})}),
                "Trying to modify element 1 in a list with 1 elements.");
  ExpectInvalid(run.Compute({handle, Scalar<int32_t>(-1), Vector<float>({1, 1})}),
                "modify element -1");
  ExpectInvalid(run.Compute({handle, Scalar<int32_t>(0), Vector<float>({1, 1, 1})}),
                "incompatible shape [3]");
  ExpectInvalid(run.Compute({handle, Vector<int32_t>({0}), Vector<float>({1, 1})}),
                "index must be an int32 scalar");
  KernelRunner ints(NodeBuilder("TensorListSetItem").Attr("element_dtype", DT_INT32).Build());
  ExpectInvalid(ints.Compute({handle, Scalar<int32_t>(0), Vector<int32_t>({1, 1})}),
                "Invalid data types; op elements int32 but list elements float");

  KernelRunner resize(NodeBuilder("TensorListSetItem")
                          .Attr("element_dtype", DT_FLOAT)
                          .Attr("resize_if_index_out_of_bounds", true)
                          .Build());
  TW_ASSERT_OK(resize.Compute({handle, Scalar<int32_t>(3), Vector<float>({5, 6})}));
  EXPECT_EQ(ListIn(resize.output(0)).tensors.size(), 4u);
}

TEST(ListKernelsTest, GetItemStackAndGatherErrors) {
  const Tensor handle = ListOf({{1, 2}, {3, 4}}, 2);
  KernelRunner get(NodeBuilder("TensorListGetItem").Attr("element_dtype", DT_FLOAT).Build());
  ExpectInvalid(get.Compute({handle, Scalar<int32_t>(2), Vector<int32_t>({2})}),
                "Trying to access element 2 in a list with 2 elements.");
  TW_ASSERT_OK(get.Compute({handle, Scalar<int32_t>(1), Scalar<int32_t>(-1)}));
  EXPECT_EQ(Values<float>(get.output(0)), (std::vector<float>{3, 4}));
  // An unset element takes the list's shape merged with the op's.
  auto reserved = std::make_shared<TensorList>(DT_FLOAT, PartialTensorShape::UnknownDims(1));
  TW_ASSERT_OK(reserved->Resize(2));
  Tensor reserved_handle;
  TW_ASSERT_OK(TensorListToTensor(reserved, &reserved_handle));
  ExpectInvalid(get.Compute({reserved_handle, Scalar<int32_t>(0), Vector<int32_t>({-1, 3})}),
                "Incompatible shapes");
  ExpectInvalid(get.Compute({reserved_handle, Scalar<int32_t>(0), Scalar<int32_t>(-1)}),
                "not fully defined");
  TW_ASSERT_OK(get.Compute({reserved_handle, Scalar<int32_t>(1), Vector<int32_t>({3})}));
  EXPECT_EQ(Values<float>(get.output(0)), (std::vector<float>{0, 0, 0}));

  KernelRunner stack(NodeBuilder("TensorListStack")
                         .Attr("element_dtype", DT_FLOAT)
                         .Attr("num_elements", 3)
                         .Build());
  ExpectInvalid(stack.Compute({handle, Vector<int32_t>({2})}),
                "Operation expected a list with 3 elements but got a list with 2 elements.");
  KernelRunner gather(NodeBuilder("TensorListGather").Attr("element_dtype", DT_FLOAT).Build());
  ExpectInvalid(gather.Compute({handle, Vector<int32_t>({0, 5}), Vector<int32_t>({2})}),
                "gather element 5");

  // An empty list of unknown element shape cannot be stacked.
  auto list = std::make_shared<TensorList>(DT_FLOAT, PartialTensorShape());
  Tensor empty;
  TW_ASSERT_OK(TensorListToTensor(list, &empty));
  KernelRunner any_stack(NodeBuilder("TensorListStack").Attr("element_dtype", DT_FLOAT).Build());
  ExpectInvalid(any_stack.Compute({empty, Scalar<int32_t>(-1)}), "empty list");
  TW_ASSERT_OK(any_stack.Compute({empty, Vector<int32_t>({0, 3})}));
  EXPECT_EQ(any_stack.output(0).shape(), TensorShape({0, 0, 3}));
}

TEST(ListKernelsTest, ReserveFromTensorSplitAndResizeErrors) {
  KernelRunner reserve(NodeBuilder("TensorListReserve")
                           .Attr("element_dtype", DT_FLOAT)
                           .Attr("shape_type", DT_INT32)
                           .Build());
  ExpectInvalid(reserve.Compute({Vector<int32_t>({2}), Scalar<int32_t>(-1)}), "non negative");
  ExpectInvalid(reserve.Compute({Scalar<int32_t>(5), Scalar<int32_t>(1)}), "-1");
  // 2^31 - 1 unset elements would need ~100 GB of slots: refused, not a crash.
  const Status huge = reserve.Compute({Vector<int32_t>({2}), Scalar<int32_t>(2147483647)});
  EXPECT_EQ(huge.code(), Code::RESOURCE_EXHAUSTED) << huge;
  KernelRunner from(NodeBuilder("TensorListFromTensor")
                        .Attr("element_dtype", DT_FLOAT)
                        .Attr("shape_type", DT_INT32)
                        .Build());
  ExpectInvalid(from.Compute({Scalar<float>(1), Scalar<int32_t>(-1)}), "at least a vector");
  ExpectInvalid(from.Compute({Vector<float>({1, 2}), Vector<int32_t>({3})}),
                "Specified a list with shape [3]");
  KernelRunner split(NodeBuilder("TensorListSplit")
                         .Attr("element_dtype", DT_FLOAT)
                         .Attr("shape_type", DT_INT32)
                         .Build());
  ExpectInvalid(
      split.Compute({Vector<float>({1, 2, 3}), Scalar<int32_t>(-1), Vector<int64_t>({1, 1})}),
      "Unused values in tensor. Length of tensor: 3 Values used: 2");
  ExpectInvalid(
      split.Compute({Vector<float>({1, 2, 3}), Scalar<int32_t>(-1), Vector<int64_t>({2, 5})}),
      "Invalid value in lengths: 5");
  KernelRunner resize(NodeBuilder("TensorListResize").Build());
  ExpectInvalid(resize.Compute({ListOf({{1, 2}}, 2), Scalar<int32_t>(-2)}), "non-negative");
}

TEST(ListKernelsTest, PushBackPopBackAndConcat) {
  const Tensor handle = ListOf({{1, 2}, {3, 4}}, 2);
  KernelRunner push(NodeBuilder("TensorListPushBack").Attr("element_dtype", DT_FLOAT).Build());
  TW_ASSERT_OK(push.Compute({handle, Vector<float>({5, 6})}));
  EXPECT_EQ(ListIn(push.output(0)).tensors.size(), 3u);
  EXPECT_EQ(ListIn(handle).tensors.size(), 2u);
  ExpectInvalid(push.Compute({handle, Vector<float>({5})}), "incompatible shape");

  KernelRunner pop(NodeBuilder("TensorListPopBack").Attr("element_dtype", DT_FLOAT).Build());
  TW_ASSERT_OK(pop.Compute({handle, Scalar<int32_t>(-1)}));
  EXPECT_EQ(Values<float>(pop.output(1)), (std::vector<float>{3, 4}));
  EXPECT_EQ(ListIn(pop.output(0)).tensors.size(), 1u);

  KernelRunner concat(NodeBuilder("TensorListConcatV2")
                          .Attr("element_dtype", DT_FLOAT)
                          .Attr("shape_type", DT_INT32)
                          .Build());
  TW_ASSERT_OK(concat.Compute({handle, Scalar<int32_t>(-1), Vector<int64_t>({})}));
  EXPECT_EQ(Values<float>(concat.output(0)), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(Values<int64_t>(concat.output(1)), (std::vector<int64_t>{2, 2}));
}

// What tf.gradients builds for lists: ZerosLike of an unused list output
// and AddN of the gradients of a list that feeds two consumers
// (runtime/kernels/list_arithmetic.cc).
TEST(ListArithmeticTest, ZerosLikeKeepsLengthShapesAndUnsetElements) {
  auto list = std::make_shared<TensorList>(DT_FLOAT, PartialTensorShape::UnknownDims(1));
  list->max_num_elements = 5;
  list->tensors = {Vector<float>({1, 2}), Tensor(), Vector<float>({3, 4, 5})};
  Tensor handle;
  TW_ASSERT_OK(TensorListToTensor(list, &handle));
  KernelRunner run(NodeBuilder("ZerosLike").Attr("T", DT_VARIANT).Build());
  TW_ASSERT_OK(run.Compute({handle}));
  const TensorList& zeros = ListIn(run.output(0));
  EXPECT_NE(&zeros, list.get());
  EXPECT_EQ(zeros.element_dtype, DT_FLOAT);
  EXPECT_EQ(zeros.element_shape.DebugString(), "[?]");
  EXPECT_EQ(zeros.max_num_elements, 5);
  ASSERT_EQ(zeros.tensors.size(), 3u);
  EXPECT_EQ(Values<float>(zeros.tensors[0]), (std::vector<float>{0, 0}));
  EXPECT_EQ(zeros.tensors[1].dtype(), DT_INVALID);
  EXPECT_EQ(Values<float>(zeros.tensors[2]), (std::vector<float>{0, 0, 0}));
  // The input list is a value: it keeps its elements.
  EXPECT_EQ(Values<float>(list->tensors[0]), (std::vector<float>{1, 2}));

  Tensor not_a_list(DT_VARIANT, TensorShape());
  Status status = run.Compute({not_a_list});
  EXPECT_EQ(status.code(), Code::INTERNAL) << status;
  EXPECT_NE(status.message().find("ZEROS_LIKE Variant type_name: <empty>"), std::string::npos)
      << status;
  ExpectInvalid(run.Compute({Tensor(DT_VARIANT, TensorShape({2}))}),
                "ZerosLike non-scalar Tensor with dtype=DT_VARIANT is not supported.");
}

TEST(ListArithmeticTest, AddNSumsElementwiseAndAnUnsetElementAddsNothing) {
  auto with_unset = std::make_shared<TensorList>(DT_FLOAT, PartialTensorShape::UnknownDims(1));
  with_unset->tensors = {Vector<float>({1, 2}), Tensor()};
  Tensor a;
  TW_ASSERT_OK(TensorListToTensor(with_unset, &a));
  const Tensor b = ListOf({{10, 20}, {30, 40}}, 2);
  const Tensor c = ListOf({{100, 200}, {300, 400}}, 2);
  KernelRunner three(NodeBuilder("AddN").Attr("T", DT_VARIANT).Attr("N", 3).Inputs(3).Build());
  TW_ASSERT_OK(three.Compute({a, b, c}));
  const TensorList& sum = ListIn(three.output(0));
  EXPECT_EQ(sum.element_shape.DebugString(), "[2]");  // the merged element shapes
  ASSERT_EQ(sum.tensors.size(), 2u);
  EXPECT_EQ(Values<float>(sum.tensors[0]), (std::vector<float>{111, 222}));
  EXPECT_EQ(Values<float>(sum.tensors[1]), (std::vector<float>{330, 440}));
  // The inputs are shared (this test holds them): they keep their values.
  EXPECT_EQ(Values<float>(ListIn(b).tensors[0]), (std::vector<float>{10, 20}));
  EXPECT_EQ(Values<float>(with_unset->tensors[0]), (std::vector<float>{1, 2}));
  EXPECT_EQ(with_unset->tensors[1].dtype(), DT_INVALID);

  KernelRunner one(NodeBuilder("AddN").Attr("T", DT_VARIANT).Attr("N", 1).Inputs(1).Build());
  TW_ASSERT_OK(one.Compute({b}));
  EXPECT_EQ(&ListIn(one.output(0)), &ListIn(b));
}

TEST(ListArithmeticTest, AddNWritesIntoAnUnsharedInputsListAndLeavesSharedOnesAlone) {
  // What the backprop loop's accumulator does each iteration: the
  // accumulated list is the kernel's alone, so the sum goes into it.
  KernelRunner run(NodeBuilder("AddN").Attr("T", DT_VARIANT).Attr("N", 2).Inputs(2).Build());
  auto gradient = std::make_shared<TensorList>(DT_FLOAT, PartialTensorShape::UnknownDims(1));
  gradient->tensors = {Tensor(), Vector<float>({5, 6})};
  Tensor shared;
  TW_ASSERT_OK(TensorListToTensor(gradient, &shared));
  Tensor alone = ListOf({{1, 2}, {3, 4}}, 2);
  const TensorList* accumulator = &ListIn(alone);
  std::vector<Tensor> inputs = {shared, std::move(alone)};
  TW_ASSERT_OK(run.Compute(std::move(inputs)));
  EXPECT_EQ(&ListIn(run.output(0)), accumulator);
  EXPECT_EQ(Values<float>(accumulator->tensors[0]), (std::vector<float>{1, 2}));
  EXPECT_EQ(Values<float>(accumulator->tensors[1]), (std::vector<float>{8, 10}));
  EXPECT_EQ(accumulator->element_shape.DebugString(), "[2]");
  EXPECT_EQ(gradient->tensors[0].dtype(), DT_INVALID);
  EXPECT_EQ(Values<float>(gradient->tensors[1]), (std::vector<float>{5, 6}));
}

TEST(ListArithmeticTest, AddNOfListsThatDoNotMatchIsInvalidArgument) {
  KernelRunner run(NodeBuilder("AddN").Attr("T", DT_VARIANT).Attr("N", 2).Inputs(2).Build());
  const Tensor two = ListOf({{1, 2}, {3, 4}}, 2);
  ExpectInvalid(run.Compute({two, ListOf({{1, 2}}, 2)}),
                "Trying to add two lists of tensors with different lengths. One is 2 and the "
                "other is 1");
  ExpectInvalid(run.Compute({two, ListOf({{1, 2, 3}, {4, 5, 6}}, 3)}),
                "Trying to add two lists of tensors with incompatible element shapes. One is [2] "
                "and the other is [3]");
  auto ints = std::make_shared<TensorList>(DT_INT32, PartialTensorShape::FromShape({2}));
  ints->tensors = {Vector<int32_t>({1, 2}), Vector<int32_t>({3, 4})};
  Tensor int_list;
  TW_ASSERT_OK(TensorListToTensor(ints, &int_list));
  ExpectInvalid(run.Compute({two, int_list}),
                "Trying to add two lists of tensors of different dtypes. One is float and the "
                "other is int32");
  auto unknown = std::make_shared<TensorList>(DT_FLOAT, PartialTensorShape());
  unknown->tensors = {Vector<float>({1, 2, 3}), Vector<float>({1, 2})};
  Tensor unknown_list;
  TW_ASSERT_OK(TensorListToTensor(unknown, &unknown_list));
  ExpectInvalid(run.Compute({two, unknown_list}),
                "Trying to add two tensors with incompatible element shapes. One is [2] and the "
                "other is [3]");
  auto strings = std::make_shared<TensorList>(DT_STRING, PartialTensorShape());
  strings->tensors = {Tensor(DT_STRING, TensorShape())};
  Tensor string_list;
  TW_ASSERT_OK(TensorListToTensor(strings, &string_list));
  ExpectInvalid(run.Compute({string_list, string_list}), "Trying to add unsupported dtype string");
  ExpectInvalid(run.Compute({two, Tensor(DT_VARIANT, TensorShape({1}))}),
                "Inputs to operation AddN must have the same size and shape");
  Status status = run.Compute({two, Tensor(DT_VARIANT, TensorShape())});
  EXPECT_EQ(status.code(), Code::INTERNAL) << status;
  EXPECT_NE(status.message().find("different type ids"), std::string::npos) << status;
}

TEST(ListKernelsTest, ListsOfVariantsOrResourcesAreRefusedWhenTheKernelIsMade) {
  KernelRunner run(NodeBuilder("TensorListStack").Attr("element_dtype", DT_VARIANT).Build());
  EXPECT_EQ(run.construction_status().code(), Code::UNIMPLEMENTED) << run.construction_status();
}

TEST(ListOpShapesTest, ElementShapesComeFromConstantShapeInputs) {
  const OpDef* op_def = nullptr;
  TW_ASSERT_OK(OpRegistry::Global()->LookUp("TensorListStack", &op_def));
  NodeDef node = NodeBuilder("TensorListStack", "stack")
                     .Attr("element_dtype", DT_FLOAT)
                     .Attr("num_elements", 4)
                     .Inputs(2)
                     .Build();
  AddDefaultsToNodeDef(*op_def, &node);
  const Tensor shape = Vector<int32_t>({-1, 3});
  std::vector<PartialTensorShape> outputs;
  TW_ASSERT_OK(shape_inference::RunShapeFunction(
      node, *op_def,
      {PartialTensorShape::FromShape(TensorShape()), PartialTensorShape::UnknownDims(1)},
      {nullptr, &shape}, 1, &outputs));
  EXPECT_EQ(outputs[0].dim_sizes(), (std::vector<int64_t>{4, -1, 3}));
  // A handle that is not a scalar is refused, naming the node.
  Status status = shape_inference::RunShapeFunction(
      node, *op_def, {PartialTensorShape::UnknownDims(1), PartialTensorShape()}, {}, 1, &outputs);
  ExpectInvalid(status, "stack");
}

}  // namespace
}  // namespace tensorweave
