// The graph optimizer's passes on small graphs: what each rewrites, what it
// must leave alone (every "never" rule), and that a session gives the same
// values (and the same errors) with the optimizer on and off.
#include "runtime/common_runtime/graph_optimizer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "runtime/common_runtime/direct_session.h"
#include "runtime/common_runtime/session_factory.h"
#include "runtime/common_runtime/subgraph.h"
#include "runtime/graph/graph_def_import.h"
#include "runtime/graph/shape_refiner.h"
#include "tests/runtime/session_test_util.h"

namespace tensorweave {
namespace {

using namespace session_test;  // NOLINT: test helpers

// --- building graphs ------------------------------------------------------------

Tensor Floats(const std::vector<float>& values, const TensorShape& shape) {
  Tensor tensor;
  EXPECT_TRUE(Tensor::Allocate(DT_FLOAT, shape, &tensor).ok());
  for (size_t i = 0; i < values.size(); ++i) tensor.data<float>()[i] = values[i];
  return tensor;
}

Tensor Ints(const std::vector<int32_t>& values) {
  Tensor tensor;
  EXPECT_TRUE(
      Tensor::Allocate(DT_INT32, TensorShape({static_cast<int64_t>(values.size())}), &tensor).ok());
  for (size_t i = 0; i < values.size(); ++i) tensor.data<int32_t>()[i] = values[i];
  return tensor;
}

Tensor IntScalar(int32_t value) {
  Tensor tensor;
  EXPECT_TRUE(Tensor::Allocate(DT_INT32, TensorShape(), &tensor).ok());
  tensor.data<int32_t>()[0] = value;
  return tensor;
}

NodeDef* Const(GraphDef* graph, const std::string& name, const Tensor& value,
               const std::string& device = "") {
  NodeDef* node = AddNode(graph, name, "Const", {}, device);
  SetAttr(node, "dtype", value.dtype());
  SetAttr(node, "value", value);
  return node;
}

NodeDef* Scalar(GraphDef* graph, const std::string& name, float value) {
  return Const(graph, name, FloatScalar(value));
}

NodeDef* Binary(GraphDef* graph, const std::string& name, const std::string& op,
                const std::string& a, const std::string& b, const std::string& device = "",
                DataType dtype = DT_FLOAT) {
  NodeDef* node = AddNode(graph, name, op, {a, b}, device);
  SetAttr(node, "T", dtype);
  return node;
}

NodeDef* Unary(GraphDef* graph, const std::string& name, const std::string& op,
               const std::string& input, const std::string& device = "") {
  NodeDef* node = AddNode(graph, name, op, {input}, device);
  SetAttr(node, "T", DT_FLOAT);
  return node;
}

NodeDef* FindMutable(GraphDef* graph, const std::string& name) {
  for (NodeDef& node : *graph->mutable_node()) {
    if (node.name() == name) return &node;
  }
  return nullptr;
}

ConfigProto OptimizerOff() {
  ConfigProto config;
  config.mutable_graph_options()->mutable_optimizer_options()->set_opt_level(OptimizerOptions::L0);
  return config;
}

// The graph a session would run for this signature, optimized with `config`.
GraphDef Optimized(const GraphDef& graph_def, const std::vector<std::string>& feeds,
                   const std::vector<std::string>& fetches,
                   const std::vector<std::string>& targets = {},
                   const ConfigProto& config = ConfigProto()) {
  Graph graph(OpRegistry::Global());
  ShapeRefiner refiner(graph);
  ImportGraphDefOptions options;
  ImportGraphDefResults results;
  Status status = ImportGraphDef(options, graph_def, &graph, &refiner, &results);
  EXPECT_TRUE(status.ok()) << status;
  FeedFetchSignature signature;
  EXPECT_TRUE(ParseSignature(feeds, fetches, targets, &signature).ok());
  RewriteResult rewrite;
  status = RewriteForSignature(signature, &graph, &rewrite);
  EXPECT_TRUE(status.ok()) << status;
  status = OptimizeSignatureGraph(config, signature, &graph);
  EXPECT_TRUE(status.ok()) << status;
  GraphDef out;
  graph.ToGraphDef(&out);
  return out;
}

int CountOps(const GraphDef& graph, const std::string& op) {
  int count = 0;
  for (const NodeDef& node : graph.node()) count += node.op() == op;
  return count;
}

const NodeDef* FindNode(const GraphDef& graph, const std::string& name) {
  for (const NodeDef& node : graph.node()) {
    if (node.name() == name) return &node;
  }
  return nullptr;
}

std::string OpOf(const GraphDef& graph, const std::string& name) {
  const NodeDef* node = FindNode(graph, name);
  return node == nullptr ? "<absent>" : node->op();
}

// Op nodes other than the signature's _Arg and _Retval.
int NumComputeNodes(const GraphDef& graph) {
  return graph.node_size() - CountOps(graph, "_Arg") - CountOps(graph, "_Retval");
}

struct RunResult {
  Status status;
  std::vector<Tensor> outputs;
};

RunResult RunWith(const ConfigProto& config, const GraphDef& graph,
                  const std::vector<std::pair<std::string, Tensor>>& feeds,
                  const std::vector<std::string>& fetches,
                  const std::vector<std::string>& targets = {}) {
  SessionOptions options;
  options.config = config;
  std::unique_ptr<Session> session;
  RunResult result;
  result.status = NewSession(options, &session);
  if (result.status.ok()) result.status = session->Create(graph);
  if (result.status.ok()) result.status = session->Run(feeds, fetches, targets, &result.outputs);
  return result;
}

// Runs with the optimizer on and off: same status, values equal to `tolerance`.
void ExpectSameResults(const GraphDef& graph,
                       const std::vector<std::pair<std::string, Tensor>>& feeds,
                       const std::vector<std::string>& fetches, float tolerance = 0.0f) {
  RunResult on = RunWith(ConfigProto(), graph, feeds, fetches);
  RunResult off = RunWith(OptimizerOff(), graph, feeds, fetches);
  ASSERT_EQ(on.status.code(), off.status.code()) << on.status << " vs " << off.status;
  EXPECT_EQ(on.status.message(), off.status.message());
  if (!on.status.ok()) return;
  ASSERT_EQ(on.outputs.size(), off.outputs.size());
  for (size_t i = 0; i < on.outputs.size(); ++i) {
    ASSERT_EQ(on.outputs[i].dtype(), off.outputs[i].dtype());
    ASSERT_EQ(on.outputs[i].shape(), off.outputs[i].shape()) << fetches[i];
    if (on.outputs[i].dtype() != DT_FLOAT) continue;
    std::vector<float> a = Values(on.outputs[i]), b = Values(off.outputs[i]);
    for (size_t k = 0; k < a.size(); ++k) {
      EXPECT_NEAR(a[k], b[k], tolerance * std::max(1.0f, std::fabs(b[k])))
          << fetches[i] << "[" << k << "]";
    }
  }
}

// --- constant folding -------------------------------------------------------------

GraphDef ConstantChain(int length) {
  GraphDef graph;
  Scalar(&graph, "c0", 0.0f);
  Scalar(&graph, "one", 1.0f);
  std::string previous = "c0";
  for (int i = 1; i <= length; ++i) {
    Binary(&graph, StrCat("y", i), "AddV2", previous, "one");
    previous = StrCat("y", i);
  }
  return graph;
}

TEST(ConstantFoldingTest, AChainOfConstantsBecomesOneConstKeepingTheFetchedName) {
  GraphDef graph = ConstantChain(100);
  GraphDef optimized = Optimized(graph, {}, {"y100:0"});
  EXPECT_EQ(NumComputeNodes(optimized), 1);
  EXPECT_EQ(OpOf(optimized, "y100"), "Const");
  RunResult result = RunWith(ConfigProto(), graph, {}, {"y100:0"});
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(Values(result.outputs[0]), std::vector<float>({100.0f}));
}

TEST(ConstantFoldingTest, OptLevelZeroLeavesTheGraphAlone) {
  GraphDef optimized = Optimized(ConstantChain(5), {}, {"y5:0"}, {}, OptimizerOff());
  EXPECT_EQ(CountOps(optimized, "AddV2"), 5);
}

TEST(ConstantFoldingTest, TogglesChooseThePasses) {
  ConfigProto config = OptimizerOff();
  config.mutable_graph_options()->mutable_optimizer_options()->set_do_constant_folding(true);
  EXPECT_EQ(CountOps(Optimized(ConstantChain(5), {}, {"y5:0"}, {}, config), "AddV2"), 0);

  ConfigProto off;
  off.mutable_graph_options()->mutable_rewrite_options()->set_constant_folding(RewriterConfig::OFF);
  off.mutable_graph_options()->mutable_rewrite_options()->set_arithmetic_optimization(
      RewriterConfig::OFF);
  EXPECT_EQ(CountOps(Optimized(ConstantChain(5), {}, {"y5:0"}, {}, off), "AddV2"), 5);

  ConfigProto disabled;
  disabled.mutable_graph_options()->mutable_rewrite_options()->set_disable_meta_optimizer(true);
  EXPECT_EQ(CountOps(Optimized(ConstantChain(5), {}, {"y5:0"}, {}, disabled), "AddV2"), 5);

  ConfigProto small;
  small.mutable_graph_options()->mutable_rewrite_options()->set_min_graph_nodes(100);
  EXPECT_EQ(CountOps(Optimized(ConstantChain(5), {}, {"y5:0"}, {}, small), "AddV2"), 5);
}

TEST(ConstantFoldingTest, FedPathsAreNotFolded) {
  GraphDef graph;
  AddPlaceholder(&graph, "x");
  Scalar(&graph, "one", 1.0f);
  Scalar(&graph, "two", 2.0f);
  Binary(&graph, "a", "AddV2", "one", "two");
  Binary(&graph, "y", "Mul", "x", "a");
  GraphDef optimized = Optimized(graph, {"x:0"}, {"y:0"});
  EXPECT_EQ(OpOf(optimized, "y"), "Mul");
  EXPECT_EQ(OpOf(optimized, "a"), "Const");
  ExpectSameResults(graph, {{"x:0", FloatScalar(3.0f)}}, {"y:0"});
}

TEST(ConstantFoldingTest, StatefulAndRandomOpsAreNeverFolded) {
  GraphDef graph;
  Const(&graph, "shape", Ints({2}));
  NodeDef* random = AddNode(&graph, "random", "RandomUniform", {"shape"});
  SetAttr(random, "T", DT_INT32);
  SetAttr(random, "dtype", DT_FLOAT);
  Const(&graph, "seed", Ints({1, 2}));
  NodeDef* stateless = AddNode(&graph, "stateless", "StatelessRandomUniform", {"shape", "seed"});
  SetAttr(stateless, "T", DT_INT32);
  SetAttr(stateless, "Tseed", DT_INT32);
  SetAttr(stateless, "dtype", DT_FLOAT);
  AddNode(&graph, "counter", "SessionTestCounter");
  GraphDef optimized = Optimized(graph, {}, {"random:0", "stateless:0", "counter:0"});
  EXPECT_EQ(OpOf(optimized, "random"), "RandomUniform");
  EXPECT_EQ(OpOf(optimized, "stateless"), "StatelessRandomUniform");
  EXPECT_EQ(OpOf(optimized, "counter"), "SessionTestCounter");
}

TEST(ConstantFoldingTest, SourcesOtherThanConstAreNotRunWhileOptimizing) {
  // A node without inputs may wait for its step (a reader, a queue, a
  // test op that blocks until cancelled): only a run may start it.
  GraphDef graph;
  AddNode(&graph, "source", "SessionTestScalar");
  SetAttr(FindMutable(&graph, "source"), "value", 2.0f);
  Unary(&graph, "y", "Neg", "source");
  EXPECT_EQ(OpOf(Optimized(graph, {}, {"y:0"}), "source"), "SessionTestScalar");
}

TEST(ConstantFoldingTest, ControlInputsOfFoldedNodesAreKept) {
  GraphDef graph;
  AddNode(&graph, "counter", "SessionTestCounter");
  Scalar(&graph, "one", 1.0f)->add_input("^counter");
  Scalar(&graph, "two", 2.0f);
  Binary(&graph, "a", "AddV2", "one", "two");
  Binary(&graph, "y", "Mul", "a", "two");
  GraphDef optimized = Optimized(graph, {}, {"y:0"});
  ASSERT_EQ(OpOf(optimized, "y"), "Const");
  const NodeDef* y = FindNode(optimized, "y");
  ASSERT_EQ(y->input_size(), 1);
  EXPECT_EQ(y->input(0), "^counter");
  const int before = counter_runs.load();
  RunResult result = RunWith(ConfigProto(), graph, {}, {"y:0"});
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(Values(result.outputs[0]), std::vector<float>({6.0f}));
  EXPECT_EQ(counter_runs.load(), before + 1);
}

TEST(ConstantFoldingTest, AKernelErrorIsLeftForTheRunToReport) {
  GraphDef graph;
  Const(&graph, "values", Floats({1, 2, 3}, TensorShape({3})));
  Const(&graph, "indices", Ints({5}));
  Const(&graph, "axis", IntScalar(0));
  NodeDef* gather = AddNode(&graph, "gather", "GatherV2", {"values", "indices", "axis"});
  SetAttr(gather, "Tparams", DT_FLOAT);
  SetAttr(gather, "Tindices", DT_INT32);
  SetAttr(gather, "Taxis", DT_INT32);
  Unary(&graph, "y", "Neg", "gather");
  EXPECT_EQ(OpOf(Optimized(graph, {}, {"y:0"}), "gather"), "GatherV2");
  RunResult result = RunWith(ConfigProto(), graph, {}, {"y:0"});
  EXPECT_EQ(result.status.code(), Code::INVALID_ARGUMENT);
  EXPECT_NE(result.status.message().find("gather"), std::string::npos) << result.status;
  ExpectSameResults(graph, {}, {"y:0"});
}

TEST(ConstantFoldingTest, ResultsOverTheSizeCapStayComputed) {
  GraphDef graph;
  Const(&graph, "dims", Ints({1000}));
  Scalar(&graph, "value", 1.5f);
  NodeDef* fill = AddNode(&graph, "fill", "Fill", {"dims", "value"});
  SetAttr(fill, "T", DT_FLOAT);
  SetAttr(fill, "index_type", DT_INT32);
  ConfigProto capped;
  capped.mutable_graph_options()->mutable_optimizer_options()->set_max_folded_constant_in_bytes(
      1000);
  EXPECT_EQ(OpOf(Optimized(graph, {}, {"fill:0"}, {}, capped), "fill"), "Fill");
  EXPECT_EQ(OpOf(Optimized(graph, {}, {"fill:0"}), "fill"), "Const");
}

TEST(ConstantFoldingTest, FoldingStopsAtItsTimeBudget) {
  // Minutes of products of constants must not hold up building the step,
  // where nothing can cancel them: the rest is left to the run.
  GraphDef graph;
  Const(&graph, "dims", Ints({512, 512}));
  Scalar(&graph, "value", 0.0f);
  NodeDef* fill = AddNode(&graph, "p0", "Fill", {"dims", "value"});
  SetAttr(fill, "T", DT_FLOAT);
  SetAttr(fill, "index_type", DT_INT32);
  for (int i = 1; i <= 200; ++i) {
    NodeDef* product =
        AddNode(&graph, StrCat("p", i), "MatMul", {StrCat("p", i - 1), StrCat("p", i - 1)});
    SetAttr(product, "T", DT_FLOAT);
  }
  ConfigProto config;
  config.mutable_graph_options()->mutable_rewrite_options()->set_meta_optimizer_timeout_ms(50);
  const auto start = std::chrono::steady_clock::now();
  GraphDef optimized = Optimized(graph, {}, {"p200:0"}, {}, config);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_EQ(OpOf(optimized, "p200"), "MatMul");
}

TEST(ConstantFoldingTest, NodesAskingForAnotherDeviceTypeAreNotFolded) {
  GraphDef graph;
  Scalar(&graph, "one", 1.0f);
  Binary(&graph, "y", "AddV2", "one", "one", "/device:GPU:0");
  Binary(&graph, "z", "AddV2", "one", "one", "/device:CPU:0");
  GraphDef optimized = Optimized(graph, {}, {"y:0", "z:0"});
  EXPECT_EQ(OpOf(optimized, "y"), "AddV2");
  EXPECT_EQ(OpOf(optimized, "z"), "Const");
  EXPECT_EQ(FindNode(optimized, "z")->device(), "/device:CPU:0");
}

TEST(ConstantFoldingTest, NothingInsideControlFlowIsFolded) {
  GraphDef graph;
  Scalar(&graph, "value", 2.0f);
  Tensor truth;
  ASSERT_TRUE(Tensor::Allocate(DT_BOOL, TensorShape(), &truth).ok());
  truth.data<bool>()[0] = true;
  Const(&graph, "pred", truth);
  Binary(&graph, "switch", "Switch", "value", "pred");
  Unary(&graph, "pivot", "Identity", "switch:1");
  Scalar(&graph, "inner", 3.0f)->add_input("^pivot");
  Binary(&graph, "y", "AddV2", "inner", "inner");
  GraphDef optimized = Optimized(graph, {}, {"y:0"});
  EXPECT_EQ(OpOf(optimized, "y"), "AddV2");
  EXPECT_EQ(OpOf(optimized, "switch"), "Switch");
  ExpectSameResults(graph, {}, {"y:0"});
}

TEST(ConstantFoldingTest, VariantOutputsAreNotFolded) {
  GraphDef graph;
  Const(&graph, "values", Floats({1, 2}, TensorShape({2})));
  Const(&graph, "element_shape", Ints({}));
  NodeDef* list = AddNode(&graph, "list", "TensorListFromTensor", {"values", "element_shape"});
  SetAttr(list, "element_dtype", DT_FLOAT);
  SetAttr(list, "shape_type", DT_INT32);
  GraphDef optimized = Optimized(graph, {}, {"list:0"});
  EXPECT_EQ(OpOf(optimized, "list"), "TensorListFromTensor");
}

TEST(ConstantFoldingTest, ShapesTheShapeFunctionsKnowFold) {
  GraphDef graph;
  Const(&graph, "dims", Ints({2, 3}));
  NodeDef* random = AddNode(&graph, "random", "RandomUniform", {"dims"});
  SetAttr(random, "T", DT_INT32);
  SetAttr(random, "dtype", DT_FLOAT);
  Unary(&graph, "zeros", "ZerosLike", "random");
  NodeDef* shape = AddNode(&graph, "shape", "Shape", {"zeros"});
  SetAttr(shape, "T", DT_FLOAT);
  SetAttr(shape, "out_type", DT_INT32);
  NodeDef* size = AddNode(&graph, "size", "Size", {"random"});  // stateful input: not folded
  SetAttr(size, "T", DT_FLOAT);
  SetAttr(size, "out_type", DT_INT32);
  GraphDef optimized = Optimized(graph, {}, {"shape:0", "size:0"});
  EXPECT_EQ(OpOf(optimized, "shape"), "Const");
  EXPECT_EQ(OpOf(optimized, "size"), "Size");
  RunResult result = RunWith(ConfigProto(), graph, {}, {"shape:0"});
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(result.outputs[0].data<int32_t>()[0], 2);
  EXPECT_EQ(result.outputs[0].data<int32_t>()[1], 3);
}

TEST(ConstantFoldingTest, MultiOutputNodesFoldPerOutput) {
  GraphDef graph;
  Const(&graph, "axis", IntScalar(0));
  Const(&graph, "values", Floats({1, 2, 3, 4}, TensorShape({4})));
  NodeDef* split = AddNode(&graph, "split", "Split", {"axis", "values"});
  SetAttr(split, "T", DT_FLOAT);
  SetAttr(split, "num_split", int64_t{2});
  AddPlaceholder(&graph, "x");
  Binary(&graph, "y", "Mul", "x", "split:1");
  GraphDef optimized = Optimized(graph, {"x:0"}, {"y:0"});
  EXPECT_EQ(CountOps(optimized, "Split"), 0);
  ExpectSameResults(graph, {{"x:0", FloatScalar(2.0f)}}, {"y:0"});
}

// --- arithmetic simplification --------------------------------------------------------

GraphDef FedChain(int length, const std::string& op = "AddV2", float constant = 1.0f) {
  GraphDef graph;
  AddPlaceholder(&graph, "x");
  std::string previous = "x";
  for (int i = 1; i <= length; ++i) {
    Scalar(&graph, StrCat("c", i), constant);
    Binary(&graph, StrCat("y", i), op, previous, StrCat("c", i));
    previous = StrCat("y", i);
  }
  return graph;
}

TEST(ArithmeticSimplifierTest, AChainOfAdditionsOfConstantsCollapses) {
  GraphDef graph = FedChain(5000);
  GraphDef optimized = Optimized(graph, {"x:0"}, {"y5000:0"});
  EXPECT_EQ(NumComputeNodes(optimized), 2);  // x + 5000
  EXPECT_EQ(OpOf(optimized, "y5000"), "AddV2");
  RunResult result = RunWith(ConfigProto(), graph, {{"x:0", FloatScalar(0.5f)}}, {"y5000:0"});
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(Values(result.outputs[0]), std::vector<float>({5000.5f}));
}

// A push-down that keeps the op rewires the node in place: it keeps its
// control inputs and the attrs the rewrite does not set (here a colocation
// request), and the constant it reads is the combined one.
TEST(ArithmeticSimplifierTest, APushDownKeepsWhatTheNodeCarriesBesidesItsInputs) {
  GraphDef graph = FedChain(2);
  // Stateful, so the control edge out of it orders something and stays.
  AddNode(&graph, "k", "SessionTestCounter");
  NodeDef* outer = FindMutable(&graph, "y2");
  outer->add_input("^k");
  (*outer->mutable_attr())["_class"].mutable_list()->add_s("loc:@y1");
  GraphDef optimized = Optimized(graph, {"x:0"}, {"y2:0"});
  const NodeDef* y2 = FindNode(optimized, "y2");
  ASSERT_NE(y2, nullptr);
  EXPECT_EQ(y2->op(), "AddV2");
  ASSERT_EQ(y2->input_size(), 3);
  EXPECT_EQ(y2->input(2), "^k");
  ASSERT_EQ(OpOf(optimized, y2->input(1)), "Const");
  Tensor combined;
  ASSERT_TRUE(GetNodeAttr(*FindNode(optimized, y2->input(1)), "value", &combined).ok());
  EXPECT_EQ(Values(combined), std::vector<float>({2.0f}));
  const AttrValue* colocation = FindNodeAttr(*y2, "_class");
  ASSERT_NE(colocation, nullptr);
  EXPECT_EQ(colocation->list().s(0), "loc:@y1");
  ExpectSameResults(graph, {{"x:0", FloatScalar(0.5f)}}, {"y2:0"});
}

TEST(ArithmeticSimplifierTest, EverySignCombinationOfAddAndSubGivesTheSameValues) {
  const char* kInner[] = {"x+c", "c+x", "x-c", "c-x"};
  const char* kOuter[] = {"i+d", "d+i", "i-d", "d-i"};
  for (const char* inner : kInner) {
    for (const char* outer : kOuter) {
      GraphDef graph;
      AddPlaceholder(&graph, "x");
      Scalar(&graph, "c", 3.0f);
      Const(&graph, "d", Floats({5.0f, -7.0f}, TensorShape({2})));
      const bool inner_sub = inner[1] == '-';
      const std::string a = inner[0] == 'x' ? "x" : "c", b = inner[0] == 'x' ? "c" : "x";
      Binary(&graph, "i", inner_sub ? "Sub" : "AddV2", a, b);
      const std::string p = outer[0] == 'i' ? "i" : "d", q = outer[0] == 'i' ? "d" : "i";
      Binary(&graph, "y", outer[1] == '-' ? "Sub" : "Add", p, q);
      GraphDef optimized = Optimized(graph, {"x:0"}, {"y:0"});
      EXPECT_EQ(NumComputeNodes(optimized), 2) << inner << " then " << outer;
      ExpectSameResults(graph, {{"x:0", FloatScalar(11.0f)}}, {"y:0"});
    }
  }
}

TEST(ArithmeticSimplifierTest, MultiplicationChainsCollapse) {
  GraphDef graph = FedChain(10, "Mul", 2.0f);
  EXPECT_EQ(NumComputeNodes(Optimized(graph, {"x:0"}, {"y10:0"})), 2);
  ExpectSameResults(graph, {{"x:0", FloatScalar(2.0f)}}, {"y10:0"});
}

TEST(ArithmeticSimplifierTest, ConstantsThatDoNotBroadcastAreNotCombined) {
  GraphDef graph;
  AddPlaceholder(&graph, "x");
  Const(&graph, "c", Floats({1, 2}, TensorShape({2})));
  Const(&graph, "d", Floats({1, 2, 3}, TensorShape({3})));
  Binary(&graph, "i", "AddV2", "x", "c");
  Binary(&graph, "y", "AddV2", "i", "d");
  GraphDef optimized = Optimized(graph, {"x:0"}, {"y:0"});
  EXPECT_EQ(OpOf(optimized, "i"), "AddV2");
  ExpectSameResults(graph, {{"x:0", FloatScalar(1.0f)}}, {"y:0"});
}

TEST(ArithmeticSimplifierTest, StringAdditionIsNotReordered) {
  GraphDef graph;
  AddPlaceholder(&graph, "x", PartialTensorShape(), DT_STRING);
  Tensor a, b;
  ASSERT_TRUE(Tensor::Allocate(DT_STRING, TensorShape(), &a).ok());
  ASSERT_TRUE(Tensor::Allocate(DT_STRING, TensorShape(), &b).ok());
  a.data<std::string>()[0] = "a";
  b.data<std::string>()[0] = "b";
  Const(&graph, "a", a);
  Const(&graph, "b", b);
  Binary(&graph, "i", "Add", "x", "a", "", DT_STRING);
  Binary(&graph, "y", "Add", "b", "i", "", DT_STRING);
  GraphDef optimized = Optimized(graph, {"x:0"}, {"y:0"});
  EXPECT_EQ(OpOf(optimized, "i"), "Add");
  Tensor x;
  ASSERT_TRUE(Tensor::Allocate(DT_STRING, TensorShape(), &x).ok());
  x.data<std::string>()[0] = "x";
  RunResult result = RunWith(ConfigProto(), graph, {{"x:0", x}}, {"y:0"});
  ASSERT_TRUE(result.status.ok()) << result.status;
  EXPECT_EQ(result.outputs[0].data<std::string>()[0], "bxa");
}

TEST(ArithmeticSimplifierTest, IdentitiesAreBypassedUnlessTheyMatter) {
  GraphDef graph;
  AddPlaceholder(&graph, "x");
  Unary(&graph, "plain", "Identity", "x");
  Unary(&graph, "after_plain", "Neg", "plain");
  Unary(&graph, "fetched", "Identity", "x");
  AddNode(&graph, "counter", "SessionTestCounter");
  Unary(&graph, "waits", "Identity", "x")->add_input("^counter");
  Unary(&graph, "after_waits", "Neg", "waits");
  Unary(&graph, "moved", "Identity", "x", "/device:CPU:1");
  Unary(&graph, "after_moved", "Neg", "moved");
  ConfigProto config;
  (*config.mutable_device_count())["CPU"] = 2;
  GraphDef optimized = Optimized(
      graph, {"x:0"}, {"after_plain:0", "fetched:0", "after_waits:0", "after_moved:0"}, {}, config);
  EXPECT_EQ(OpOf(optimized, "plain"), "<absent>");
  EXPECT_EQ(OpOf(optimized, "fetched"), "Identity");
  EXPECT_EQ(OpOf(optimized, "waits"), "Identity");
  EXPECT_EQ(OpOf(optimized, "moved"), "Identity");
}

TEST(ArithmeticSimplifierTest, AnIdentityOfAVariableIsASnapshotAndStays) {
  GraphDef graph;
  NodeDef* variable = AddNode(&graph, "v", "VariableV2");
  SetAttr(variable, "dtype", DT_FLOAT);
  SetAttr(variable, "shape", PartialTensorShape::FromShape(TensorShape()));
  Unary(&graph, "snapshot", "Identity", "v");
  Unary(&graph, "y", "Neg", "snapshot");
  EXPECT_EQ(OpOf(Optimized(graph, {}, {"y:0"}), "snapshot"), "Identity");
}

TEST(ArithmeticSimplifierTest, NeutralOperationsAreBypassed) {
  GraphDef graph;
  AddPlaceholder(&graph, "x");
  Scalar(&graph, "one", 1.0f);
  Scalar(&graph, "zero", 0.0f);
  Binary(&graph, "times_one", "Mul", "one", "x");
  Binary(&graph, "plus_zero", "AddV2", "times_one", "zero");
  NodeDef* cast = AddNode(&graph, "cast", "Cast", {"plus_zero"});
  SetAttr(cast, "SrcT", DT_FLOAT);
  SetAttr(cast, "DstT", DT_FLOAT);
  Unary(&graph, "y", "Neg", "cast");
  Binary(&graph, "fetched_times_one", "Mul", "x", "one");
  GraphDef optimized = Optimized(graph, {"x:0"}, {"y:0", "fetched_times_one:0"});
  EXPECT_EQ(OpOf(optimized, "times_one"), "<absent>");
  EXPECT_EQ(OpOf(optimized, "plus_zero"), "<absent>");
  EXPECT_EQ(OpOf(optimized, "cast"), "<absent>");
  EXPECT_EQ(OpOf(optimized, "fetched_times_one"), "Identity");
  ExpectSameResults(graph, {{"x:0", FloatScalar(-2.5f)}}, {"y:0", "fetched_times_one:0"});
}

TEST(ArithmeticSimplifierTest, TransposesThatCancelAndNoOpReshapesGo) {
  GraphDef graph;
  AddPlaceholder(&graph, "x", PartialTensorShape::FromShape(TensorShape({2, 3, 4})));
  Const(&graph, "perm", Ints({1, 2, 0}));
  Const(&graph, "inverse", Ints({2, 0, 1}));
  Const(&graph, "same", Ints({0, 1, 2}));
  Const(&graph, "dims", Ints({2, 3, 4}));
  for (const char* name : {"t1", "t2", "t3"}) {
    NodeDef* node = AddNode(&graph, name, "Transpose",
                            {std::string(name) == "t1"   ? "x"
                             : std::string(name) == "t2" ? "t1"
                                                         : "t2",
                             std::string(name) == "t1"   ? "perm"
                             : std::string(name) == "t2" ? "inverse"
                                                         : "same"});
    SetAttr(node, "T", DT_FLOAT);
    SetAttr(node, "Tperm", DT_INT32);
  }
  NodeDef* reshape = AddNode(&graph, "reshape", "Reshape", {"t3", "dims"});
  SetAttr(reshape, "T", DT_FLOAT);
  SetAttr(reshape, "Tshape", DT_INT32);
  Unary(&graph, "y", "Neg", "reshape");
  // The placeholder's shape reaches the shape functions only through a
  // feed-free path, so feed nothing and fetch through a known-shape input.
  GraphDef fed;
  {
    fed = graph;
    for (NodeDef& node : *fed.mutable_node()) {
      if (node.name() == "x") {
        node.set_op("Const");
        node.mutable_attr()->clear();
        SetAttr(&node, "dtype", DT_FLOAT);
        std::vector<float> values(24);
        for (int i = 0; i < 24; ++i) values[i] = static_cast<float>(i);
        SetAttr(&node, "value", Floats(values, TensorShape({2, 3, 4})));
      }
    }
    NodeDef* random = AddNode(&fed, "noise", "RandomUniform", {"dims"});
    SetAttr(random, "T", DT_INT32);
    SetAttr(random, "dtype", DT_FLOAT);
    for (NodeDef& node : *fed.mutable_node()) {
      if (node.name() == "t1") node.set_input(0, "noise");
    }
  }
  ConfigProto no_folding;
  no_folding.mutable_graph_options()->mutable_rewrite_options()->set_constant_folding(
      RewriterConfig::OFF);
  GraphDef optimized = Optimized(fed, {}, {"y:0"}, {}, no_folding);
  EXPECT_EQ(CountOps(optimized, "Transpose"), 0);
  EXPECT_EQ(OpOf(optimized, "t3"), "<absent>");
  EXPECT_EQ(OpOf(optimized, "reshape"), "<absent>");
}

TEST(ArithmeticSimplifierTest, ConstantsOfAnAddNAreSummedOnce) {
  GraphDef graph;
  AddPlaceholder(&graph, "x");
  Scalar(&graph, "a", 1.0f);
  Scalar(&graph, "b", 2.0f);
  NodeDef* sum = AddNode(&graph, "sum", "AddN", {"a", "x", "b"});
  SetAttr(sum, "T", DT_FLOAT);
  SetAttr(sum, "N", int64_t{3});
  GraphDef optimized = Optimized(graph, {"x:0"}, {"sum:0"});
  ASSERT_EQ(OpOf(optimized, "sum"), "AddN");
  EXPECT_EQ(FindNode(optimized, "sum")->input_size(), 2);
  ExpectSameResults(graph, {{"x:0", FloatScalar(4.0f)}}, {"sum:0"});
}

TEST(DependencyOptimizationTest, RelayNoOpsGoButTargetsStay) {
  GraphDef graph;
  AddNode(&graph, "counter", "SessionTestCounter");
  AddNode(&graph, "relay", "NoOp", {"^counter"});
  AddNode(&graph, "target", "NoOp", {"^relay"});
  ConfigProto config;  // the graph is smaller than the default minimum
  config.mutable_graph_options()->mutable_rewrite_options()->set_min_graph_nodes(-1);
  GraphDef optimized = Optimized(graph, {}, {}, {"target"}, config);
  EXPECT_EQ(OpOf(optimized, "relay"), "<absent>");
  ASSERT_EQ(OpOf(optimized, "target"), "NoOp");
  EXPECT_EQ(FindNode(optimized, "target")->input(0), "^counter");
}

// The shape gradients() gives an op's input gradients (a tuple gated by a
// group_deps NoOp): the gradient nobody reads only runs for the group.
TEST(DependencyOptimizationTest, NodesOnlyWaitedForBecomeNoOps) {
  GraphDef graph;
  AddPlaceholder(&graph, "x");
  AddPlaceholder(&graph, "w");
  Binary(&graph, "unread_product", "Mul", "x", "w");
  Unary(&graph, "unread_negation", "Neg", "unread_product");  // a chain of unread nodes
  Binary(&graph, "read", "Mul", "x", "x");
  AddNode(&graph, "counter", "SessionTestCounter");  // stateful: runs even if unread
  AddNode(&graph, "group_deps", "NoOp", {"^unread_negation", "^read", "^counter"});
  NodeDef* out = AddNode(&graph, "out", "Identity", {"read", "^group_deps"});
  SetAttr(out, "T", DT_FLOAT);
  ConfigProto config;  // the graph is smaller than the default minimum
  config.mutable_graph_options()->mutable_rewrite_options()->set_min_graph_nodes(-1);
  GraphDef optimized = Optimized(graph, {"x:0", "w:0"}, {"out:0"}, {}, config);
  EXPECT_EQ(CountOps(optimized, "Mul"), 1);
  EXPECT_EQ(CountOps(optimized, "Neg"), 0);
  EXPECT_EQ(OpOf(optimized, "read"), "Mul");
  EXPECT_EQ(OpOf(optimized, "counter"), "SessionTestCounter");
  // The rewrite follows RewriterConfig.dependency_optimization.
  config.mutable_graph_options()->mutable_rewrite_options()->set_dependency_optimization(
      RewriterConfig::OFF);
  GraphDef kept = Optimized(graph, {"x:0", "w:0"}, {"out:0"}, {}, config);
  EXPECT_EQ(OpOf(kept, "unread_product"), "Mul");
  EXPECT_EQ(OpOf(kept, "unread_negation"), "Neg");
  ExpectSameResults(graph, {{"x:0", FloatScalar(3.0f)}, {"w:0", FloatScalar(2.0f)}}, {"out:0"});
}

TEST(DependencyOptimizationTest, ControlEdgesFromConstsWithoutInputsGo) {
  // Keras' frozen graphs: the output's Identity waits on former variable
  // reads, now Consts. A Const that itself waits on something keeps its
  // edge (it may be a loop's constant, released by its frame's pivot).
  GraphDef graph;
  AddPlaceholder(&graph, "x");
  Scalar(&graph, "read_a", 1.0f);
  Scalar(&graph, "read_b", 2.0f);
  Scalar(&graph, "used", 3.0f);
  AddNode(&graph, "counter", "SessionTestCounter");
  Scalar(&graph, "gated", 4.0f)->add_input("^counter");
  Binary(&graph, "sum", "AddV2", "x", "used");
  NodeDef* y = Unary(&graph, "y", "Identity", "sum");
  for (const char* input : {"^read_a", "^read_b", "^used", "^gated"}) y->add_input(input);
  ConfigProto config;  // the graph is smaller than the default minimum
  config.mutable_graph_options()->mutable_rewrite_options()->set_min_graph_nodes(-1);
  GraphDef optimized = Optimized(graph, {"x:0"}, {"y:0"}, {}, config);
  EXPECT_EQ(OpOf(optimized, "read_a"), "<absent>");
  EXPECT_EQ(OpOf(optimized, "read_b"), "<absent>");
  const NodeDef* node = FindNode(optimized, "y");
  ASSERT_NE(node, nullptr);
  std::vector<std::string> controls;
  for (const std::string& input : node->input()) {
    if (input[0] == '^') controls.push_back(input);
  }
  // The gated Const, only waited for, became a NoOp (unread_nodes.cc) that
  // the relay removal bypassed: y still waits for what it waited for.
  EXPECT_EQ(controls, std::vector<std::string>{"^counter"});
  ExpectSameResults(graph, {{"x:0", FloatScalar(5.0f)}}, {"y:0"});
}

// --- common subexpression elimination -------------------------------------------------

TEST(CommonSubexpressionTest, IdenticalNodesMergeInEitherOperandOrder) {
  GraphDef graph;
  AddPlaceholder(&graph, "x");
  AddPlaceholder(&graph, "w");
  Binary(&graph, "a", "Mul", "x", "w");
  Binary(&graph, "b", "Mul", "w", "x");
  Binary(&graph, "s1", "Sub", "x", "w");
  Binary(&graph, "s2", "Sub", "w", "x");
  Binary(&graph, "ab", "AddV2", "a", "b");
  Binary(&graph, "s", "AddV2", "s1", "s2");
  GraphDef optimized = Optimized(graph, {"x:0", "w:0"}, {"ab:0", "s:0"});
  EXPECT_EQ(CountOps(optimized, "Mul"), 1);
  EXPECT_EQ(CountOps(optimized, "Sub"), 2);
  ExpectSameResults(graph, {{"x:0", FloatScalar(3.0f)}, {"w:0", FloatScalar(5.0f)}},
                    {"ab:0", "s:0"});
}

TEST(CommonSubexpressionTest, StatefulNodesDifferentAttrsAndDevicesDoNotMerge) {
  GraphDef graph;
  Const(&graph, "dims", Ints({3}));
  for (const char* name : {"r1", "r2"}) {
    NodeDef* random = AddNode(&graph, name, "RandomUniform", {"dims"});
    SetAttr(random, "T", DT_INT32);
    SetAttr(random, "dtype", DT_FLOAT);
  }
  AddPlaceholder(&graph, "x", PartialTensorShape::FromShape(TensorShape({3})));
  Const(&graph, "axis", Ints({0}));
  for (const char* name : {"keep", "drop"}) {
    NodeDef* sum = AddNode(&graph, name, "Sum", {"x", "axis"});
    SetAttr(sum, "T", DT_FLOAT);
    SetAttr(sum, "Tidx", DT_INT32);
    SetAttr(sum, "keep_dims", std::string(name) == "keep");
  }
  Unary(&graph, "n0", "Neg", "x", "/device:CPU:0");
  Unary(&graph, "n1", "Neg", "x", "/device:CPU:1");
  ConfigProto config;
  (*config.mutable_device_count())["CPU"] = 2;
  GraphDef optimized =
      Optimized(graph, {"x:0"}, {"r1:0", "r2:0", "keep:0", "drop:0", "n0:0", "n1:0"}, {}, config);
  EXPECT_EQ(CountOps(optimized, "RandomUniform"), 2);
  EXPECT_EQ(CountOps(optimized, "Sum"), 2);
  EXPECT_EQ(CountOps(optimized, "Neg"), 2);
}

TEST(CommonSubexpressionTest, FetchedDuplicatesKeepTheirNames) {
  GraphDef graph;
  AddPlaceholder(&graph, "x");
  Unary(&graph, "a", "Neg", "x");
  Unary(&graph, "b", "Neg", "x");
  Unary(&graph, "c", "Neg", "x");
  Unary(&graph, "after_c", "Exp", "c");
  GraphDef optimized = Optimized(graph, {"x:0"}, {"a:0", "b:0", "after_c:0"});
  EXPECT_EQ(OpOf(optimized, "a"), "Neg");
  EXPECT_EQ(OpOf(optimized, "b"), "Neg");
  EXPECT_EQ(OpOf(optimized, "c"), "<absent>");
  ExpectSameResults(graph, {{"x:0", FloatScalar(0.5f)}}, {"a:0", "b:0", "after_c:0"});
}

// --- batch-norm folding ------------------------------------------------------------------

std::vector<float> Ramp(int n, float scale, float offset) {
  std::vector<float> values(n);
  for (int i = 0; i < n; ++i) values[i] = offset + scale * static_cast<float>((i * 7) % 11);
  return values;
}

// x [1,4,4,2] → conv (2 → 3 channels) → batch norm.
GraphDef ConvBatchNorm(const std::string& bn_op, bool training, bool filter_shared) {
  GraphDef graph;
  AddPlaceholder(&graph, "x", PartialTensorShape::FromShape(TensorShape({1, 4, 4, 2})));
  Const(&graph, "filter", Floats(Ramp(12, 0.1f, -0.3f), TensorShape({1, 2, 2, 3})));
  NodeDef* conv = AddNode(&graph, "conv", "Conv2D", {"x", "filter"});
  SetAttr(conv, "T", DT_FLOAT);
  SetAttr(conv, "padding", std::string("SAME"));
  conv->mutable_attr()->insert({"strides", AttrValue()});
  for (int i = 0; i < 4; ++i) (*conv->mutable_attr())["strides"].mutable_list()->add_i(1);
  Const(&graph, "scale", Floats({1.5f, 0.5f, -2.0f}, TensorShape({3})));
  Const(&graph, "offset", Floats({0.1f, 0.2f, 0.3f}, TensorShape({3})));
  Const(&graph, "mean", Floats({0.4f, -0.1f, 0.0f}, TensorShape({3})));
  Const(&graph, "variance", Floats({2.0f, 0.5f, 1.0f}, TensorShape({3})));
  NodeDef* bn = AddNode(&graph, "bn", bn_op, {"conv", "scale", "offset", "mean", "variance"});
  SetAttr(bn, "T", DT_FLOAT);
  if (bn_op != "FusedBatchNorm") SetAttr(bn, "U", DT_FLOAT);
  SetAttr(bn, "is_training", training);
  SetAttr(bn, "epsilon", 0.01f);
  Unary(&graph, "y", "Relu", "bn");
  if (filter_shared) {
    AddPlaceholder(&graph, "s");
    Binary(&graph, "filter_twice", "Mul", "filter", "s");
  }
  return graph;
}

Tensor Image() { return Floats(Ramp(32, 0.25f, -1.0f), TensorShape({1, 4, 4, 2})); }

TEST(BatchNormFoldingTest, InferenceBatchNormGoesIntoTheFilterAndABiasAdd) {
  for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
    GraphDef graph = ConvBatchNorm(op, false, false);
    GraphDef optimized = Optimized(graph, {"x:0"}, {"y:0"});
    EXPECT_EQ(CountOps(optimized, op), 0) << op;
    // The BiasAdd the folding leaves (named "bn") and the Relu after it
    // then fuse into the convolution (the remapping pass), named as the Relu.
    EXPECT_EQ(OpOf(optimized, "bn"), "<absent>") << op;
    EXPECT_EQ(OpOf(optimized, "y"), "_FusedConv2D") << op;
    ExpectSameResults(graph, {{"x:0", Image()}}, {"y:0"}, 1e-5f);
  }
}

TEST(BatchNormFoldingTest, TrainingModeOrASharedFilterIsLeftAlone) {
  GraphDef training = ConvBatchNorm("FusedBatchNormV3", true, false);
  EXPECT_EQ(OpOf(Optimized(training, {"x:0"}, {"y:0"}), "bn"), "FusedBatchNormV3");
  GraphDef shared = ConvBatchNorm("FusedBatchNormV3", false, true);
  EXPECT_EQ(OpOf(Optimized(shared, {"x:0", "s:0"}, {"y:0", "filter_twice:0"}), "bn"),
            "FusedBatchNormV3");
}

TEST(BatchNormFoldingTest, KerasUnfusedScaleAndShiftAfterADepthwiseConvolutionFold) {
  GraphDef graph;
  AddPlaceholder(&graph, "x", PartialTensorShape::FromShape(TensorShape({1, 4, 4, 2})));
  Const(&graph, "filter", Floats(Ramp(8, 0.2f, -0.5f), TensorShape({2, 2, 2, 2})));
  NodeDef* conv = AddNode(&graph, "conv", "DepthwiseConv2dNative", {"x", "filter"});
  SetAttr(conv, "T", DT_FLOAT);
  SetAttr(conv, "padding", std::string("VALID"));
  for (int i = 0; i < 4; ++i) (*conv->mutable_attr())["strides"].mutable_list()->add_i(1);
  Const(&graph, "factor", Floats({1.5f, 0.5f, -2.0f, 3.0f}, TensorShape({1, 1, 1, 4})));
  Const(&graph, "shift", Floats({0.1f, 0.2f, 0.3f, -0.4f}, TensorShape({1, 1, 1, 4})));
  Binary(&graph, "scaled", "Mul", "conv", "factor");
  Binary(&graph, "shifted", "AddV2", "scaled", "shift");
  Unary(&graph, "y", "Relu6", "shifted");
  GraphDef optimized = Optimized(graph, {"x:0"}, {"y:0"});
  EXPECT_EQ(OpOf(optimized, "scaled"), "<absent>");
  // The BiasAdd the folding leaves (named "shifted") and the Relu6 then
  // fuse into the depthwise convolution, named as the Relu6.
  EXPECT_EQ(OpOf(optimized, "shifted"), "<absent>");
  EXPECT_EQ(OpOf(optimized, "y"), "_FusedDepthwiseConv2dNative");
  ExpectSameResults(graph, {{"x:0", Image()}}, {"y:0"}, 1e-5f);
}

TEST(BatchNormFoldingTest, AScaleAfterAMatMulAndItsBiasFolds) {
  GraphDef graph;
  AddPlaceholder(&graph, "x", PartialTensorShape::FromShape(TensorShape({2, 3})));
  Const(&graph, "weights", Floats(Ramp(6, 0.3f, -1.0f), TensorShape({3, 2})));
  NodeDef* matmul = AddNode(&graph, "matmul", "MatMul", {"x", "weights"});
  SetAttr(matmul, "T", DT_FLOAT);
  Const(&graph, "bias", Floats({0.5f, -0.5f}, TensorShape({2})));
  Binary(&graph, "biased", "BiasAdd", "matmul", "bias");
  Const(&graph, "factor", Floats({2.0f, -3.0f}, TensorShape({2})));
  Binary(&graph, "y", "Mul", "biased", "factor");
  Unary(&graph, "z", "Neg", "y");
  GraphDef optimized = Optimized(graph, {"x:0"}, {"z:0"});
  EXPECT_EQ(OpOf(optimized, "y"), "<absent>");
  ExpectSameResults(graph, {{"x:0", Floats(Ramp(6, 0.5f, -1.0f), TensorShape({2, 3}))}}, {"z:0"},
                    1e-6f);
}

}  // namespace
}  // namespace tensorweave

namespace tensorweave {
namespace {

TEST(GraphOptimizerSessionTest, PartitionGraphsAreTheOptimizedOnes) {
  using namespace session_test;  // NOLINT: test helpers
  GraphDef graph = ConstantChain(10);
  SessionOptions options;
  std::unique_ptr<Session> session;
  ASSERT_TRUE(NewSession(options, &session).ok());
  ASSERT_TRUE(session->Create(graph).ok());
  std::vector<Tensor> outputs;
  ASSERT_TRUE(session->Run({}, {"y10"}, {}, &outputs).ok());
  std::map<std::string, GraphDef> partitions;
  auto* direct = dynamic_cast<DirectSession*>(session.get());
  ASSERT_NE(direct, nullptr);
  ASSERT_TRUE(direct->GetPartitionGraphs({}, {"y10"}, {}, &partitions).ok());
  ASSERT_EQ(partitions.size(), 1u);
  const GraphDef& partition = partitions.begin()->second;
  EXPECT_EQ(CountOps(partition, "AddV2"), 0);
  EXPECT_EQ(OpOf(partition, "y10"), "Const");
}

}  // namespace
}  // namespace tensorweave
