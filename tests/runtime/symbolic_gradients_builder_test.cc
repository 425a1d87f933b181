// The symbolic gradient builder's own rules (names under the prefix,
// several paths and outputs, unreachable inputs, ops without gradients, the
// graph left as it was on error) and gradients through TensorFlow 1.x while
// loops, checked against central differences.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/gradients/gradient_registry.h"
#include "runtime/gradients/gradients.h"
#include "runtime/graph/graph_def_import.h"
#include "tests/runtime/gradient_check.h"

namespace tensorweave {
namespace {

using namespace gradient_check;  // NOLINT: test helpers

// --- while loops ---------------------------------------------------------------------------

// A TensorFlow 1.x while loop over the placeholders x0 (loop variable v) and
// x1 (loop invariant w, entered with is_constant), running `iterations`
// times:  v = tanh(v * w) + v * v * 0.5   (per element).
// `body_output` replaces that body when not empty (text of the node named
// "body", which may read ident_v, enter_w and ident_i).
constexpr char kLoop[] = R"pb(
  node {
    name: "i0"
    op: "Const"
    attr {
      key: "dtype"
      value { type: DT_INT32 }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_INT32
          tensor_shape {}
          int_val: 0
        }
      }
    }
  }
  node {
    name: "enter_i"
    op: "Enter"
    input: "i0"
    attr {
      key: "T"
      value { type: DT_INT32 }
    }
    attr {
      key: "frame_name"
      value { s: "loop" }
    }
  }
  node {
    name: "enter_v"
    op: "Enter"
    input: "x0"
    attr {
      key: "T"
      value { type: DT_DOUBLE }
    }
    attr {
      key: "frame_name"
      value { s: "loop" }
    }
  }
  node {
    name: "enter_w"
    op: "Enter"
    input: "x1"
    attr {
      key: "T"
      value { type: DT_DOUBLE }
    }
    attr {
      key: "frame_name"
      value { s: "loop" }
    }
    attr {
      key: "is_constant"
      value { b: true }
    }
  }
  node {
    name: "merge_i"
    op: "Merge"
    input: "enter_i"
    input: "next_i"
    attr {
      key: "T"
      value { type: DT_INT32 }
    }
    attr {
      key: "N"
      value { i: 2 }
    }
  }
  node {
    name: "merge_v"
    op: "Merge"
    input: "enter_v"
    input: "next_v"
    attr {
      key: "T"
      value { type: DT_DOUBLE }
    }
    attr {
      key: "N"
      value { i: 2 }
    }
  }
  node {
    name: "limit"
    op: "Const"
    input: "^merge_i"
    attr {
      key: "dtype"
      value { type: DT_INT32 }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_INT32
          tensor_shape {}
          int_val: ITERATIONS
        }
      }
    }
  }
  node {
    name: "less"
    op: "Less"
    input: "merge_i"
    input: "limit"
    attr {
      key: "T"
      value { type: DT_INT32 }
    }
  }
  node { name: "cond" op: "LoopCond" input: "less" }
  node {
    name: "switch_i"
    op: "Switch"
    input: "merge_i"
    input: "cond"
    attr {
      key: "T"
      value { type: DT_INT32 }
    }
  }
  node {
    name: "switch_v"
    op: "Switch"
    input: "merge_v"
    input: "cond"
    attr {
      key: "T"
      value { type: DT_DOUBLE }
    }
  }
  node {
    name: "exit_i"
    op: "Exit"
    input: "switch_i"
    attr {
      key: "T"
      value { type: DT_INT32 }
    }
  }
  node {
    name: "exit_v"
    op: "Exit"
    input: "switch_v"
    attr {
      key: "T"
      value { type: DT_DOUBLE }
    }
  }
  node {
    name: "ident_i"
    op: "Identity"
    input: "switch_i:1"
    attr {
      key: "T"
      value { type: DT_INT32 }
    }
  }
  node {
    name: "ident_v"
    op: "Identity"
    input: "switch_v:1"
    attr {
      key: "T"
      value { type: DT_DOUBLE }
    }
  }
  node {
    name: "one"
    op: "Const"
    input: "^ident_i"
    attr {
      key: "dtype"
      value { type: DT_INT32 }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_INT32
          tensor_shape {}
          int_val: 1
        }
      }
    }
  }
  node {
    name: "inc"
    op: "AddV2"
    input: "ident_i"
    input: "one"
    attr {
      key: "T"
      value { type: DT_INT32 }
    }
  }
  node {
    name: "half"
    op: "Const"
    input: "^ident_i"
    attr {
      key: "dtype"
      value { type: DT_DOUBLE }
    }
    attr {
      key: "value"
      value {
        tensor {
          dtype: DT_DOUBLE
          tensor_shape {}
          double_val: 0.5
        }
      }
    }
  }
  node {
    name: "vw"
    op: "Mul"
    input: "ident_v"
    input: "enter_w"
    attr {
      key: "T"
      value { type: DT_DOUBLE }
    }
  }
  node {
    name: "t"
    op: "Tanh"
    input: "vw"
    attr {
      key: "T"
      value { type: DT_DOUBLE }
    }
  }
  node {
    name: "vv"
    op: "Mul"
    input: "ident_v"
    input: "ident_v"
    attr {
      key: "T"
      value { type: DT_DOUBLE }
    }
  }
  node {
    name: "vvh"
    op: "Mul"
    input: "vv"
    input: "half"
    attr {
      key: "T"
      value { type: DT_DOUBLE }
    }
  }
  node {
    name: "body"
    op: "AddV2"
    input: "t"
    input: "vvh"
    attr {
      key: "T"
      value { type: DT_DOUBLE }
    }
  }
  node {
    name: "next_i"
    op: "NextIteration"
    input: "inc"
    attr {
      key: "T"
      value { type: DT_INT32 }
    }
  }
  node {
    name: "next_v"
    op: "NextIteration"
    input: "body"
    attr {
      key: "T"
      value { type: DT_DOUBLE }
    }
  }
)pb";

