// AddSymbolicGradients and the gradient functions: every gradient is
// checked against central differences of loss = sum(w * y) for fixed
// random weights w, run in a DirectSession (float64 wherever the op has a
// float64 kernel). Plus the builder's own rules: names under the prefix,
// summing over several paths, unreachable inputs, ops without gradients,
// and the graph left as it was on error.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "runtime/common_runtime/session.h"
#include "runtime/gradients/gradient_registry.h"
#include "runtime/gradients/gradients.h"
#include "runtime/graph/graph_def_import.h"

namespace tensorweave {
namespace {

using Inputs = std::vector<NodeOutput>;
// Builds y from the placeholders.
using ForwardFn = std::function<NodeOutput(GradientScope&, const Inputs&)>;

PartialTensorShape Known(std::initializer_list<int64_t> dims) {
  return PartialTensorShape::FromShape(TensorShape(dims));
}

std::string TensorName(const NodeOutput& tensor) {
  return tensor.node->name() + ":" + std::to_string(tensor.index);
}

Tensor RandomTensor(DataType dtype, const TensorShape& shape, std::mt19937* rng, double low = -1,
                    double high = 1) {
  Tensor tensor(dtype, shape);
  std::uniform_real_distribution<double> uniform(low, high);
  for (int64_t i = 0; i < tensor.NumElements(); ++i) {
    if (dtype == DT_DOUBLE) {
      tensor.data<double>()[i] = uniform(*rng);
    } else {
      tensor.data<float>()[i] = static_cast<float>(uniform(*rng));
    }
  }
  return tensor;
}

double Element(const Tensor& tensor, int64_t i) {
  return tensor.dtype() == DT_DOUBLE ? tensor.data<double>()[i] : tensor.data<float>()[i];
}

void SetElement(Tensor* tensor, int64_t i, double value) {
  if (tensor->dtype() == DT_DOUBLE) {
    tensor->data<double>()[i] = value;
  } else {
    tensor->data<float>()[i] = static_cast<float>(value);
  }
}

Tensor DoubleTensor(const TensorShape& shape, const std::vector<double>& values) {
  Tensor tensor(DT_DOUBLE, shape);
  for (size_t i = 0; i < values.size(); ++i) tensor.data<double>()[i] = values[i];
  return tensor;
}

// One graph under test with a session per run.
class GradientGraph {
 public:
  GradientGraph()
      : graph_(OpRegistry::Global()), refiner_(graph_), forward_(&graph_, &refiner_, "f") {}

  Graph& graph() { return graph_; }
  ShapeRefiner& refiner() { return refiner_; }
  GradientScope& forward() { return forward_; }

  // A placeholder named x<i>, of `shape` (known) or of unknown shape.
  NodeOutput Placeholder(int i, DataType dtype, const PartialTensorShape& shape) {
    NodeDef def;
    def.set_name("x" + std::to_string(i));
    def.set_op("Placeholder");
    SetAttrValue(dtype, &(*def.mutable_attr())["dtype"]);
    SetAttrValue(shape, &(*def.mutable_attr())["shape"]);
    Node* node = nullptr;
    Status status = graph_.AddNode(def, &node);
    EXPECT_TRUE(status.ok()) << status;
    status = refiner_.AddNode(node);
    EXPECT_TRUE(status.ok()) << status;
    return {node, 0};
  }

  Status Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
             const std::vector<NodeOutput>& fetches, std::vector<Tensor>* outputs) {
    GraphDef def;
    graph_.ToGraphDef(&def);
    std::unique_ptr<Session> session;
    TW_RETURN_IF_ERROR(NewSession(SessionOptions(), &session));
    TW_RETURN_IF_ERROR(session->Create(def));
    std::vector<std::string> names;
    for (const NodeOutput& fetch : fetches) names.push_back(TensorName(fetch));
    return session->Run(feeds, names, {}, outputs);
  }

