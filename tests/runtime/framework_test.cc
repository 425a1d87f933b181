// Tests of the framework layer: shapes, tensors and their protos, the op
// spec parser, NodeDef validation and the kernel registry.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "runtime/framework/node_def_util.h"
#include "runtime/framework/op_def.h"
#include "runtime/framework/op_kernel.h"
#include "runtime/framework/shape_inference.h"
#include "runtime/framework/tensor.h"
#include "runtime/framework/tensor_shape.h"

namespace tensorweave {
namespace {

TEST(FrameworkStatus, CodesAndMessages) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.ToString(), "OK");
  Status bad = errors::InvalidArgument("x is ", 3);
  EXPECT_EQ(bad.code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(bad.ToString(), "INVALID_ARGUMENT: x is 3");
  Status first = ok;
  first.Update(bad);
  first.Update(errors::Internal("later"));
  EXPECT_EQ(first, bad);
  EXPECT_EQ(static_cast<int>(Code::UNAUTHENTICATED), 16);
}

TEST(FrameworkShape, CheckedConstructionRejectsNegativeAndOverflow) {
  TensorShape shape;
  EXPECT_TRUE(TensorShape::Build({2, 3, 4}, &shape).ok());
  EXPECT_EQ(shape.num_elements(), 24);
  EXPECT_EQ(shape.DebugString(), "[2,3,4]");
  EXPECT_EQ(TensorShape::Build({2, -1}, &shape).code(), Code::INVALID_ARGUMENT);
  const int64_t big = int64_t{1} << 40;
  Status overflow = TensorShape::Build({big, big}, &shape);
  EXPECT_EQ(overflow.code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(shape.DebugString(), "[2,3,4]") << "a failed build leaves the shape unchanged";
  EXPECT_TRUE(TensorShape::Build({0, big, big}, &shape).ok()) << "zero elements cannot overflow";
  std::vector<int64_t> too_many(kMaxRank + 1, 1);
  EXPECT_FALSE(TensorShape::Build(too_many, &shape).ok());
}

TEST(FrameworkShape, PartialShapesMergeAndCompare) {
  PartialTensorShape a, b, merged;
  ASSERT_TRUE(PartialTensorShape::Build({-1, 4}, &a).ok());
  ASSERT_TRUE(PartialTensorShape::Build({3, -1}, &b).ok());
  ASSERT_TRUE(a.MergeWith(b, &merged).ok());
  EXPECT_EQ(merged.DebugString(), "[3,4]");
  EXPECT_TRUE(a.IsCompatibleWith(TensorShape({7, 4})));
  EXPECT_FALSE(a.IsCompatibleWith(TensorShape({7, 5})));
  EXPECT_FALSE(a.IsCompatibleWith(TensorShape({4})));
  EXPECT_TRUE(PartialTensorShape().IsCompatibleWith(TensorShape({1, 2, 3})));
  EXPECT_EQ(PartialTensorShape().DebugString(), "<unknown>");
  EXPECT_FALSE(PartialTensorShape::Build({-2}, &a).ok());
}

TEST(FrameworkShape, BroadcastingFollowsNumpy) {
  PartialTensorShape a, b, out;
  ASSERT_TRUE(PartialTensorShape::Build({2, 1, 4}, &a).ok());
  ASSERT_TRUE(PartialTensorShape::Build({3, 1}, &b).ok());
  ASSERT_TRUE(shape_fns::BroadcastShapes(a, b, &out).ok());
  EXPECT_EQ(out.DebugString(), "[2,3,4]");
  ASSERT_TRUE(PartialTensorShape::Build({2, 5}, &b).ok());
  EXPECT_EQ(shape_fns::BroadcastShapes(a, b, &out).code(), Code::INVALID_ARGUMENT);
}

TEST(FrameworkTensor, BoolBytesFromOutsideAreMadeCanonical) {
  Tensor raw(DT_BOOL, TensorShape({4}));
  const uint8_t bytes[] = {0, 1, 2, 255};
  std::memcpy(raw.raw_data(), bytes, sizeof(bytes));
  const Tensor fixed = WithCanonicalBools(raw);
  EXPECT_FALSE(fixed.SharesBufferWith(raw));  // the caller's bytes are not rewritten
  const uint8_t expected[] = {0, 1, 1, 1};
  EXPECT_EQ(std::memcmp(fixed.raw_data(), expected, sizeof(expected)), 0);
  // Canonical bools and other dtypes come back as they are, without a copy.
  EXPECT_TRUE(WithCanonicalBools(fixed).SharesBufferWith(fixed));
  Tensor numbers(DT_UINT8, TensorShape({4}));
  std::memcpy(numbers.raw_data(), bytes, sizeof(bytes));
  EXPECT_TRUE(WithCanonicalBools(numbers).SharesBufferWith(numbers));

  TensorProto proto;
  proto.set_dtype(DT_BOOL);
  proto.mutable_tensor_shape()->add_dim()->set_size(4);
  proto.set_tensor_content(std::string(reinterpret_cast<const char*>(bytes), sizeof(bytes)));
  Tensor decoded;
  ASSERT_TRUE(Tensor::FromProto(proto, &decoded).ok());
  EXPECT_EQ(std::memcmp(decoded.raw_data(), expected, sizeof(expected)), 0);
}

TEST(FrameworkTensor, AllocationIsAlignedAndSharedOnCopy) {
  Tensor t(DT_FLOAT, TensorShape({3, 5}));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw_data()) % kTensorAlignment, 0u);
  EXPECT_EQ(t.TotalBytes(), 60u);
  EXPECT_TRUE(t.RefCountIsOne());
  Tensor copy = t;
  EXPECT_TRUE(copy.SharesBufferWith(t));
  EXPECT_FALSE(t.RefCountIsOne());
  Tensor reshaped;
  EXPECT_TRUE(reshaped.CopyFrom(t, TensorShape({15})));
  EXPECT_FALSE(reshaped.CopyFrom(t, TensorShape({14})));
  Tensor deep = t.DeepCopy();
  EXPECT_FALSE(deep.SharesBufferWith(t));
  Tensor unsupported;
  EXPECT_EQ(Tensor::Allocate(DT_COMPLEX64, TensorShape({2}), &unsupported).code(),
            Code::INVALID_ARGUMENT);
}

