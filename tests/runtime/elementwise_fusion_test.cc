// The elementwise chain fusion pass (common_runtime/elementwise_fusion.h)
// and the _FusedUnaryChain kernel: which chains are fused and which must
// stay (an intermediate consumed twice, fetched or with a control edge out;
// another dtype), the fused node's name, ops and edges, that a session
// computes the same values with the pass on and off, and that an unknown
// function in a hand-written node is an INVALID_ARGUMENT naming it.
#include "runtime/common_runtime/elementwise_fusion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "runtime/common_runtime/session_factory.h"
#include "tests/runtime/graph_test_util.h"
#include "tests/runtime/session_test_util.h"

namespace tensorweave {
namespace {

using session_test::SetAttr;

// x (fed float) -> each of `ops` in turn -> "y" (Identity).
GraphDef Chain(const std::vector<std::string>& ops, DataType dtype = DT_FLOAT) {
  GraphDef graph;
  NodeDef* x = session_test::AddNode(&graph, "x", "Placeholder");
  SetAttr(x, "dtype", dtype);
  std::string last = "x";
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string name = "f" + std::to_string(i);
    NodeDef* node = session_test::AddNode(&graph, name, ops[i], {last});
    SetAttr(node, "T", dtype);
    last = name;
  }
  NodeDef* y = session_test::AddNode(&graph, "y", "Identity", {last});
  SetAttr(y, "T", dtype);
  return graph;
}

GraphDef Fused(const GraphDef& graph_def, const std::unordered_set<std::string>& preserved,
               bool* changed) {
  Graph graph(OpRegistry::Global());
  EXPECT_TRUE(graph_test::ImportRefined(ImportGraphDefOptions(), graph_def, &graph).ok());
  GraphOptimizerOptions options;
  options.preserved_nodes = preserved;
  const Status status = FuseUnaryChains(options, &graph, changed);
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

std::vector<std::string> ChainOps(const NodeDef& node) {
  std::vector<std::string> ops;
  for (const std::string& s : node.attr().at("ops").list().s()) ops.push_back(s);
  return ops;
}

Tensor Inputs(int64_t n) {
  Tensor x(DT_FLOAT, TensorShape({n}));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-3, 3);
  for (int64_t i = 0; i < n; ++i) x.data<float>()[i] = uniform(rng);
  return x;
}

// Runs `graph` on x with the graph optimizer on or off.
Tensor RunChain(const GraphDef& graph, const Tensor& x, bool optimize) {
  SessionOptions options;
  if (!optimize) {
    options.config.mutable_graph_options()->mutable_rewrite_options()->set_disable_meta_optimizer(
        true);
  }
  std::unique_ptr<Session> session;
  EXPECT_TRUE(NewSession(options, &session).ok());
  Status status = session->Create(graph);
  EXPECT_TRUE(status.ok()) << status;
  std::vector<Tensor> outputs;
  status = session->Run({{"x", x}}, {"y"}, {}, &outputs);
  EXPECT_TRUE(status.ok()) << status;
  return outputs.empty() ? Tensor() : outputs[0];
}

TEST(ElementwiseFusion, FusesAChainUnderItsLastNodesName) {
  bool changed = false;
  const GraphDef fused = Fused(Chain({"Exp", "Tanh", "Relu", "Sigmoid"}), {"y"}, &changed);
  EXPECT_TRUE(changed);
  for (const char* gone : {"f0", "f1", "f2"}) EXPECT_EQ(FindNode(fused, gone), nullptr) << gone;
  const NodeDef* node = FindNode(fused, "f3");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->op(), "_FusedUnaryChain");
  EXPECT_EQ(ChainOps(*node), (std::vector<std::string>{"Exp", "Tanh", "Relu", "Sigmoid"}));
  ASSERT_EQ(node->input_size(), 1);
  EXPECT_EQ(node->input(0), "x");
  EXPECT_EQ(FindNode(fused, "y")->input(0), "f3");
}

TEST(ElementwiseFusion, LeavesSingleFunctionsAndOtherDtypes) {
  bool changed = true;
  Fused(Chain({"Exp"}), {"y"}, &changed);
  EXPECT_FALSE(changed);
  Fused(Chain({"Exp", "Tanh"}, DT_DOUBLE), {"y"}, &changed);
  EXPECT_FALSE(changed);
  // Square is no function of the chain: Exp alone before it, Tanh alone
  // after it.
  Fused(Chain({"Exp", "Square", "Tanh"}), {"y"}, &changed);
  EXPECT_FALSE(changed);
}