// Imports kLoop (with `iterations`, and `parallel_iterations` on the
// Enters) after the placeholders; returns exit_v.
// kLoop with `iterations` as a GraphDef.
GraphDef LoopGraphDef(int iterations) {
  std::string text = kLoop;
  text.replace(text.find("ITERATIONS"), std::string("ITERATIONS").size(),
               std::to_string(iterations));
  GraphDef def;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def));
  return def;
}

NodeOutput ImportGraph(GradientScope& scope, const GraphDef& def, const std::string& exit) {
  ImportGraphDefOptions options;
  options.allow_inputs_to_existing_nodes = true;
  options.prefix = "loop";
  scope.UpdateStatus(ImportGraphDef(options, def, scope.graph(), scope.refiner()));
  if (!scope.status().ok()) return NoGradient();
  return {scope.graph()->FindNode("loop/" + exit), 0};
}

// Imports kLoop (with `iterations`, and `parallel_iterations` on the
// Enters) after the placeholders; returns exit_v.
NodeOutput ImportLoop(GradientScope& scope, int iterations, int parallel_iterations = 10) {
  GraphDef def = LoopGraphDef(iterations);
  for (NodeDef& node : *def.mutable_node()) {
    if (node.op() == "Enter") {
      (*node.mutable_attr())["parallel_iterations"].set_i(parallel_iterations);
    }
  }
  return ImportGraph(scope, def, "exit_v");
}

// kLoop whose body runs a second kLoop (frame "inner") on ident_v and
// enter_w and continues with its result.
NodeOutput ImportNestedLoops(GradientScope& scope) {
  GraphDef def = LoopGraphDef(2);
  GraphDef inner = LoopGraphDef(2);
  for (NodeDef& node : *inner.mutable_node()) {
    node.set_name("inner_" + node.name());
    for (std::string& input : *node.mutable_input()) {
      const bool control = !input.empty() && input[0] == '^';
      std::string name = control ? input.substr(1) : input;
      if (name == "x0") {
        name = "ident_v";
      } else if (name == "x1") {
        name = "enter_w";
      } else {
        name = "inner_" + name;
      }
      input = (control ? "^" : "") + name;
    }
    if (node.op() == "Enter") (*node.mutable_attr())["frame_name"].set_s("inner");
    if (node.name() == "inner_i0") node.add_input("^ident_i");  // in the outer frame
    *def.add_node() = node;
  }
  for (NodeDef& node : *def.mutable_node()) {
    if (node.name() == "next_v") node.set_input(0, "inner_exit_v");
  }
  return ImportGraph(scope, def, "exit_v");
}

TEST(SymbolicGradientsTest, WhileLoopVariableAndInvariant) {
  for (int iterations : {0, 1, 4}) {
    SCOPED_TRACE(iterations);
    CheckGradients(
        [iterations](GradientScope& s, const Inputs&) { return ImportLoop(s, iterations); },
        Random({TensorShape({3}), TensorShape({3})}, -0.8, 0.8), {1e-6, 1e-6, true});
  }
}

