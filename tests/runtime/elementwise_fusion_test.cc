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
}

}  // namespace
}  // namespace tensorweave