TEST(FrameworkTensor, WrappedMemoryCallsDeallocatorOnce) {
  static int calls = 0;
  calls = 0;
  float storage[4] = {1, 2, 3, 4};
  {
    Tensor t(DT_FLOAT, TensorShape({4}),
             TensorBuffer::Wrap(storage, sizeof(storage), [](void*, size_t) { ++calls; }));
    Tensor copy = t;
    EXPECT_EQ(copy.data<float>()[2], 3.0f);
  }
  EXPECT_EQ(calls, 1);
}

TEST(FrameworkTensor, ProtoRoundTripAndSplat) {
  Tensor t(DT_INT64, TensorShape({2, 2}));
  for (int i = 0; i < 4; ++i) t.data<int64_t>()[i] = i * 10;
  TensorProto proto;
  t.AsProtoTensorContent(&proto);
  Tensor back;
  ASSERT_TRUE(Tensor::FromProto(proto, &back).ok());
  EXPECT_EQ(back.shape(), t.shape());
  EXPECT_EQ(back.data<int64_t>()[3], 30);

  TensorProto splat;
  splat.set_dtype(DT_FLOAT);
  splat.mutable_tensor_shape()->add_dim()->set_size(3);
  splat.add_float_val(2.5f);
  ASSERT_TRUE(Tensor::FromProto(splat, &back).ok());
  EXPECT_EQ(back.data<float>()[2], 2.5f);

  TensorProto strings;
  strings.set_dtype(DT_STRING);
  strings.mutable_tensor_shape()->add_dim()->set_size(2);
  strings.add_string_val("a");
  strings.add_string_val("bc");
  ASSERT_TRUE(Tensor::FromProto(strings, &back).ok());
  EXPECT_EQ(back.data<std::string>()[1], "bc");
}