TEST(SymbolicGradientsTest, WhileLoopStacksStayInOrderWithOneOrManyParallelIterations) {
  for (int parallel : {1, 32}) {
    SCOPED_TRACE(parallel);
    CheckGradients(
        [parallel](GradientScope& s, const Inputs&) { return ImportLoop(s, 6, parallel); },
        Random({TensorShape({2}), TensorShape({2})}, -0.8, 0.8), {1e-6, 1e-6});
  }
}

TEST(SymbolicGradientsTest, WhileLoopFollowedAndFedByOtherOps) {
  // y = sum(loop(x0, x1)^2): a gradient computed after the loop flows into it.
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        NodeOutput exit = ImportLoop(s, 3);
        return s.Sum(s.Op("Square", {exit}), s.Int32s({0}));
      },
      Random({TensorShape({3}), TensorShape({3})}, -0.8, 0.8));
}

TEST(SymbolicGradientsTest, WhileLoopGradientTwiceOnOneLoop) {
  // A second gradient of the same loop ignores the counter the first added.
  GradientGraph g;
  NodeOutput x = g.Placeholder(0, DT_DOUBLE, Known({}));
  NodeOutput w = g.Placeholder(1, DT_DOUBLE, Known({}));
  NodeOutput y = ImportLoop(g.forward(), 3);
  ASSERT_TRUE(g.forward().status().ok()) << g.forward().status();
  std::vector<NodeOutput> first, second;
  Status status = AddGradients(&g.graph(), &g.refiner(), nullptr, {y}, {x, w}, nullptr, &first);
  ASSERT_TRUE(status.ok()) << status;
  status = AddGradients(&g.graph(), &g.refiner(), nullptr, {y}, {x, w}, nullptr, &second);
  ASSERT_TRUE(status.ok()) << status;
  std::vector<Tensor> out;
  status = g.Run(
      {{"x0", DoubleTensor(TensorShape({}), {0.3})}, {"x1", DoubleTensor(TensorShape({}), {-0.6})}},
      {first[0], first[1], second[0], second[1]}, &out);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(out[0].data<double>()[0], out[2].data<double>()[0]);
  EXPECT_EQ(out[1].data<double>()[0], out[3].data<double>()[0]);
  EXPECT_NE(out[0].data<double>()[0], 0);
}

TEST(SymbolicGradientsTest, NestedWhileLoopIsUnimplementedAndAddsNothing) {
  GradientGraph g;
  NodeOutput x = g.Placeholder(0, DT_DOUBLE, Known({}));
  g.Placeholder(1, DT_DOUBLE, Known({}));
  NodeOutput y = ImportNestedLoops(g.forward());
  ASSERT_TRUE(g.forward().status().ok()) << g.forward().status();
  std::vector<Tensor> out;  // the nested loops themselves run
  ASSERT_TRUE(g.Run({{"x0", DoubleTensor(TensorShape({}), {0.3})},
                     {"x1", DoubleTensor(TensorShape({}), {0.5})}},
                    {y}, &out)
                  .ok());
  const int nodes = g.graph().num_op_nodes();
  std::vector<NodeOutput> grads;
  Status status = AddGradients(&g.graph(), &g.refiner(), nullptr, {y}, {x}, nullptr, &grads);
  EXPECT_EQ(status.code(), Code::UNIMPLEMENTED) << status;
  EXPECT_NE(status.message().find("nested loop 'inner'"), std::string::npos) << status;
  EXPECT_EQ(g.graph().num_op_nodes(), nodes);
}

TEST(SymbolicGradientsTest, WhileLoopBodyOpWithoutGradientIsNotFoundAndAddsNothing) {
  GradientGraph g;
  NodeOutput x = g.Placeholder(0, DT_DOUBLE, Known({}));
  g.Placeholder(1, DT_DOUBLE, Known({}));
  GraphDef def = LoopGraphDef(2);
  for (NodeDef& node : *def.mutable_node()) {
    if (node.name() == "t") node.set_op("Inv");  // no gradient registered
  }
  NodeOutput y = ImportGraph(g.forward(), def, "exit_v");
  ASSERT_TRUE(g.forward().status().ok()) << g.forward().status();
  const int nodes = g.graph().num_op_nodes();
  std::vector<NodeOutput> grads;
  Status status = AddGradients(&g.graph(), &g.refiner(), nullptr, {y}, {x}, nullptr, &grads);
  EXPECT_EQ(status.code(), Code::NOT_FOUND) << status;
  EXPECT_EQ(status.message().rfind("No gradient defined for op: Inv.", 0), 0u) << status;
  EXPECT_EQ(g.graph().num_op_nodes(), nodes);
}

