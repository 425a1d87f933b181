// The gradient functions of the math, array and nn ops, each checked
// against central differences (float64 wherever the op has a float64
// kernel) through AddSymbolicGradients and a DirectSession.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/gradients/gradients.h"
#include "tests/runtime/gradient_check.h"

namespace tensorweave {
namespace {

using namespace gradient_check;  // NOLINT: test helpers

// --- elementwise --------------------------------------------------------------------

TEST(SymbolicGradientsTest, BinaryArithmeticWithBroadcasting) {
  for (const char* op : {"Add", "AddV2", "Sub", "Mul", "Maximum", "Minimum", "SquaredDifference"}) {
    SCOPED_TRACE(op);
    CheckGradients(Binary(op), Random({TensorShape({2, 3}), TensorShape({2, 3})}));
    CheckGradients(Binary(op), Random({TensorShape({2, 3}), TensorShape({3})}));
    CheckGradients(Binary(op), Random({TensorShape({2, 1}), TensorShape({1, 3})}),
                   {1e-6, 1e-6, /*unknown_shapes=*/true});
  }
}

TEST(SymbolicGradientsTest, DivisionAndPower) {
  for (const char* op : {"Div", "RealDiv"}) {
    SCOPED_TRACE(op);
    CheckGradients(Binary(op), Random({TensorShape({2, 3}), TensorShape({3})}, 0.5, 2));
    CheckGradients(Binary(op), Random({TensorShape({2, 3}), TensorShape({})}, 0.5, 2),
                   {1e-6, 1e-6, true});
  }
  CheckGradients(Binary("Pow"), Random({TensorShape({2, 3}), TensorShape({2, 3})}, 0.5, 2));
  CheckGradients(Binary("Pow"), Random({TensorShape({4}), TensorShape({})}, 0.5, 2));
}

TEST(SymbolicGradientsTest, PowGivesZeroExponentGradientForNonPositiveBase) {
  // d(x^y)/dy = x^y log x is taken as 0 where x <= 0, as TensorFlow does.
  GradientGraph g;
  NodeOutput x = g.Placeholder(0, DT_DOUBLE, Known({2}));
  NodeOutput y = g.Placeholder(1, DT_DOUBLE, Known({2}));
  NodeOutput z = g.forward().Op("Pow", {x, y});
  std::vector<NodeOutput> grads;
  ASSERT_TRUE(AddGradients(&g.graph(), &g.refiner(), nullptr, {z}, {y}, nullptr, &grads).ok());
  std::vector<Tensor> out;
  Status status = g.Run({{"x0", DoubleTensor(TensorShape({2}), {-2, 0})},
                         {"x1", DoubleTensor(TensorShape({2}), {2, 3})}},
                        grads, &out);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_EQ(out[0].data<double>()[0], 0);
  EXPECT_EQ(out[0].data<double>()[1], 0);
}

TEST(SymbolicGradientsTest, UnaryFunctions) {
  for (const char* op : {"Neg", "Square", "Exp", "Expm1", "Tanh", "Sigmoid", "Abs", "Identity"}) {
    SCOPED_TRACE(op);
    CheckGradients(Unary(op), Random({TensorShape({2, 3})}));
  }
  for (const char* op : {"Sqrt", "Rsqrt", "Log", "Log1p", "Reciprocal"}) {
    SCOPED_TRACE(op);
    CheckGradients(Unary(op), Random({TensorShape({2, 3})}, 0.5, 2));
  }
}

TEST(SymbolicGradientsTest, SignHasZeroGradient) {
  CheckGradients(Unary("Sign"), Random({TensorShape({5})}, 0.1, 1));
}

TEST(SymbolicGradientsTest, AddNAndCast) {
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        return s.Op("AddN", {GradientArg::List({x[0], x[1], x[0]})});
      },
      Random({TensorShape({3}), TensorShape({3})}));
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        NodeOutput as_float = s.Op("Cast", {x[0]}, {Attr("DstT", DT_FLOAT)});
        return s.Op("Cast", {s.Mul(as_float, as_float)}, {Attr("DstT", DT_DOUBLE)});
      },
      Random({TensorShape({3})}), {1e-3, 1e-3});
}