TEST(FrameworkTensor, MalformedProtosAreRejected) {
  Tensor out;
  TensorProto proto;
  proto.set_dtype(DT_FLOAT);
  proto.mutable_tensor_shape()->add_dim()->set_size(2);
  proto.set_tensor_content(std::string(7, '\0'));
  EXPECT_EQ(Tensor::FromProto(proto, &out).code(), Code::INVALID_ARGUMENT);

  proto.clear_tensor_content();
  for (int i = 0; i < 3; ++i) proto.add_float_val(1);
  EXPECT_EQ(Tensor::FromProto(proto, &out).code(), Code::INVALID_ARGUMENT) << "too many values";

  TensorProto negative;
  negative.set_dtype(DT_FLOAT);
  negative.mutable_tensor_shape()->add_dim()->set_size(-3);
  EXPECT_EQ(Tensor::FromProto(negative, &out).code(), Code::INVALID_ARGUMENT);

  TensorProto huge;
  huge.set_dtype(DT_DOUBLE);
  huge.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 40);
  huge.mutable_tensor_shape()->add_dim()->set_size(int64_t{1} << 40);
  EXPECT_EQ(Tensor::FromProto(huge, &out).code(), Code::INVALID_ARGUMENT);

  TensorProto bad_dtype;
  bad_dtype.set_dtype(DT_FLOAT_REF);
  EXPECT_EQ(Tensor::FromProto(bad_dtype, &out).code(), Code::INVALID_ARGUMENT);
}

REGISTER_OP("FrameworkTestConcat")
    .Input("values: N * T")
    .Input("axis: Tidx")
    .Output("output: T")
    .Attr("N: int >= 2")
    .Attr("T: {float, int32}")
    .Attr("Tidx: {int32, int64} = DT_INT32")
    .Attr("mode: {'fast', 'exact'} = 'fast'")
    .Attr("sizes: list(int) = [1, 2]")
    .Attr("shape: shape = { unknown_rank: true }")
    .Doc("Test op exercising the spec language.");

NodeDef ConcatNode(int n, DataType dtype) {
  NodeDef node;
  node.set_name("concat");
  node.set_op("FrameworkTestConcat");
  for (int i = 0; i < n; ++i) node.add_input("v" + std::to_string(i));
  node.add_input("axis");
  (*node.mutable_attr())["N"].set_i(n);
  (*node.mutable_attr())["T"].set_type(dtype);
  return node;
}

TEST(FrameworkOpDef, SpecLanguageParses) {
  const OpDef* op = OpRegistry::Global()->LookUp("FrameworkTestConcat");
  ASSERT_NE(op, nullptr);
  ASSERT_EQ(op->inputs.size(), 2u);
  EXPECT_EQ(op->inputs[0].number_attr, "N");
  EXPECT_EQ(op->inputs[0].type_attr, "T");
  const AttrDef* n = op->FindAttr("N");
  ASSERT_NE(n, nullptr);
  EXPECT_TRUE(n->has_minimum);
  EXPECT_EQ(n->minimum, 2);
  EXPECT_EQ(op->FindAttr("Tidx")->default_value.type(), DT_INT32);
  EXPECT_EQ(op->FindAttr("mode")->allowed_strings.size(), 2u);
  EXPECT_EQ(op->FindAttr("sizes")->default_value.list().i_size(), 2);
  EXPECT_TRUE(op->FindAttr("shape")->default_value.shape().unknown_rank());
}

TEST(FrameworkOpDef, MalformedSpecsAreReported) {
  OpDef op;
  EXPECT_FALSE(OpDefBuilder("Bad").Input("x: Q").Finalize(&op).ok());
  EXPECT_FALSE(OpDefBuilder("Bad").Attr("T: {float, nosuchtype}").Finalize(&op).ok());
  EXPECT_FALSE(OpDefBuilder("Bad").Attr("x: int = notanumber").Finalize(&op).ok());
  EXPECT_FALSE(OpDefBuilder("Bad").Attr("x").Finalize(&op).ok());
  EXPECT_FALSE(OpDefBuilder("Bad").Input("x: N * float").Finalize(&op).ok());
  EXPECT_TRUE(OpDefBuilder("Good").Attr("N: int").Input("x: N * float").Finalize(&op).ok());
}