// --- the builder -----------------------------------------------------------------------------

TEST(SymbolicGradientsTest, SumsGradientsOfSeveralPathsAndSeveralOutputs) {
  // y = x*x + 3x: dy/dx = 2x + 3.
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        NodeOutput three_x = s.Mul(s.Scalar(3, DT_DOUBLE), x[0]);
        return s.Op("AddV2", {s.Mul(x[0], x[0]), three_x});
      },
      Random({TensorShape({3})}));
  GradientGraph g;
  NodeOutput x = g.Placeholder(0, DT_DOUBLE, Known({}));
  // y1 = x*x and y2 = identity(x): d(y1 + y2)/dx = 2x + 1, an AddN of the
  // two paths.
  NodeOutput y1 = g.forward().Mul(x, x);
  NodeOutput y2 = g.forward().Op("Identity", {x});
  std::vector<NodeOutput> grads;
  ASSERT_TRUE(AddGradients(&g.graph(), &g.refiner(), nullptr, {y1, y2}, {x}, nullptr, &grads).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(g.Run({{"x0", DoubleTensor(TensorShape({}), {5})}}, grads, &out).ok());
  EXPECT_EQ(out[0].data<double>()[0], 11);
  EXPECT_EQ(grads[0].node->type_string(), "AddN");
}

TEST(SymbolicGradientsTest, NamesGoUnderGradientsThenGradients1) {
  GradientGraph g;
  NodeOutput x = g.Placeholder(0, DT_DOUBLE, Known({}));
  NodeOutput y = g.forward().Mul(x, x);
  std::vector<NodeOutput> first, second, named;
  ASSERT_TRUE(AddGradients(&g.graph(), &g.refiner(), nullptr, {y}, {x}, nullptr, &first).ok());
  ASSERT_TRUE(AddGradients(&g.graph(), &g.refiner(), nullptr, {y}, {x}, nullptr, &second).ok());
  const std::string prefix = "my/grads";
  ASSERT_TRUE(AddGradients(&g.graph(), &g.refiner(), &prefix, {y}, {x}, nullptr, &named).ok());
  EXPECT_EQ(first[0].node->name(), "gradients/AddN");
  EXPECT_EQ(second[0].node->name(), "gradients_1/AddN");
  EXPECT_EQ(named[0].node->name(), "my/grads/AddN");
  EXPECT_NE(g.graph().FindNode("gradients/OnesLike"), nullptr);
  for (const Node* node : g.graph().op_nodes()) {
    const std::string& name = node->name();
    EXPECT_TRUE(name == "x0" || name.rfind("f/", 0) == 0 || name.rfind("gradients/", 0) == 0 ||
                name.rfind("gradients_1/", 0) == 0 || name.rfind("my/grads/", 0) == 0)
        << name;
  }
}

TEST(SymbolicGradientsTest, UsedPrefixIsInvalidArgumentAndAddsNothing) {
  GradientGraph g;
  NodeOutput x = g.Placeholder(0, DT_DOUBLE, Known({}));
  NodeOutput y = g.forward().Mul(x, x);
  std::vector<NodeOutput> grads;
  const int nodes = g.graph().num_op_nodes();
  for (const std::string prefix : {"x0", "f"}) {
    Status status = AddGradients(&g.graph(), &g.refiner(), &prefix, {y}, {x}, nullptr, &grads);
    EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT);
    EXPECT_NE(status.message().find("prefix [" + prefix +
                                    "] conflicts with existing node in the graph named ["),
              std::string::npos)
        << status;
  }
  EXPECT_EQ(g.graph().num_op_nodes(), nodes);
}

TEST(SymbolicGradientsTest, UnreachableInputIsInvalidArgument) {
  GradientGraph g;
  NodeOutput x = g.Placeholder(0, DT_DOUBLE, Known({}));
  NodeOutput z = g.Placeholder(1, DT_DOUBLE, Known({}));
  NodeOutput y = g.forward().Mul(x, x);
  std::vector<NodeOutput> grads;
  const int nodes = g.graph().num_op_nodes();
  Status status = AddGradients(&g.graph(), &g.refiner(), nullptr, {y}, {x, z}, nullptr, &grads);
  EXPECT_EQ(status.code(), Code::INVALID_ARGUMENT);
  EXPECT_EQ(status.message(),
            "Cannot compute the partial derivative for node 'x1' as it's unreachable from the "
            "output node(s).");
  EXPECT_EQ(g.graph().num_op_nodes(), nodes);  // OnesLike removed again
}

