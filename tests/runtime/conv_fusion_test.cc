// The Conv2D / DepthwiseConv2dNative / MatMul + BiasAdd (+ Add) (+ activation) fusion pass
// (common_runtime/conv_fusion.h): which chains it fuses and which it must
// leave alone (an intermediate fetched, consumed twice or with a control
// edge out), the fused node's name, attrs and edges, and that the rewritten
// graph computes what the original does.
#include "runtime/common_runtime/conv_fusion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "runtime/common_runtime/session_factory.h"
#include "tests/runtime/graph_test_util.h"
#include "tests/runtime/session_test_util.h"

namespace tensorweave {
namespace {

using session_test::SetAttr;

Tensor RandomTensor(const TensorShape& shape, int seed) {
  Tensor tensor(DT_FLOAT, shape);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  for (int64_t i = 0; i < tensor.NumElements(); ++i) tensor.data<float>()[i] = normal(rng);
  return tensor;
}

NodeDef* AddConst(GraphDef* graph, const std::string& name, const Tensor& value) {
  NodeDef* node = session_test::AddNode(graph, name, "Const");
  SetAttr(node, "dtype", DT_FLOAT);
  SetAttr(node, "value", value);
  return node;
}

// x [2, 9, 7, 3] (fed) -> conv 3x3x3->8 (SAME, stride 2 or 1) -> BiasAdd ->
// `activation` (none when empty) -> "y" (Identity), in `data_format`.
GraphDef ConvChain(const std::string& activation, const std::string& data_format = "NHWC") {
  GraphDef graph;
  const bool nchw = data_format == "NCHW";
  session_test::AddPlaceholder(&graph, "x");
  AddConst(&graph, "w", RandomTensor(TensorShape({3, 3, 3, 8}), 1));
  AddConst(&graph, "b", RandomTensor(TensorShape({8}), 2));
  NodeDef* conv = session_test::AddNode(&graph, "conv", "Conv2D", {"x", "w"});
  SetAttr(conv, "T", DT_FLOAT);
  SetAttr(conv, "padding", std::string("SAME"));
  SetAttr(conv, "data_format", data_format);
  for (int64_t s : {1, nchw ? 1 : 2, 2, nchw ? 2 : 1}) {
    (*conv->mutable_attr())["strides"].mutable_list()->add_i(s);
  }
  NodeDef* bias = session_test::AddNode(&graph, "bias", "BiasAdd", {"conv", "b"});
  SetAttr(bias, "T", DT_FLOAT);
  SetAttr(bias, "data_format", data_format);
  std::string last = "bias";
  if (!activation.empty()) {
    NodeDef* act = session_test::AddNode(&graph, "act", activation, {"bias"});
    SetAttr(act, "T", DT_FLOAT);
    if (activation == "LeakyRelu") SetAttr(act, "alpha", 0.3f);
    last = "act";
  }
  NodeDef* y = session_test::AddNode(&graph, "y", "Identity", {last});
  SetAttr(y, "T", DT_FLOAT);
  return graph;
}

// Imports `graph_def`, runs the pass with `protected_nodes`; the result.
GraphDef Fused(const GraphDef& graph_def, const std::unordered_set<std::string>& protected_nodes,
               bool* changed) {
  Graph graph(OpRegistry::Global());
  EXPECT_TRUE(graph_test::ImportRefined(ImportGraphDefOptions(), graph_def, &graph).ok());
  const Status status = FuseConvBiasActivation(&graph, protected_nodes, changed);
  EXPECT_TRUE(status.ok()) << status;
  GraphDef out;
  graph.ToGraphDef(&out);
  return out;
}

const NodeDef* FindNode(const GraphDef& graph, const std::string& name) {
  for (const NodeDef& node : graph.node()) {
    if (node.name() == name) return &node;
  }
  return nullptr;
}

int CountOps(const GraphDef& graph, const std::string& op) {
  int count = 0;
  for (const NodeDef& node : graph.node()) count += node.op() == op;
  return count;
}

std::vector<Tensor> RunGraph(const GraphDef& graph, const Tensor& x,
                             const std::vector<std::string>& fetches) {
  std::unique_ptr<Session> session;
  EXPECT_TRUE(NewSession(SessionOptions(), &session).ok());
  Status status = session->Create(graph);
  EXPECT_TRUE(status.ok()) << status;
  std::vector<Tensor> outputs;
  status = session->Run({{"x", x}}, fetches, {}, &outputs);
  EXPECT_TRUE(status.ok()) << status;
  return outputs;
}

void ExpectNear(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    ASSERT_NEAR(a.data<float>()[i], b.data<float>()[i], 1e-4f * (1 + std::fabs(b.data<float>()[i])))
        << "element " << i;
  }
}

std::vector<std::string> FusedOps(const NodeDef& node) {
  std::vector<std::string> ops;
  for (const std::string& s : node.attr().at("fused_ops").list().s()) ops.push_back(s);
  return ops;
}

class ConvFusionActivation : public ::testing::TestWithParam<std::string> {};

TEST_P(ConvFusionActivation, FusesTheChainAndKeepsTheValues) {
  const std::string activation = GetParam();
  for (const std::string format : {"NHWC", "NCHW"}) {
    const GraphDef original = ConvChain(activation, format);
    bool changed = false;
    const GraphDef fused = Fused(original, {"y"}, &changed);
    EXPECT_TRUE(changed);
    EXPECT_EQ(CountOps(fused, "Conv2D"), 0);
    EXPECT_EQ(CountOps(fused, "BiasAdd"), 0);
    const NodeDef* node = FindNode(fused, activation.empty() ? "bias" : "act");
    ASSERT_NE(node, nullptr);
    EXPECT_EQ(node->op(), "_FusedConv2D");
    std::vector<std::string> expected = {"BiasAdd"};
    if (!activation.empty()) expected.push_back(activation);
    EXPECT_EQ(FusedOps(*node), expected);
    EXPECT_EQ(node->attr().at("data_format").s(), format);
    if (activation == "LeakyRelu") {
      EXPECT_FLOAT_EQ(node->attr().at("leakyrelu_alpha").f(), 0.3f);
    }
    const Tensor x =
        RandomTensor(format == "NHWC" ? TensorShape({2, 9, 7, 3}) : TensorShape({2, 3, 9, 7}), 3);
    ExpectNear(RunGraph(fused, x, {"y"})[0], RunGraph(original, x, {"y"})[0]);
  }
}

INSTANTIATE_TEST_SUITE_P(Activations, ConvFusionActivation,
                         ::testing::Values("", "Relu", "Relu6", "Elu", "LeakyRelu"));

TEST(ConvFusion, NeverFusesAFetchedIntermediate) {
  bool changed = true;
  const GraphDef fused = Fused(ConvChain("Relu"), {"y", "conv"}, &changed);
  EXPECT_FALSE(changed);
  EXPECT_EQ(CountOps(fused, "Conv2D"), 1);
  // A fetched BiasAdd keeps its activation out; the conv fuses into it,
  // which keeps its name and so its value.
  const GraphDef partly = Fused(ConvChain("Relu"), {"y", "bias"}, &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(FindNode(partly, "bias")->op(), "_FusedConv2D");
  EXPECT_EQ(FusedOps(*FindNode(partly, "bias")), std::vector<std::string>{"BiasAdd"});
  EXPECT_EQ(CountOps(partly, "Relu"), 1);
}

TEST(ConvFusion, NeverFusesAnIntermediateUsedTwice) {
  GraphDef graph = ConvChain("Relu");
  NodeDef* other = session_test::AddNode(&graph, "other", "Identity", {"conv"});
  SetAttr(other, "T", DT_FLOAT);
  bool changed = true;
  const GraphDef fused = Fused(graph, {"y", "other"}, &changed);
  EXPECT_FALSE(changed);
  EXPECT_EQ(CountOps(fused, "Conv2D"), 1);
  EXPECT_EQ(CountOps(fused, "Relu"), 1);
}

TEST(ConvFusion, ABiasAddUsedTwiceFusesWithoutTheActivation) {
  GraphDef graph = ConvChain("Relu");
  NodeDef* other = session_test::AddNode(&graph, "other", "Identity", {"bias"});
  SetAttr(other, "T", DT_FLOAT);
  bool changed = false;
  const GraphDef fused = Fused(graph, {"y", "other"}, &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(FindNode(fused, "bias")->op(), "_FusedConv2D");
  EXPECT_EQ(FusedOps(*FindNode(fused, "bias")), std::vector<std::string>{"BiasAdd"});
  EXPECT_EQ(FindNode(fused, "act")->op(), "Relu");
  const Tensor x = RandomTensor(TensorShape({2, 9, 7, 3}), 4);
  const std::vector<Tensor> before = RunGraph(graph, x, {"y", "other"});
  const std::vector<Tensor> after = RunGraph(fused, x, {"y", "other"});
  ExpectNear(after[0], before[0]);
  ExpectNear(after[1], before[1]);
}

TEST(ConvFusion, NeverFusesAnIntermediateWithAControlEdgeOut) {
  GraphDef graph = ConvChain("Relu");
  graph.mutable_node()->rbegin()->add_input("^conv");  // y waits for conv
  bool changed = true;
  Fused(graph, {"y"}, &changed);
  EXPECT_FALSE(changed);
}

TEST(ConvFusion, ControlInputsOfTheChainMoveToTheFusedNode) {
  GraphDef graph = ConvChain("Relu");
  AddConst(&graph, "gate", RandomTensor(TensorShape({}), 5));
  for (NodeDef& node : *graph.mutable_node()) {
    if (node.name() == "bias") node.add_input("^gate");
  }
  bool changed = false;
  const GraphDef fused = Fused(graph, {"y"}, &changed);
  ASSERT_TRUE(changed);
  const NodeDef* node = FindNode(fused, "act");
  ASSERT_NE(node, nullptr);
  std::vector<std::string> inputs(node->input().begin(), node->input().end());
  EXPECT_EQ(inputs, (std::vector<std::string>{"x", "w", "b", "^gate"}));
}

TEST(ConvFusion, FusesMatMulBiasAddRelu6) {
  GraphDef graph;
  session_test::AddPlaceholder(&graph, "x");
  AddConst(&graph, "w", RandomTensor(TensorShape({6, 5}), 6));
  AddConst(&graph, "b", RandomTensor(TensorShape({5}), 7));
  NodeDef* matmul = session_test::AddNode(&graph, "mm", "MatMul", {"x", "w"});
  SetAttr(matmul, "T", DT_FLOAT);
  NodeDef* bias = session_test::AddNode(&graph, "bias", "BiasAdd", {"mm", "b"});
  SetAttr(bias, "T", DT_FLOAT);
  NodeDef* act = session_test::AddNode(&graph, "act", "Relu6", {"bias"});
  SetAttr(act, "T", DT_FLOAT);
  bool changed = false;
  const GraphDef fused = Fused(graph, {"act"}, &changed);
  ASSERT_TRUE(changed);
  EXPECT_EQ(FindNode(fused, "act")->op(), "_FusedMatMul");
  Tensor x = RandomTensor(TensorShape({4, 6}), 8);
  for (int64_t i = 0; i < x.NumElements(); ++i) x.data<float>()[i] *= 3;  // reach 6
  ExpectNear(RunGraph(fused, x, {"act"})[0], RunGraph(graph, x, {"act"})[0]);
}

// x [2, 9, 7, 6] (fed) -> depthwise 3x3x6x1 (`padding`) -> BiasAdd -> Relu6
// -> "y" (Identity), NHWC.
GraphDef DepthwiseChain(const std::string& padding) {
  GraphDef graph;
  session_test::AddPlaceholder(&graph, "x");
  AddConst(&graph, "w", RandomTensor(TensorShape({3, 3, 6, 1}), 11));
  AddConst(&graph, "b", RandomTensor(TensorShape({6}), 12));
  NodeDef* conv = session_test::AddNode(&graph, "conv", "DepthwiseConv2dNative", {"x", "w"});
  SetAttr(conv, "T", DT_FLOAT);
  SetAttr(conv, "padding", padding);
  for (int64_t s : {1, 2, 2, 1}) (*conv->mutable_attr())["strides"].mutable_list()->add_i(s);
  if (padding == "EXPLICIT") {
    for (int64_t p : {0, 0, 1, 1, 0, 2, 0, 0}) {
      (*conv->mutable_attr())["explicit_paddings"].mutable_list()->add_i(p);
    }
  }
  NodeDef* bias = session_test::AddNode(&graph, "bias", "BiasAdd", {"conv", "b"});
  SetAttr(bias, "T", DT_FLOAT);
  NodeDef* act = session_test::AddNode(&graph, "act", "Relu6", {"bias"});
  SetAttr(act, "T", DT_FLOAT);
  NodeDef* y = session_test::AddNode(&graph, "y", "Identity", {"act"});
  SetAttr(y, "T", DT_FLOAT);
  return graph;
}

TEST(ConvFusion, FusesDepthwiseBiasAddRelu6) {
  const GraphDef original = DepthwiseChain("SAME");
  bool changed = false;
  const GraphDef fused = Fused(original, {"y"}, &changed);
  ASSERT_TRUE(changed);
  const NodeDef* node = FindNode(fused, "act");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->op(), "_FusedDepthwiseConv2dNative");
  EXPECT_EQ(FusedOps(*node), (std::vector<std::string>{"BiasAdd", "Relu6"}));
  EXPECT_EQ(node->attr().count("TArgs"), 0u);  // its args are num_args * T
  EXPECT_TRUE(node->attr().count("explicit_paddings") == 0 ||
              node->attr().at("explicit_paddings").list().i_size() == 0);
  EXPECT_EQ(node->attr().count("_filter_is_const"), 0u);  // no reordered filter to keep
  Tensor x = RandomTensor(TensorShape({2, 9, 7, 6}), 13);
  for (int64_t i = 0; i < x.NumElements(); ++i) x.data<float>()[i] *= 3;  // reach 6
  ExpectNear(RunGraph(fused, x, {"y"})[0], RunGraph(original, x, {"y"})[0]);
}

TEST(ConvFusion, FusesAnExplicitlyPaddedDepthwise) {
  const GraphDef original = DepthwiseChain("EXPLICIT");
  bool changed = false;
  const GraphDef fused = Fused(original, {"y"}, &changed);
  ASSERT_TRUE(changed);
  const NodeDef* node = FindNode(fused, "act");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->op(), "_FusedDepthwiseConv2dNative");
  EXPECT_EQ(node->attr().at("padding").s(), "EXPLICIT");
  EXPECT_EQ(node->attr().at("explicit_paddings").list().i_size(), 8);
  Tensor x = RandomTensor(TensorShape({2, 9, 7, 6}), 14);
  for (int64_t i = 0; i < x.NumElements(); ++i) x.data<float>()[i] *= 3;
  ExpectNear(RunGraph(fused, x, {"y"})[0], RunGraph(original, x, {"y"})[0]);
}

// x [2, 9, 7, 6] -> Pad (rows 1/2, cols 0/1, or also the batch when
// `pad_batch`) -> `conv_op` VALID 3x3 stride 2 -> BiasAdd -> Relu6 -> "y".
GraphDef PaddedChain(const std::string& conv_op, bool pad_batch = false) {
  GraphDef graph;
  session_test::AddPlaceholder(&graph, "x");
  const bool depthwise = conv_op == "DepthwiseConv2dNative";
  AddConst(&graph, "w", RandomTensor(TensorShape({3, 3, 6, depthwise ? 1 : 4}), 15));
  AddConst(&graph, "b", RandomTensor(TensorShape({depthwise ? 6 : 4}), 16));
  Tensor paddings(DT_INT32, TensorShape({4, 2}));
  const int32_t values[] = {pad_batch ? 1 : 0, 0, 1, 2, 0, 1, 0, 0};
  for (int i = 0; i < 8; ++i) paddings.data<int32_t>()[i] = values[i];
  NodeDef* padding_const = session_test::AddNode(&graph, "paddings", "Const");
  SetAttr(padding_const, "dtype", DT_INT32);
  SetAttr(padding_const, "value", paddings);
  NodeDef* pad = session_test::AddNode(&graph, "pad", "Pad", {"x", "paddings"});
  SetAttr(pad, "T", DT_FLOAT);
  NodeDef* conv = session_test::AddNode(&graph, "conv", conv_op, {"pad", "w"});
  SetAttr(conv, "T", DT_FLOAT);
  SetAttr(conv, "padding", std::string("VALID"));
  for (int64_t s : {1, 2, 2, 1}) (*conv->mutable_attr())["strides"].mutable_list()->add_i(s);
  NodeDef* bias = session_test::AddNode(&graph, "bias", "BiasAdd", {"conv", "b"});
  SetAttr(bias, "T", DT_FLOAT);
  NodeDef* act = session_test::AddNode(&graph, "act", "Relu6", {"bias"});
  SetAttr(act, "T", DT_FLOAT);
  NodeDef* y = session_test::AddNode(&graph, "y", "Identity", {"act"});
  SetAttr(y, "T", DT_FLOAT);
  return graph;
}

TEST(ConvFusion, FoldsASpatialPadIntoTheConvolution) {
  for (const std::string op : {"DepthwiseConv2dNative", "Conv2D"}) {
    const GraphDef original = PaddedChain(op);
    bool changed = false;
    const GraphDef fused = Fused(original, {"y"}, &changed);
    ASSERT_TRUE(changed) << op;
    EXPECT_EQ(CountOps(fused, "Pad"), 0) << op;
    EXPECT_EQ(FindNode(fused, "paddings"), nullptr) << op;
    const NodeDef* node = FindNode(fused, "act");
    ASSERT_NE(node, nullptr);
    EXPECT_EQ(node->op(), op == "Conv2D" ? "_FusedConv2D" : "_FusedDepthwiseConv2dNative");
    EXPECT_EQ(node->input(0), "x") << op;
    EXPECT_EQ(node->attr().at("padding").s(), "EXPLICIT") << op;
    std::vector<int64_t> explicit_paddings;
    for (int64_t p : node->attr().at("explicit_paddings").list().i())
      explicit_paddings.push_back(p);
    EXPECT_EQ(explicit_paddings, (std::vector<int64_t>{0, 0, 1, 2, 0, 1, 0, 0})) << op;
    Tensor x = RandomTensor(TensorShape({2, 9, 7, 6}), 17);
    for (int64_t i = 0; i < x.NumElements(); ++i) x.data<float>()[i] *= 3;
    ExpectNear(RunGraph(fused, x, {"y"})[0], RunGraph(original, x, {"y"})[0]);
  }
}

TEST(ConvFusion, KeepsAPadOfTheBatchOrAFetchedPad) {
  bool changed = false;
  const GraphDef batch = Fused(PaddedChain("Conv2D", /*pad_batch=*/true), {"y"}, &changed);
  EXPECT_EQ(CountOps(batch, "Pad"), 1);
  const GraphDef fetched = Fused(PaddedChain("Conv2D"), {"y", "pad"}, &changed);
  EXPECT_EQ(CountOps(fetched, "Pad"), 1);
}

TEST(ConvFusion, MarksAConstFilterOnly) {
  bool changed = false;
  const GraphDef from_const = Fused(ConvChain("Relu"), {"y"}, &changed);
  ASSERT_TRUE(changed);
  const NodeDef* node = FindNode(from_const, "act");
  ASSERT_NE(node, nullptr);
  ASSERT_EQ(node->attr().count("_filter_is_const"), 1u);
  EXPECT_TRUE(node->attr().at("_filter_is_const").b());
  GraphDef fed = ConvChain("Relu");
  for (NodeDef& def : *fed.mutable_node()) {
    if (def.name() == "w") {
      def.set_op("Placeholder");
      def.mutable_attr()->erase("value");
    }
  }
  const GraphDef from_placeholder = Fused(fed, {"y"}, &changed);
  ASSERT_TRUE(changed);
  EXPECT_EQ(FindNode(from_placeholder, "act")->attr().count("_filter_is_const"), 0u);
}

// A residual block: x [2, 8, 6, 4] (fed, shape known unless `unknown_shape`)
// -> conv 3x3x4->4 SAME -> BiasAdd -> AddV2 with `shortcut` (an Identity of
// x, or a Const of shape `shortcut_shape` when given; the first operand
// when `shortcut_first`) -> Relu (unless `relu` is false) -> "y".
struct ResidualOptions {
  bool shortcut_first = false;
  bool relu = true;
  bool unknown_shape = false;
  bool unknown_batch = false;  // x [?, 8, 6, 4]
  TensorShape shortcut_shape;  // empty dims: the Identity of x
};

PartialTensorShape XShape(const ResidualOptions& options) {
  PartialTensorShape shape;
  if (!options.unknown_shape) {
    EXPECT_TRUE(PartialTensorShape::Build({options.unknown_batch ? -1 : 2, 8, 6, 4}, &shape).ok());
  }
  return shape;
}

GraphDef ResidualChain(const ResidualOptions& options) {
  GraphDef graph;
  session_test::AddPlaceholder(&graph, "x", XShape(options));
  AddConst(&graph, "w", RandomTensor(TensorShape({3, 3, 4, 4}), 21));
  AddConst(&graph, "b", RandomTensor(TensorShape({4}), 22));
  NodeDef* conv = session_test::AddNode(&graph, "conv", "Conv2D", {"x", "w"});
  SetAttr(conv, "T", DT_FLOAT);
  SetAttr(conv, "padding", std::string("SAME"));
  for (int64_t s : {1, 1, 1, 1}) (*conv->mutable_attr())["strides"].mutable_list()->add_i(s);
  NodeDef* bias = session_test::AddNode(&graph, "bias", "BiasAdd", {"conv", "b"});
  SetAttr(bias, "T", DT_FLOAT);
  if (options.shortcut_shape.dims() > 0) {
    AddConst(&graph, "shortcut", RandomTensor(options.shortcut_shape, 23));
  } else {
    SetAttr(session_test::AddNode(&graph, "shortcut", "Identity", {"x"}), "T", DT_FLOAT);
  }
  NodeDef* add = options.shortcut_first
                     ? session_test::AddNode(&graph, "add", "AddV2", {"shortcut", "bias"})
                     : session_test::AddNode(&graph, "add", "AddV2", {"bias", "shortcut"});
  SetAttr(add, "T", DT_FLOAT);
  std::string last = "add";
  if (options.relu) {
    SetAttr(session_test::AddNode(&graph, "act", "Relu", {"add"}), "T", DT_FLOAT);
    last = "act";
  }
  SetAttr(session_test::AddNode(&graph, "y", "Identity", {last}), "T", DT_FLOAT);
  return graph;
}

TEST(ConvFusion, FusesAResidualAddAndRelu) {
  for (const bool shortcut_first : {false, true}) {
    for (const bool relu : {true, false}) {
      ResidualOptions options;
      options.shortcut_first = shortcut_first;
      options.relu = relu;
      const GraphDef original = ResidualChain(options);
      bool changed = false;
      const GraphDef fused = Fused(original, {"y"}, &changed);
      ASSERT_TRUE(changed);
      EXPECT_EQ(CountOps(fused, "AddV2"), 0);
      EXPECT_EQ(CountOps(fused, "Relu"), 0);
      const NodeDef* node = FindNode(fused, relu ? "act" : "add");
      ASSERT_NE(node, nullptr);
      EXPECT_EQ(node->op(), "_FusedConv2D");
      std::vector<std::string> expected = {"BiasAdd", "Add"};
      if (relu) expected.push_back("Relu");
      EXPECT_EQ(FusedOps(*node), expected);
      EXPECT_EQ(node->attr().at("num_args").i(), 2);
      EXPECT_EQ(node->attr().at("TArgs").list().type_size(), 2);
      std::vector<std::string> inputs(node->input().begin(), node->input().end());
      EXPECT_EQ(inputs, (std::vector<std::string>{"x", "w", "b", "shortcut"}));
      const Tensor x = RandomTensor(TensorShape({2, 8, 6, 4}), 24);
      ExpectNear(RunGraph(fused, x, {"y"})[0], RunGraph(original, x, {"y"})[0]);
    }
  }
}

TEST(ConvFusion, NeverFusesABroadcastingAdd) {
  ResidualOptions options;
  options.shortcut_shape = TensorShape({4});  // broadcast over the channels
  const GraphDef original = ResidualChain(options);
  bool changed = false;
  const GraphDef fused = Fused(original, {"y"}, &changed);
  ASSERT_TRUE(changed);  // the conv and bias still fuse
  EXPECT_EQ(FusedOps(*FindNode(fused, "bias")), std::vector<std::string>{"BiasAdd"});
  EXPECT_EQ(FindNode(fused, "add")->op(), "AddV2");
  EXPECT_EQ(FindNode(fused, "act")->op(), "Relu");
  const Tensor x = RandomTensor(TensorShape({2, 8, 6, 4}), 25);
  ExpectNear(RunGraph(fused, x, {"y"})[0], RunGraph(original, x, {"y"})[0]);
}

TEST(ConvFusion, FusesAnAddWhoseOperandsShareAnUnknownBatch) {
  // Both operands' batch is x's, whatever it is (TensorFlow compares
  // shapes symbolically); a [1, 8, 6, 4] addend would broadcast instead.
  ResidualOptions options;
  options.unknown_batch = true;
  bool changed = false;
  const GraphDef fused = Fused(ResidualChain(options), {"y"}, &changed);
  EXPECT_EQ(FusedOps(*FindNode(fused, "act")),
            (std::vector<std::string>{"BiasAdd", "Add", "Relu"}));
  options.shortcut_shape = TensorShape({1, 8, 6, 4});
  const GraphDef broadcast = Fused(ResidualChain(options), {"y"}, &changed);
  EXPECT_EQ(FindNode(broadcast, "add")->op(), "AddV2");
}

TEST(ConvFusion, NeverFusesAnAddOfUnknownShape) {
  ResidualOptions options;
  options.unknown_shape = true;
  bool changed = false;
  const GraphDef fused = Fused(ResidualChain(options), {"y"}, &changed);
  EXPECT_EQ(FusedOps(*FindNode(fused, "bias")), std::vector<std::string>{"BiasAdd"});
  EXPECT_EQ(FindNode(fused, "add")->op(), "AddV2");
}

TEST(ConvFusion, NeverFusesAFetchedOrSharedResidualIntermediate) {
  bool changed = false;
  // The Add fetched: it takes the conv and bias in, the Relu stays out.
  const GraphDef add_fetched = Fused(ResidualChain({}), {"y", "add"}, &changed);
  EXPECT_EQ(FusedOps(*FindNode(add_fetched, "add")), (std::vector<std::string>{"BiasAdd", "Add"}));
  EXPECT_EQ(FindNode(add_fetched, "act")->op(), "Relu");
  // The BiasAdd fetched: no Add fused.
  const GraphDef bias_fetched = Fused(ResidualChain({}), {"y", "bias"}, &changed);
  EXPECT_EQ(FusedOps(*FindNode(bias_fetched, "bias")), std::vector<std::string>{"BiasAdd"});
  EXPECT_EQ(FindNode(bias_fetched, "add")->op(), "AddV2");
  // The BiasAdd read twice: no Add fused either.
  GraphDef shared = ResidualChain({});
  SetAttr(session_test::AddNode(&shared, "other", "Identity", {"bias"}), "T", DT_FLOAT);
  const GraphDef bias_shared = Fused(shared, {"y", "other"}, &changed);
  EXPECT_EQ(FindNode(bias_shared, "add")->op(), "AddV2");
  // The Add read twice: fused without the Relu, both values as before.
  GraphDef add_shared_graph = ResidualChain({});
  SetAttr(session_test::AddNode(&add_shared_graph, "other", "Identity", {"add"}), "T", DT_FLOAT);
  const GraphDef add_shared = Fused(add_shared_graph, {"y", "other"}, &changed);
  EXPECT_EQ(FusedOps(*FindNode(add_shared, "add")), (std::vector<std::string>{"BiasAdd", "Add"}));
  EXPECT_EQ(FindNode(add_shared, "act")->op(), "Relu");
  const Tensor x = RandomTensor(TensorShape({2, 8, 6, 4}), 26);
  const std::vector<Tensor> before = RunGraph(add_shared_graph, x, {"y", "other"});
  const std::vector<Tensor> after = RunGraph(add_shared, x, {"y", "other"});
  ExpectNear(after[0], before[0]);
  ExpectNear(after[1], before[1]);
}

TEST(ConvFusion, ChainsResidualBlocksWhoseShortcutIsTheLastBlock) {
  // Block 2's shortcut is block 1's Relu, itself replaced by a fused node.
  GraphDef graph = ResidualChain({});
  AddConst(&graph, "w2", RandomTensor(TensorShape({3, 3, 4, 4}), 27));
  AddConst(&graph, "b2", RandomTensor(TensorShape({4}), 28));
  NodeDef* conv = session_test::AddNode(&graph, "conv2", "Conv2D", {"act", "w2"});
  SetAttr(conv, "T", DT_FLOAT);
  SetAttr(conv, "padding", std::string("SAME"));
  for (int64_t s : {1, 1, 1, 1}) (*conv->mutable_attr())["strides"].mutable_list()->add_i(s);
  SetAttr(session_test::AddNode(&graph, "bias2", "BiasAdd", {"conv2", "b2"}), "T", DT_FLOAT);
  SetAttr(session_test::AddNode(&graph, "add2", "AddV2", {"act", "bias2"}), "T", DT_FLOAT);
  SetAttr(session_test::AddNode(&graph, "act2", "Relu", {"add2"}), "T", DT_FLOAT);
  bool changed = false;
  // act is read by y, conv2 and add2: it fuses as the last node only.
  const GraphDef fused = Fused(graph, {"y", "act2"}, &changed);
  ASSERT_TRUE(changed);
  EXPECT_EQ(CountOps(fused, "_FusedConv2D"), 2);
  EXPECT_EQ(CountOps(fused, "AddV2"), 0);
  EXPECT_EQ(FindNode(fused, "act2")->input(3), "act");
  const Tensor x = RandomTensor(TensorShape({2, 8, 6, 4}), 29);
  const std::vector<Tensor> before = RunGraph(graph, x, {"y", "act2"});
  const std::vector<Tensor> after = RunGraph(fused, x, {"y", "act2"});
  ExpectNear(after[0], before[0]);
  ExpectNear(after[1], before[1]);
}

TEST(ConvFusion, AnAddOfTwoConvolutionsFusesIntoOneOfThem) {
  // ResNet's convolution blocks: the shortcut is a Conv2D + BiasAdd too.
  GraphDef graph = ResidualChain({});
  for (NodeDef& node : *graph.mutable_node()) {
    if (node.name() == "shortcut") {
      node.set_op("BiasAdd");
      node.clear_input();
      node.add_input("conv_s");
      node.add_input("b_s");
    }
  }
  AddConst(&graph, "w_s", RandomTensor(TensorShape({1, 1, 4, 4}), 34));
  AddConst(&graph, "b_s", RandomTensor(TensorShape({4}), 35));
  NodeDef* conv = session_test::AddNode(&graph, "conv_s", "Conv2D", {"x", "w_s"});
  SetAttr(conv, "T", DT_FLOAT);
  SetAttr(conv, "padding", std::string("SAME"));
  for (int64_t s : {1, 1, 1, 1}) (*conv->mutable_attr())["strides"].mutable_list()->add_i(s);
  bool changed = false;
  const GraphDef fused = Fused(graph, {"y"}, &changed);
  ASSERT_TRUE(changed);
  EXPECT_EQ(CountOps(fused, "_FusedConv2D"), 2);
  EXPECT_EQ(CountOps(fused, "AddV2"), 0);
  EXPECT_EQ(CountOps(fused, "Relu"), 0);
  const Tensor x = RandomTensor(TensorShape({2, 8, 6, 4}), 36);
  ExpectNear(RunGraph(fused, x, {"y"})[0], RunGraph(graph, x, {"y"})[0]);
}

TEST(ConvFusion, AFusedAddOfTheWrongShapeIsAnInvalidArgument) {
  // A _FusedConv2D as a frozen graph may carry it, with an addend that does
  // not match the output.
  GraphDef graph;
  session_test::AddPlaceholder(&graph, "x");
  AddConst(&graph, "w", RandomTensor(TensorShape({3, 3, 4, 4}), 30));
  AddConst(&graph, "b", RandomTensor(TensorShape({4}), 31));
  AddConst(&graph, "z", RandomTensor(TensorShape({2, 8, 6, 3}), 32));
  NodeDef* node = session_test::AddNode(&graph, "fused", "_FusedConv2D", {"x", "w", "b", "z"});
  SetAttr(node, "T", DT_FLOAT);
  SetAttr(node, "padding", std::string("SAME"));
  for (int64_t s : {1, 1, 1, 1}) (*node->mutable_attr())["strides"].mutable_list()->add_i(s);
  SetAttr(node, "num_args", int64_t{2});
  for (int i = 0; i < 2; ++i) (*node->mutable_attr())["TArgs"].mutable_list()->add_type(DT_FLOAT);
  for (const char* op : {"BiasAdd", "Add", "Relu"}) {
    (*node->mutable_attr())["fused_ops"].mutable_list()->add_s(op);
  }
  std::unique_ptr<Session> session;
  ASSERT_TRUE(NewSession(SessionOptions(), &session).ok());
  ASSERT_TRUE(session->Create(graph).ok());
  std::vector<Tensor> outputs;
  const Status status =
      session->Run({{"x", RandomTensor(TensorShape({2, 8, 6, 4}), 33)}}, {"fused"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("fused"), std::string::npos) << status;
  EXPECT_NE(status.message().find("[2,8,6,3]"), std::string::npos) << status;
}

TEST(ConvFusion, LeavesHalfAndIntegerChainsAlone) {
  GraphDef graph;
  session_test::AddPlaceholder(&graph, "x", PartialTensorShape(), DT_INT32);
  session_test::AddPlaceholder(&graph, "w", PartialTensorShape(), DT_INT32);
  session_test::AddPlaceholder(&graph, "b", PartialTensorShape(), DT_INT32);
  NodeDef* matmul = session_test::AddNode(&graph, "mm", "MatMul", {"x", "w"});
  SetAttr(matmul, "T", DT_INT32);
  NodeDef* bias = session_test::AddNode(&graph, "bias", "BiasAdd", {"mm", "b"});
  SetAttr(bias, "T", DT_INT32);
  bool changed = true;
  Fused(graph, {"bias"}, &changed);
  EXPECT_FALSE(changed);
}

}  // namespace
}  // namespace tensorweave
