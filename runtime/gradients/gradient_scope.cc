#include "runtime/gradients/gradient_scope.h"

#include "runtime/framework/str_util.h"
#include "runtime/graph/node_builder.h"

namespace tensorweave {

GradientScope::GradientScope(Graph* graph, ShapeRefiner* refiner, std::string prefix)
    : graph_(graph), refiner_(refiner), prefix_(std::move(prefix)) {}

void GradientScope::UpdateStatus(const Status& status) {
  if (status_.ok() && !status.ok()) status_ = status;
}

std::string GradientScope::UniqueName(const std::string& type) {
  const std::string base = StrCat(prefix_, "/", type);
  int& count = name_counts_[base];
  for (;; ++count) {
    std::string candidate = count == 0 ? base : StrCat(base, "_", count);
    if (graph_->FindNode(candidate) == nullptr) {
      ++count;
      return candidate;
    }
  }
}

Node* GradientScope::AddNode(const std::string& type, const std::vector<GradientArg>& args,
                             const GradientAttrs& attrs) {
  if (!status_.ok()) return nullptr;
  BuildNodeInputs inputs;
  for (const GradientArg& arg : args) {
    for (const NodeOutput& tensor : arg.tensors) {
      if (IsNoGradient(tensor)) {
        // A gradient function fed an absent gradient to an op: a bug in the
        // gradient function, not in the caller's graph.
        status_ = errors::Internal("Gradient node ", type, " under ", prefix_,
                                   " was given a missing tensor");
        return nullptr;
      }
    }
    inputs.arguments.push_back({arg.tensors, arg.is_list});
  }
  bool has_data_input = false;
  for (const GradientArg& arg : args) has_data_input = has_data_input || !arg.tensors.empty();
  if (!has_data_input && frame_anchor_ != nullptr) inputs.control_inputs.push_back(frame_anchor_);
  NodeDef def;
  def.set_name(UniqueName(type));
  def.set_op(type);
  for (const auto& attr : attrs) (*def.mutable_attr())[attr.first] = attr.second;
  Node* node = nullptr;
  status_ = BuildNode(def, inputs, graph_, refiner_, &node);
  return status_.ok() ? node : nullptr;
}

NodeOutput GradientScope::Op(const std::string& type, const std::vector<GradientArg>& args,
                             const GradientAttrs& attrs) {
  return OutputOf(AddNode(type, args, attrs), 0);
}

NodeOutput GradientScope::Const(const Tensor& value) {
  AttrValue tensor;
  SetAttrValue(value, &tensor);
  return Op("Const", {}, {Attr("dtype", value.dtype()), {"value", tensor}});
}

NodeOutput GradientScope::Int32s(const std::vector<int32_t>& values) {
  Tensor tensor(DT_INT32, TensorShape({static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) tensor.data<int32_t>()[i] = values[i];
  return Const(tensor);
}

NodeOutput GradientScope::Int32(int32_t value) {
  Tensor tensor(DT_INT32, TensorShape({}));
  tensor.data<int32_t>()[0] = value;
  return Const(tensor);
}

NodeOutput GradientScope::Scalar(double value, DataType dtype) {
  Tensor tensor;
  switch (dtype) {
    case DT_FLOAT:
      tensor = Tensor(DT_FLOAT, TensorShape({}));
      tensor.data<float>()[0] = static_cast<float>(value);
      return Const(tensor);
    case DT_DOUBLE:
      tensor = Tensor(DT_DOUBLE, TensorShape({}));
      tensor.data<double>()[0] = value;
      return Const(tensor);
    case DT_INT32:
      return Int32(static_cast<int32_t>(value));
    case DT_INT64:
      tensor = Tensor(DT_INT64, TensorShape({}));
      tensor.data<int64_t>()[0] = static_cast<int64_t>(value);
      return Const(tensor);
    default: {
      // Other types (half, bfloat16, ...) through a Cast, which knows them.
      NodeOutput as_double = Scalar(value, DT_DOUBLE);
      return Op("Cast", {as_double}, {Attr("DstT", dtype)});
    }
  }
}

NodeOutput GradientScope::Shape(NodeOutput x, DataType out_type) {
  return Op("Shape", {x}, {Attr("out_type", out_type)});
}

NodeOutput GradientScope::Reshape(NodeOutput x, NodeOutput shape) {
  return Op("Reshape", {x, shape});
}

NodeOutput GradientScope::Sum(NodeOutput x, NodeOutput axes, bool keep_dims) {
  return Op("Sum", {x, axes}, {Attr("keep_dims", keep_dims)});
}

DataType GradientScope::DType(const NodeOutput& tensor) {
  return BaseType(tensor.node->output_type(tensor.index));
}

PartialTensorShape GradientScope::KnownShape(const NodeOutput& tensor) const {
  PartialTensorShape shape;
  if (!refiner_->GetShape(tensor.node, tensor.index, &shape).ok()) return PartialTensorShape();
  return shape;
}

std::pair<std::string, AttrValue> CopiedAttr(const Node& node, const std::string& name) {
  const AttrValue* value = FindNodeAttr(node.def(), name);
  return {name, value == nullptr ? AttrValue() : *value};
}

bool ConstantValue(const NodeOutput& tensor, Tensor* value) {
  if (tensor.node == nullptr || tensor.node->type_string() != "Const") return false;
  return GetNodeAttr(tensor.node->def(), "value", value).ok();
}

}  // namespace tensorweave
