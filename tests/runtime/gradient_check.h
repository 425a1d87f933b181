// Shared by the symbolic-gradient tests: a graph with placeholders run in a
// DirectSession, and CheckGradients, which compares the gradients
// AddSymbolicGradients builds with central differences of
// loss = sum(w * y) for fixed random weights w.
//
//   CheckGradients([](GradientScope& s, const Inputs& x) { return s.Op("Tanh", {x[0]}); },
//                  Random({TensorShape({2, 3})}));
#ifndef TENSORWEAVE_TESTS_RUNTIME_GRADIENT_CHECK_H_
#define TENSORWEAVE_TESTS_RUNTIME_GRADIENT_CHECK_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "runtime/common_runtime/session.h"
#include "runtime/gradients/gradient_scope.h"
#include "runtime/gradients/gradients.h"

namespace tensorweave {
namespace gradient_check {

using Inputs = std::vector<NodeOutput>;
// Builds y from the placeholders.
using ForwardFn = std::function<NodeOutput(GradientScope&, const Inputs&)>;

inline PartialTensorShape Known(std::initializer_list<int64_t> dims) {
  return PartialTensorShape::FromShape(TensorShape(dims));
}

inline std::string TensorName(const NodeOutput& tensor) {
  return tensor.node->name() + ":" + std::to_string(tensor.index);
}

inline Tensor RandomTensor(DataType dtype, const TensorShape& shape, std::mt19937* rng,
                           double low = -1, double high = 1) {
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

inline double Element(const Tensor& tensor, int64_t i) {
  return tensor.dtype() == DT_DOUBLE ? tensor.data<double>()[i] : tensor.data<float>()[i];
}

inline void SetElement(Tensor* tensor, int64_t i, double value) {
  if (tensor->dtype() == DT_DOUBLE) {
    tensor->data<double>()[i] = value;
  } else {
    tensor->data<float>()[i] = static_cast<float>(value);
  }
}

inline Tensor DoubleTensor(const TensorShape& shape, const std::vector<double>& values) {
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
inline void CheckGradients(const ForwardFn& forward, const std::vector<Tensor>& x_values,
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
inline std::vector<Tensor> Random(const std::vector<TensorShape>& shapes, double low = -1,
                                  double high = 1, DataType dtype = DT_DOUBLE, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::vector<Tensor> values;
  for (const TensorShape& shape : shapes)
    values.push_back(RandomTensor(dtype, shape, &rng, low, high));
  return values;
}

inline ForwardFn Unary(const std::string& op) {
  return [op](GradientScope& s, const Inputs& x) { return s.Op(op, {x[0]}); };
}

inline ForwardFn Binary(const std::string& op) {
  return [op](GradientScope& s, const Inputs& x) { return s.Op(op, {x[0], x[1]}); };
}

}  // namespace gradient_check
}  // namespace tensorweave

#endif  // TENSORWEAVE_TESTS_RUNTIME_GRADIENT_CHECK_H_