TEST(ElementwiseFusion, KeepsIntermediatesOthersNeed) {
  bool changed = false;
  // f1 is a target: a chain may end there (under its name) but not pass
  // it, so f0 -> f1 and f2 -> f3 fuse apart.
  GraphDef fused = Fused(Chain({"Exp", "Tanh", "Relu", "Sigmoid"}), {"y", "f1"}, &changed);
  EXPECT_TRUE(changed);
  EXPECT_EQ(ChainOps(*FindNode(fused, "f1")), (std::vector<std::string>{"Exp", "Tanh"}));
  EXPECT_EQ(FindNode(fused, "f3")->op(), "_FusedUnaryChain");
  EXPECT_EQ(ChainOps(*FindNode(fused, "f3")), (std::vector<std::string>{"Relu", "Sigmoid"}));

  // f0 read twice: only f1 -> f2 fuses.
  GraphDef twice = Chain({"Exp", "Tanh", "Sqrt"});
  NodeDef* other = session_test::AddNode(&twice, "other", "Identity", {"f0"});
  SetAttr(other, "T", DT_FLOAT);
  fused = Fused(twice, {"y", "other"}, &changed);
  EXPECT_EQ(FindNode(fused, "f0")->op(), "Exp");
  EXPECT_EQ(ChainOps(*FindNode(fused, "f2")), (std::vector<std::string>{"Tanh", "Sqrt"}));

  // A control edge out of f0 keeps it; its control input moves to the
  // fused node.
  GraphDef controlled = Chain({"Exp", "Tanh", "Log"});
  session_test::AddNode(&controlled, "after", "NoOp", {"^f0"});
  session_test::AddNode(&controlled, "before", "NoOp");
  controlled.mutable_node(2)->add_input("^before");  // f1
  fused = Fused(controlled, {"y", "after"}, &changed);
  EXPECT_EQ(FindNode(fused, "f0")->op(), "Exp");
  const NodeDef* chain = FindNode(fused, "f2");
  EXPECT_EQ(ChainOps(*chain), (std::vector<std::string>{"Tanh", "Log"}));
  EXPECT_EQ(chain->input_size(), 2);
  EXPECT_EQ(chain->input(1), "^before");
}

TEST(ElementwiseFusion, SessionValuesMatchTheUnfusedGraph) {
  const std::vector<std::vector<std::string>> chains = {
      {"Exp", "Log"}, {"Tanh", "Sigmoid", "Relu"}, {"Relu", "Sqrt", "Rsqrt"}};
  for (const auto& ops : chains) {
    for (int64_t n : {1, 7, 2048, 2049, 100003}) {
      const GraphDef graph = Chain(ops);
      const Tensor x = Inputs(n);
      const Tensor fused = RunChain(graph, x, true), plain = RunChain(graph, x, false);
      ASSERT_EQ(fused.NumElements(), n);
      ASSERT_EQ(plain.NumElements(), n);
      for (int64_t i = 0; i < n; ++i) {
        const float a = fused.data<float>()[i], b = plain.data<float>()[i];
        // The same table loops run in both: the same bits (NaN from the
        // log or sqrt of negatives included).
        ASSERT_TRUE(std::memcmp(&a, &b, sizeof(float)) == 0) << ops[0] << " n=" << n << " " << i;
      }
    }
  }
}

// x -> Mul(x, 0.5) -> Exp -> Sub(1, .) -> Maximum(., -0.25) -> RealDiv(.,3)
// -> Tanh -> "y", the scalars as rank-0 Consts on either side.
GraphDef ScalarChain() {
  GraphDef graph;
  NodeDef* x = session_test::AddNode(&graph, "x", "Placeholder");
  SetAttr(x, "dtype", DT_FLOAT);
  auto scalar = [&](const std::string& name, float value) {
    NodeDef* c = session_test::AddNode(&graph, name, "Const");
    SetAttr(c, "dtype", DT_FLOAT);
    Tensor t(DT_FLOAT, TensorShape({}));
    t.data<float>()[0] = value;
    SetAttr(c, "value", t);
  };
  scalar("half", 0.5f);
  scalar("one", 1.0f);
  scalar("floor", -0.25f);
  scalar("three", 3.0f);
  auto step = [&](const std::string& name, const std::string& op, const std::string& a,
                  const std::string& b) {
    NodeDef* node = b.empty() ? session_test::AddNode(&graph, name, op, {a})
                              : session_test::AddNode(&graph, name, op, {a, b});
    SetAttr(node, "T", DT_FLOAT);
  };
  step("scaled", "Mul", "x", "half");
  step("e", "Exp", "scaled", "");
  step("flipped", "Sub", "one", "e");
  step("clipped", "Maximum", "flipped", "floor");
  step("divided", "RealDiv", "clipped", "three");
  step("t", "Tanh", "divided", "");
  step("y", "Identity", "t", "");
  return graph;
}

