// GradientScope: adds the nodes of a gradient computation to a graph, all
// under one name prefix, the way TensorFlow's C++ gradient functions build on
// a Scope. The first error sticks: later calls add nothing and return
// NoGradient(), so a gradient function builds its nodes without checking each
// one and returns scope.status() at the end.
//
//   GradientScope scope(&graph, &refiner, "gradients");
//   NodeOutput two = scope.Scalar(2.0, scope.DType(x));
//   NodeOutput dx = scope.Op("Mul", {dy, scope.Op("Mul", {two, x})});
//   TW_RETURN_IF_ERROR(scope.status());
//
// Nodes are named prefix/<op type>, then prefix/<op type>_1, ... (TensorFlow
// names them after the C++ op class; we use the op type itself).
#ifndef TENSORWEAVE_GRADIENTS_GRADIENT_SCOPE_H_
#define TENSORWEAVE_GRADIENTS_GRADIENT_SCOPE_H_

#include <initializer_list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/framework/node_def_util.h"
#include "runtime/framework/status.h"
#include "runtime/framework/tensor.h"
#include "runtime/framework/tensor_shape.h"
#include "runtime/graph/algorithm.h"  // UniqueScopeName, ScopeNameInUse
#include "runtime/graph/graph.h"
#include "runtime/graph/shape_refiner.h"

namespace tensorweave {

// The absent gradient: an output no gradient flows to (TensorFlow's
// NoGradient(), an Output with no node and index -1).
inline NodeOutput NoGradient() { return NodeOutput{nullptr, -1}; }
inline bool IsNoGradient(const NodeOutput& tensor) { return tensor.node == nullptr; }

// One input argument of an op: a single tensor, or a list for list args
// (AddN's inputs, Pack's values, ConcatV2's values).
struct GradientArg {
  GradientArg(NodeOutput tensor) : tensors{tensor} {}  // NOLINT(runtime/explicit)
  static GradientArg List(std::vector<NodeOutput> tensors) {
    GradientArg arg(NoGradient());
    arg.tensors = std::move(tensors);
    arg.is_list = true;
    return arg;
  }
  std::vector<NodeOutput> tensors;
  bool is_list = false;
};

using GradientAttrs = std::vector<std::pair<std::string, AttrValue>>;

template <typename T>
std::pair<std::string, AttrValue> Attr(const std::string& name, const T& value) {
  std::pair<std::string, AttrValue> attr{name, AttrValue()};
  SetAttrValue(value, &attr.second);
  return attr;
}

// The attr `name` of `node`, copied (for gradients that build their op with
// the forward op's strides, padding, data_format, ...). Empty when absent.
std::pair<std::string, AttrValue> CopiedAttr(const Node& node, const std::string& name);

class GradientScope {
 public:
  // `graph` and `refiner` (not owned) get the new nodes; `prefix` is used as
  // given (callers make it unique with UniqueScopeName).
  GradientScope(Graph* graph, ShapeRefiner* refiner, std::string prefix);

  const Status& status() const { return status_; }
  const std::string& prefix() const { return prefix_; }
  Graph* graph() const { return graph_; }
  ShapeRefiner* refiner() const { return refiner_; }
  // Later nodes go under `prefix` (for sub-scopes such as a loop's gradient).
  void set_prefix(std::string prefix) { prefix_ = std::move(prefix); }
  // While set, every node built without data inputs (a constant) gets a
  // control input from `anchor`, so it runs in the anchor's loop frame once
  // per iteration (as TensorFlow's while-loop builders anchor them). Null
  // clears it.
  void set_frame_anchor(Node* anchor) { frame_anchor_ = anchor; }
  Node* frame_anchor() const { return frame_anchor_; }

  // Records `status` unless an error is recorded already.
  void UpdateStatus(const Status& status);

  // Adds an op of `type` fed by `args` (one per input arg of the op), with
  // `attrs`; type and length attrs the inputs determine are filled in. Null
  // after an error.
  Node* AddNode(const std::string& type, const std::vector<GradientArg>& args,
                const GradientAttrs& attrs = {});
  // AddNode's output 0 (NoGradient() after an error).
  NodeOutput Op(const std::string& type, const std::vector<GradientArg>& args,
                const GradientAttrs& attrs = {});
  // Output `index` of a node AddNode returned (NoGradient() for null).
  static NodeOutput OutputOf(Node* node, int index) {
    return node == nullptr ? NoGradient() : NodeOutput{node, index};
  }

  // Constants.
  NodeOutput Const(const Tensor& value);
  NodeOutput Int32s(const std::vector<int32_t>& values);  // a vector
  NodeOutput Int32(int32_t value);                        // a scalar
  // A scalar of a floating or integer `dtype` holding `value`.
  NodeOutput Scalar(double value, DataType dtype);

  // Shortcuts for the ops gradients use most.
  NodeOutput Shape(NodeOutput x, DataType out_type = DT_INT32);
  NodeOutput Reshape(NodeOutput x, NodeOutput shape);
  NodeOutput Sum(NodeOutput x, NodeOutput axes, bool keep_dims = false);
  NodeOutput Mul(NodeOutput x, NodeOutput y) { return Op("Mul", {x, y}); }
  NodeOutput Neg(NodeOutput x) { return Op("Neg", {x}); }
  NodeOutput ZerosLike(NodeOutput x) { return Op("ZerosLike", {x}); }

  // The dtype of `tensor` (ref types as their base type).
  static DataType DType(const NodeOutput& tensor);
  // The shape the refiner knows for `tensor` (unknown when it knows none).
  PartialTensorShape KnownShape(const NodeOutput& tensor) const;

 private:
  std::string UniqueName(const std::string& type);

  Graph* graph_;
  ShapeRefiner* refiner_;
  std::string prefix_;
  Status status_;
  Node* frame_anchor_ = nullptr;
  std::unordered_map<std::string, int> name_counts_;
};

// The value of `tensor` when a Const node produces it; false otherwise.
bool ConstantValue(const NodeOutput& tensor, Tensor* value);

}  // namespace tensorweave

#endif  // TENSORWEAVE_GRADIENTS_GRADIENT_SCOPE_H_