TEST(SymbolicGradientsTest, SelectRoutesGradientByCondition) {
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        NodeOutput condition = s.Op("Greater", {x[0], x[1]});
        return s.Op("Select", {condition, s.Mul(x[0], x[0]), x[1]});
      },
      Random({TensorShape({6}), TensorShape({6})}));
}

// --- matrix products --------------------------------------------------------------------

TEST(SymbolicGradientsTest, MatMulWithEveryTransposeCombination) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      SCOPED_TRACE(std::to_string(ta) + std::to_string(tb));
      const TensorShape a = ta ? TensorShape({3, 2}) : TensorShape({2, 3});
      const TensorShape b = tb ? TensorShape({4, 3}) : TensorShape({3, 4});
      CheckGradients(
          [ta, tb](GradientScope& s, const Inputs& x) {
            return s.Op("MatMul", {x[0], x[1]}, {Attr("transpose_a", ta), Attr("transpose_b", tb)});
          },
          Random({a, b}));
    }
  }
}

TEST(SymbolicGradientsTest, BatchMatMulWithAdjointsAndBroadcastBatch) {
  for (bool ax : {false, true}) {
    for (bool ay : {false, true}) {
      SCOPED_TRACE(std::to_string(ax) + std::to_string(ay));
      const TensorShape a = ax ? TensorShape({2, 3, 2}) : TensorShape({2, 2, 3});
      const TensorShape b = ay ? TensorShape({4, 3}) : TensorShape({3, 4});
      CheckGradients(
          [ax, ay](GradientScope& s, const Inputs& x) {
            return s.Op("BatchMatMulV2", {x[0], x[1]}, {Attr("adj_x", ax), Attr("adj_y", ay)});
          },
          Random({a, b}));
    }
  }
}

// --- reductions ------------------------------------------------------------------------

ForwardFn Reduce(const std::string& op, std::vector<int32_t> axes, bool keep_dims) {
  return [=](GradientScope& s, const Inputs& x) {
    return s.Op(op, {x[0], s.Int32s(axes)}, {Attr("keep_dims", keep_dims)});
  };
}

TEST(SymbolicGradientsTest, Reductions) {
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    SCOPED_TRACE(op);
    CheckGradients(Reduce(op, {1}, false), Random({TensorShape({2, 3, 4})}));
    CheckGradients(Reduce(op, {0, -1}, true), Random({TensorShape({2, 3, 4})}));
    CheckGradients(Reduce(op, {0, 1, 2}, false), Random({TensorShape({2, 3, 4})}),
                   {1e-6, 1e-6, /*unknown_shapes=*/true});
    CheckGradients(Reduce(op, {-2}, false), Random({TensorShape({3, 4})}), {1e-6, 1e-6, true});
  }
}

TEST(SymbolicGradientsTest, MaxSharesGradientBetweenTies) {
  GradientGraph g;
  NodeOutput x = g.Placeholder(0, DT_DOUBLE, Known({4}));
  NodeOutput y = g.forward().Op("Max", {x, g.forward().Int32s({0})});
  std::vector<NodeOutput> grads;
  ASSERT_TRUE(AddGradients(&g.graph(), &g.refiner(), nullptr, {y}, {x}, nullptr, &grads).ok());
  std::vector<Tensor> out;
  ASSERT_TRUE(g.Run({{"x0", DoubleTensor(TensorShape({4}), {1, 3, 3, 2})}}, grads, &out).ok());
  EXPECT_EQ(out[0].data<double>()[0], 0);
  EXPECT_EQ(out[0].data<double>()[1], 0.5);
  EXPECT_EQ(out[0].data<double>()[2], 0.5);
  EXPECT_EQ(out[0].data<double>()[3], 0);
}

// --- array ops ---------------------------------------------------------------------------