TEST(SymbolicGradientsTest, InputBehindNoGradientOpGetsNoGradient) {
  GradientGraph g;
  NodeOutput x = g.Placeholder(0, DT_DOUBLE, Known({2}));
  NodeOutput shape = g.forward().Shape(x);
  std::vector<NodeOutput> grads;
  ASSERT_TRUE(AddGradients(&g.graph(), &g.refiner(), nullptr, {shape}, {x}, nullptr, &grads).ok());
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_TRUE(IsNoGradient(grads[0]));
  EXPECT_EQ(grads[0].index, -1);
}

TEST(SymbolicGradientsTest, OpWithoutGradientIsNotFoundAndAddsNothing) {
  GradientGraph g;
  NodeOutput x = g.Placeholder(0, DT_DOUBLE, Known({2}));
  // PlaceholderWithDefault has no gradient registered.
  NodeOutput y = g.forward().Op("PlaceholderWithDefault", {x}, {Attr("shape", Known({2}))});
  NodeOutput z = g.forward().Mul(y, y);
  const int nodes = g.graph().num_op_nodes();
  std::vector<NodeOutput> grads;
  Status status = AddGradients(&g.graph(), &g.refiner(), nullptr, {z}, {x}, nullptr, &grads);
  EXPECT_EQ(status.code(), Code::NOT_FOUND);
  EXPECT_EQ(status.message().rfind("No gradient defined for op: PlaceholderWithDefault. ", 0), 0u)
      << status;
  EXPECT_EQ(g.graph().num_op_nodes(), nodes);
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_TRUE(IsNoGradient(grads[0]));
}

TEST(SymbolicGradientsTest, GivenInitialGradientsScaleTheResult) {
  GradientGraph g;
  NodeOutput x = g.Placeholder(0, DT_DOUBLE, Known({}));
  NodeOutput y = g.forward().Mul(x, x);
  NodeOutput dy = g.forward().Scalar(10, DT_DOUBLE);
  std::vector<NodeOutput> grads, initial = {dy};
  ASSERT_TRUE(AddGradients(&g.graph(), &g.refiner(), nullptr, {y}, {x}, &initial, &grads).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(g.Run({{"x0", DoubleTensor(TensorShape({}), {3})}}, grads, &out).ok());
  EXPECT_EQ(out[0].data<double>()[0], 60);
  initial.push_back(dy);
  EXPECT_EQ(AddGradients(&g.graph(), &g.refiner(), nullptr, {y}, {x}, &initial, &grads).code(),
            Code::INVALID_ARGUMENT);
}

TEST(SymbolicGradientsTest, ForeignOrMissingTensorsAreRejected) {
  GradientGraph g, other;
  NodeOutput x = g.Placeholder(0, DT_DOUBLE, Known({}));
  NodeOutput y = g.forward().Mul(x, x);
  NodeOutput foreign = other.Placeholder(0, DT_DOUBLE, Known({}));
  std::vector<NodeOutput> grads;
  EXPECT_EQ(AddGradients(&g.graph(), &g.refiner(), nullptr, {y}, {NodeOutput{nullptr, 0}}, nullptr,
                         &grads)
                .code(),
            Code::INVALID_ARGUMENT);
  EXPECT_EQ(
      AddGradients(&g.graph(), &g.refiner(), nullptr, {y}, {NodeOutput{x.node, 3}}, nullptr, &grads)
          .code(),
      Code::OUT_OF_RANGE);
  (void)foreign;
}

TEST(SymbolicGradientsTest, EveryRegisteredGradientNamesARegisteredOp) {
  // A typo in a registration would leave an op without its gradient.
  for (const char* op : {"Add", "MatMul", "BatchMatMulV2", "Conv2D", "GatherV2", "Softmax",
                         "SparseSoftmaxCrossEntropyWithLogits", "StridedSlice", "Fill"}) {
    GradientFunction function = nullptr;
    EXPECT_TRUE(GradientRegistry::Global()->Lookup(op, &function).ok()) << op;
    EXPECT_NE(function, nullptr) << op;
    EXPECT_NE(OpRegistry::Global()->LookUp(op), nullptr) << op;
  }
}

}  // namespace
}  // namespace tensorweave