TEST(FrameworkNodeDef, ValidationAndTypes) {
  const OpDef& op = *OpRegistry::Global()->LookUp("FrameworkTestConcat");
  NodeDef node = ConcatNode(3, DT_FLOAT);
  AddDefaultsToNodeDef(op, &node);
  ASSERT_TRUE(ValidateNodeDef(node, op).ok());
  DataTypeVector in, out;
  ASSERT_TRUE(InOutTypesForNode(node, op, &in, &out).ok());
  EXPECT_EQ(in, (DataTypeVector{DT_FLOAT, DT_FLOAT, DT_FLOAT, DT_INT32}));
  EXPECT_EQ(out, (DataTypeVector{DT_FLOAT}));

  NodeDef wrong_type = ConcatNode(2, DT_DOUBLE);
  Status s = ValidateNodeDef(wrong_type, op);
  EXPECT_EQ(s.code(), Code::INVALID_ARGUMENT);
  EXPECT_NE(s.message().find("concat"), std::string::npos) << s;

  NodeDef too_few = ConcatNode(1, DT_FLOAT);
  EXPECT_FALSE(ValidateNodeDef(too_few, op).ok()) << "N >= 2";

  NodeDef extra_input = ConcatNode(2, DT_FLOAT);
  extra_input.add_input("more");
  EXPECT_FALSE(ValidateNodeDef(extra_input, op).ok());

  NodeDef unknown_attr = ConcatNode(2, DT_FLOAT);
  (*unknown_attr.mutable_attr())["surprise"].set_i(1);
  EXPECT_FALSE(ValidateNodeDef(unknown_attr, op).ok());
  (*unknown_attr.mutable_attr()).erase("surprise");
  (*unknown_attr.mutable_attr())["_class"].mutable_list()->add_s("loc:@x");
  EXPECT_TRUE(ValidateNodeDef(unknown_attr, op).ok()) << "underscore attrs are internal";

  NodeDef bad_string = ConcatNode(2, DT_FLOAT);
  (*bad_string.mutable_attr())["mode"].set_s("slow");
  EXPECT_FALSE(ValidateNodeDef(bad_string, op).ok());

  NodeDef control_first = ConcatNode(2, DT_FLOAT);
  control_first.mutable_input()->SwapElements(0, 2);
  control_first.set_input(0, "^dep");
  EXPECT_FALSE(ValidateNodeDef(control_first, op).ok());

  NodeDef missing = ConcatNode(2, DT_FLOAT);
  missing.mutable_attr()->erase("T");
  EXPECT_FALSE(ValidateNodeDef(missing, op).ok());
}

TEST(FrameworkNodeDef, AttrGettersCheckTypes) {
  NodeDef node = ConcatNode(2, DT_FLOAT);
  int64_t n;
  ASSERT_TRUE(GetNodeAttr(node, "N", &n).ok());
  EXPECT_EQ(n, 2);
  DataType dtype;
  EXPECT_EQ(GetNodeAttr(node, "N", &dtype).code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(GetNodeAttr(node, "absent", &n).code(), Code::NOT_FOUND);
  (*node.mutable_attr())["big"].set_i(int64_t{1} << 40);
  int32_t narrow;
  EXPECT_EQ(GetNodeAttr(node, "big", &narrow).code(), Code::INVALID_ARGUMENT);
}

TEST(FrameworkNodeDef, TensorNamesParseStrictly) {
  TensorId id;
  ASSERT_TRUE(ParseTensorName("a/b:3", &id));
  EXPECT_EQ(id.node, "a/b");
  EXPECT_EQ(id.index, 3);
  ASSERT_TRUE(ParseTensorName("x", &id));
  EXPECT_EQ(id.index, 0);
  ASSERT_TRUE(ParseTensorName("^ctrl", &id));
  EXPECT_EQ(id.index, -1);
  for (const char* bad : {"", "^", ":1", "a:", "a:-1", "a:b", "a:99999999999", "^a:1"}) {
    EXPECT_FALSE(ParseTensorName(bad, &id)) << bad;
  }
}

}  // namespace
}  // namespace tensorweave