TEST(SymbolicGradientsTest, ShapeChangingOps) {
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        return s.Reshape(x[0], s.Int32s({3, 2}));
      },
      Random({TensorShape({2, 3})}));
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        return s.Op("ExpandDims", {x[0], s.Int32(1)});
      },
      Random({TensorShape({2, 3})}), {1e-6, 1e-6, true});
  CheckGradients([](GradientScope& s, const Inputs& x) { return s.Op("Squeeze", {x[0]}); },
                 Random({TensorShape({2, 1, 3})}));
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        return s.Op("Transpose", {x[0], s.Int32s({2, 0, 1})});
      },
      Random({TensorShape({2, 3, 4})}));
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        return s.Op("BroadcastTo", {x[0], s.Int32s({2, 3, 4})});
      },
      Random({TensorShape({3, 1})}));
}

TEST(SymbolicGradientsTest, PackUnpackConcatSplit) {
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        return s.Op("Pack", {GradientArg::List({x[0], x[1]})}, {Attr("axis", int64_t{1})});
      },
      Random({TensorShape({2, 3}), TensorShape({2, 3})}));
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        Node* pieces =
            s.AddNode("Unpack", {x[0]}, {Attr("num", int64_t{3}), Attr("axis", int64_t{1})});
        NodeOutput a = GradientScope::OutputOf(pieces, 0), c = GradientScope::OutputOf(pieces, 2);
        return s.Mul(a, c);  // piece 1 gets no gradient: the builder feeds it zeros
      },
      Random({TensorShape({2, 3})}));
  for (int32_t axis : {1, -1}) {
    CheckGradients(
        [axis](GradientScope& s, const Inputs& x) {
          return s.Op("ConcatV2", {GradientArg::List({x[0], x[1], x[0]}), s.Int32(axis)});
        },
        Random({TensorShape({2, 3}), TensorShape({2, 1})}), {1e-6, 1e-6, true});
  }
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        Node* pieces = s.AddNode("Split", {s.Int32(1), x[0]}, {Attr("num_split", int64_t{2})});
        return s.Mul(GradientScope::OutputOf(pieces, 0), GradientScope::OutputOf(pieces, 1));
      },
      Random({TensorShape({2, 4})}));
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        Node* pieces = s.AddNode("SplitV", {x[0], s.Int32s({1, 3}), s.Int32(0)},
                                 {Attr("num_split", int64_t{2})});
        return s.Op("Sum", {GradientScope::OutputOf(pieces, 1), s.Int32s({0})});
      },
      Random({TensorShape({4, 2})}));
}

TEST(SymbolicGradientsTest, SliceStridedSliceTile) {
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        return s.Op("Slice", {x[0], s.Int32s({1, 0}), s.Int32s({2, -1})});
      },
      Random({TensorShape({4, 3})}), {1e-6, 1e-6, true});
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        return s.Op("StridedSlice", {x[0], s.Int32s({3, 0}), s.Int32s({0, 3}), s.Int32s({-1, 2})},
                    {Attr("shrink_axis_mask", int64_t{0})});
      },
      Random({TensorShape({4, 3})}));
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        return s.Op("StridedSlice", {x[0], s.Int32s({1}), s.Int32s({2}), s.Int32s({1})},
                    {Attr("shrink_axis_mask", int64_t{1})});
      },
      Random({TensorShape({4, 3})}));
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        return s.Op("Tile", {x[0], s.Int32s({2, 3})});
      },
      Random({TensorShape({2, 2})}), {1e-6, 1e-6, true});
}

TEST(SymbolicGradientsTest, FillGathersTheValueGradient) {
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        return s.Op("Fill", {s.Int32s({2, 3}), x[0]});
      },
      Random({TensorShape({})}));
}

TEST(SymbolicGradientsTest, GatherV2AlongEachAxis) {
  for (int32_t axis : {0, 1, -1}) {
    SCOPED_TRACE(axis);
    CheckGradients(
        [axis](GradientScope& s, const Inputs& x) {
          return s.Op("GatherV2", {x[0], s.Int32s({2, 0, 2}), s.Int32(axis)});
        },
        Random({TensorShape({3, 4, 3})}));
  }
}

// --- nn ops --------------------------------------------------------------------------------