 private:
  Graph graph_;
  ShapeRefiner refiner_;
  GradientScope forward_;
};

struct CheckOptions {
  double tolerance = 1e-6;
  double step = 1e-6;
  // Placeholders of unknown shape, so gradients take their run-time paths.
  bool unknown_shapes = false;
};

// Builds y = forward(x...), adds the gradients of sum(w * y) with respect
// to each x and compares them with central differences.
void CheckGradients(const ForwardFn& forward, const std::vector<Tensor>& x_values,
                    const CheckOptions& options = CheckOptions()) {
  GradientGraph g;
  Inputs xs;
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < x_values.size(); ++i) {
    const PartialTensorShape shape = options.unknown_shapes
                                         ? PartialTensorShape()
                                         : PartialTensorShape::FromShape(x_values[i].shape());
    xs.push_back(g.Placeholder(static_cast<int>(i), x_values[i].dtype(), shape));
    feeds.push_back({xs.back().node->name(), x_values[i]});
  }
  NodeOutput y = forward(g.forward(), xs);
  ASSERT_TRUE(g.forward().status().ok()) << g.forward().status();

  std::vector<Tensor> forward_out;
  Status status = g.Run(feeds, {y}, &forward_out);
  ASSERT_TRUE(status.ok()) << status;
  std::mt19937 rng(7);
  const Tensor weights = RandomTensor(forward_out[0].dtype(), forward_out[0].shape(), &rng);
  auto loss = [&](const std::vector<Tensor>& outputs) {
    double total = 0;
    for (int64_t i = 0; i < weights.NumElements(); ++i) {
      total += Element(weights, i) * Element(outputs[0], i);
    }
    return total;
  };

  GradientScope scope(&g.graph(), &g.refiner(), "gradients");
  NodeOutput w = scope.Const(weights);
  std::vector<NodeOutput> grads;
  status = AddSymbolicGradients(scope, {y}, xs, {w}, &grads);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(grads.size(), xs.size());

  std::vector<NodeOutput> fetches;
  for (const NodeOutput& grad : grads) {
    ASSERT_FALSE(IsNoGradient(grad));
    fetches.push_back(grad);
  }
  std::vector<Tensor> analytic;
  status = g.Run(feeds, fetches, &analytic);
  ASSERT_TRUE(status.ok()) << status;

  for (size_t i = 0; i < x_values.size(); ++i) {
    ASSERT_EQ(analytic[i].shape().dim_sizes(), x_values[i].shape().dim_sizes()) << "x" << i;
    for (int64_t e = 0; e < x_values[i].NumElements(); ++e) {
      std::vector<double> losses;
      for (double sign : {1.0, -1.0}) {
        auto shifted = feeds;
        Tensor value = x_values[i].DeepCopy();
        SetElement(&value, e, Element(value, e) + sign * options.step);
        shifted[i].second = value;
        std::vector<Tensor> out;
        status = g.Run(shifted, {y}, &out);
        ASSERT_TRUE(status.ok()) << status;
        losses.push_back(loss(out));
      }
      const double numeric = (losses[0] - losses[1]) / (2 * options.step);
      const double got = Element(analytic[i], e);
      EXPECT_NEAR(got, numeric, options.tolerance * std::max(1.0, std::fabs(numeric)))
          << "d loss / d x" << i << "[" << e << "]";
    }
  }
}

// Inputs of the given shapes, random in [low, high].
std::vector<Tensor> Random(const std::vector<TensorShape>& shapes, double low = -1, double high = 1,
                           DataType dtype = DT_DOUBLE, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::vector<Tensor> values;
  for (const TensorShape& shape : shapes)
    values.push_back(RandomTensor(dtype, shape, &rng, low, high));
  return values;
}

ForwardFn Unary(const std::string& op) {
  return [op](GradientScope& s, const Inputs& x) { return s.Op(op, {x[0]}); };
}

ForwardFn Binary(const std::string& op) {
  return [op](GradientScope& s, const Inputs& x) { return s.Op(op, {x[0], x[1]}); };
}

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
NodeOutput ImportLoop(GradientScope& scope, int iterations, int parallel_iterations = 10) {
  std::string text = kLoop;
  text.replace(text.find("ITERATIONS"), std::string("ITERATIONS").size(),
               std::to_string(iterations));
  GraphDef def;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def));
  for (NodeDef& node : *def.mutable_node()) {
    if (node.op() == "Enter") {
      (*node.mutable_attr())["parallel_iterations"].set_i(parallel_iterations);
    }
  }
  ImportGraphDefOptions options;
  options.allow_inputs_to_existing_nodes = true;
  options.prefix = "loop";
  scope.UpdateStatus(ImportGraphDef(options, def, scope.graph(), scope.refiner()));
  if (!scope.status().ok()) return NoGradient();
  return {scope.graph()->FindNode("loop/exit_v"), 0};
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