TEST(ElementwiseFusion, FusesOperationsWithScalarConstants) {
  bool changed = false;
  const GraphDef fused = Fused(ScalarChain(), {"y"}, &changed);
  EXPECT_TRUE(changed);
  const NodeDef* node = FindNode(fused, "t");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->op(), "_FusedUnaryChain");
  EXPECT_EQ(ChainOps(*node),
            (std::vector<std::string>{"Mul", "Exp", "RSub", "Maximum", "RealDiv", "Tanh"}));
  std::vector<float> scalars;
  for (float f : node->attr().at("scalars").list().f()) scalars.push_back(f);
  EXPECT_EQ(scalars, (std::vector<float>{0.5f, 0, 1, -0.25f, 3, 0}));
  EXPECT_EQ(node->input(0), "x");
  for (const char* gone : {"half", "one", "floor", "three", "scaled", "e", "divided"}) {
    EXPECT_EQ(FindNode(fused, gone), nullptr) << gone;
  }
  // Session values: the same bits with the optimizer on and off.
  const Tensor x = Inputs(5000);
  const Tensor on = RunChain(ScalarChain(), x, true), off = RunChain(ScalarChain(), x, false);
  ASSERT_EQ(on.NumElements(), 5000);
  ASSERT_EQ(off.NumElements(), 5000);
  EXPECT_EQ(std::memcmp(on.data<float>(), off.data<float>(), 5000 * sizeof(float)), 0);
  for (int64_t i = 0; i < 5000; ++i) {
    const double v = x.data<float>()[i];
    const double want = std::tanh(std::max(1 - std::exp(v * 0.5), -0.25) / 3);
    ASSERT_NEAR(on.data<float>()[i], want, 1e-6) << i;
  }
}

TEST(ElementwiseFusion, LeavesOperationsWithTensorsOrShapedConstants) {
  // Sub(x, c) with c of shape [1] broadcasts x of rank 0 to [1]: no step.
  GraphDef graph = Chain({"Exp", "Tanh"});
  NodeDef* c = session_test::AddNode(&graph, "c", "Const");
  SetAttr(c, "dtype", DT_FLOAT);
  SetAttr(c, "value", Tensor(DT_FLOAT, TensorShape({1})));
  NodeDef* sub = session_test::AddNode(&graph, "sub", "Sub", {"f1", "c"});
  SetAttr(sub, "T", DT_FLOAT);
  graph.mutable_node(3)->set_input(0, "sub");  // y reads sub
  bool changed = false;
  const GraphDef fused = Fused(graph, {"y"}, &changed);
  EXPECT_EQ(FindNode(fused, "sub")->op(), "Sub");
  EXPECT_EQ(ChainOps(*FindNode(fused, "f1")), (std::vector<std::string>{"Exp", "Tanh"}));

  // Arithmetic alone (x * 0.5 - 1, no function) stays node by node, as
  // TensorFlow leaves it.
  GraphDef arithmetic = ScalarChain();
  for (NodeDef& node : *arithmetic.mutable_node()) {
    if (node.name() == "e" || node.name() == "t") node.set_op("Identity");
  }
  changed = true;
  Fused(arithmetic, {"y"}, &changed);
  EXPECT_FALSE(changed);
}

TEST(ElementwiseFusion, UnknownFunctionIsInvalidArgument) {
  GraphDef graph;
  NodeDef* x = session_test::AddNode(&graph, "x", "Placeholder");
  SetAttr(x, "dtype", DT_FLOAT);
  NodeDef* chain = session_test::AddNode(&graph, "y", "_FusedUnaryChain", {"x"});
  SetAttr(chain, "T", DT_FLOAT);
  (*chain->mutable_attr())["ops"].mutable_list()->add_s("Exp");
  (*chain->mutable_attr())["ops"].mutable_list()->add_s("Square");
  std::unique_ptr<Session> session;
  ASSERT_TRUE(NewSession(SessionOptions(), &session).ok());
  Status status = session->Create(graph);
  std::vector<Tensor> outputs;
  if (status.ok()) status = session->Run({{"x", Inputs(4)}}, {"y"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("Square"), std::string::npos) << status;
  EXPECT_NE(status.message().find("y"), std::string::npos) << status;

  // One scalar for two ops.
  (*chain->mutable_attr())["ops"].mutable_list()->set_s(1, "Mul");
  (*chain->mutable_attr())["scalars"].mutable_list()->add_f(2);
  ASSERT_TRUE(NewSession(SessionOptions(), &session).ok());
  status = session->Create(graph);
  if (status.ok()) status = session->Run({{"x", Inputs(4)}}, {"y"}, {}, &outputs);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT) << status;
  EXPECT_NE(status.message().find("one value per op"), std::string::npos) << status;
}

}  // namespace
}  // namespace tensorweave