TEST(SymbolicGradientsTest, Activations) {
  // Inputs kept away from the kinks at 0 (and 6 for Relu6).
  std::vector<Tensor> x = {DoubleTensor(TensorShape({2, 4}), {-2, -0.5, 0.5, 1, 3, 7, -1.5, 2.5})};
  for (const char* op : {"Relu", "Relu6", "Elu", "Selu", "Softplus", "LeakyRelu"}) {
    SCOPED_TRACE(op);
    CheckGradients(Unary(op), x);
  }
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    SCOPED_TRACE(op);
    CheckGradients(Unary(op), Random({TensorShape({3, 4})}));
  }
}

TEST(SymbolicGradientsTest, BiasAddAndL2Loss) {
  CheckGradients(Binary("BiasAdd"), Random({TensorShape({2, 3, 4}), TensorShape({4})}));
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        return s.Op("BiasAdd", {x[0], x[1]}, {Attr("data_format", std::string("NCHW"))});
      },
      Random({TensorShape({2, 3, 2, 2}), TensorShape({3})}));
  CheckGradients(Unary("L2Loss"), Random({TensorShape({2, 3})}));
}

// Labels that are distributions (rows summing to 1), which the kernel's
// backprop output (softmax - labels) takes them to be.
NodeOutput Distributions(GradientScope& s, NodeOutput x) {
  NodeOutput exp = s.Op("Exp", {x});
  return s.Op("RealDiv", {exp, s.Sum(exp, s.Int32s({-1}), /*keep_dims=*/true)});
}

TEST(SymbolicGradientsTest, SoftmaxCrossEntropyLosses) {
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        Node* xent = s.AddNode("SoftmaxCrossEntropyWithLogits", {x[0], Distributions(s, x[1])});
        return GradientScope::OutputOf(xent, 0);
      },
      Random({TensorShape({3, 4}), TensorShape({3, 4})}));
  // The backprop output's own gradient (the second-derivative path) reaches
  // the logits; labels get only the loss's gradient, as in TensorFlow.
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        NodeOutput labels = s.Const(DoubleTensor(TensorShape({2, 3}), {0.2, 0.3, 0.5, 1, 0, 0}));
        Node* xent = s.AddNode("SoftmaxCrossEntropyWithLogits", {x[0], labels});
        NodeOutput backprop = GradientScope::OutputOf(xent, 1);
        return s.Op("AddV2", {s.Mul(backprop, backprop),
                              s.Op("ExpandDims", {GradientScope::OutputOf(xent, 0), s.Int32(-1)})});
      },
      Random({TensorShape({2, 3})}));
  CheckGradients(
      [](GradientScope& s, const Inputs& x) {
        Node* xent = s.AddNode("SparseSoftmaxCrossEntropyWithLogits", {x[0], s.Int32s({3, 0, 1})});
        return GradientScope::OutputOf(xent, 0);
      },
      Random({TensorShape({3, 4})}));
}

TEST(SymbolicGradientsTest, Conv2DAndPooling) {
  const std::vector<int64_t> ones = {1, 1, 1, 1};
  auto list = [](const std::vector<int64_t>& values) {
    AttrValue value;
    for (int64_t v : values) value.mutable_list()->add_i(v);
    return value;
  };
  for (const char* padding : {"SAME", "VALID"}) {
    SCOPED_TRACE(padding);
    CheckGradients(
        [&](GradientScope& s, const Inputs& x) {
          return s.Op("Conv2D", {x[0], x[1]},
                      {{"strides", list({1, 2, 1, 1})}, Attr("padding", std::string(padding))});
        },
        Random({TensorShape({1, 5, 4, 2}), TensorShape({3, 2, 2, 3})}, -1, 1, DT_FLOAT),
        {2e-2, 1e-2});
    for (const char* pool : {"MaxPool", "AvgPool"}) {
      SCOPED_TRACE(pool);
      CheckGradients(
          [&](GradientScope& s, const Inputs& x) {
            return s.Op(pool, {x[0]},
                        {{"ksize", list({1, 2, 2, 1})},
                         {"strides", list({1, 2, 1, 1})},
                         Attr("padding", std::string(padding))});
          },
          Random({TensorShape({1, 4, 3, 2})}, -1, 1, DT_FLOAT, 3), {2e-2, 1e-3});
    }
  }
}

}  // namespace
}  // namespace tensorweave
