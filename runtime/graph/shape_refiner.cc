#include "runtime/graph/shape_refiner.h"

#include <utility>

#include "runtime/framework/node_def_util.h"
#include "runtime/framework/shape_inference.h"

namespace tensorweave {
namespace {

// The input whose handle data output `index` of `node` carries unchanged, or
// -1: ops that pass a resource or variant handle through as it is.
int ForwardedHandleInput(const Node& node, int index) {
  const std::string& op = node.type_string();
  if (op == "IdentityN") return index;
  if (op == "Switch" || op == "RefSwitch") return 0;
  if (index != 0) return -1;
  static const char* const kForwarding[] = {
      "Identity",      "Snapshot",         "Enter",        "RefEnter",       "Exit", "RefExit",
      "NextIteration", "RefNextIteration", "StopGradient", "PreventGradient"};
  for (const char* forwarding : kForwarding) {
    if (op == forwarding) return 0;
  }
  return -1;
}

bool CarriesHandleData(DataType dtype) {
  return BaseType(dtype) == DT_RESOURCE || BaseType(dtype) == DT_VARIANT;
}

// VarHandleOp's variable: its dtype and shape attrs.
Status VariableHandleData(const Node& node, ShapeRefiner::HandleData* data) {
  DataType dtype = DT_INVALID;
  PartialTensorShape shape;
  TW_RETURN_IF_ERROR(GetNodeAttr(node.def(), "dtype", &dtype));
  TW_RETURN_IF_ERROR(GetNodeAttr(node.def(), "shape", &shape));
  data->set_is_set(true);
  CppShapeInferenceResult::HandleShapeAndType* entry = data->add_shape_and_type();
  shape.AsProto(entry->mutable_shape());
  entry->set_dtype(static_cast<tensorweave::DataType>(dtype));
  return Status::OK();
}

}  // namespace

Status ShapeRefiner::AddNode(const Node* node) {
  if (require_shape_fns_ && !node->op_def().shape_fn) {
    return errors::InvalidArgument("No shape inference function exists for op '",
                                   node->type_string(), "' of node '", node->name(), "'");
  }
  const int num_inputs = node->num_inputs();
  std::vector<PartialTensorShape> input_shapes(num_inputs);
  std::vector<Tensor> constants(num_inputs);
  std::vector<const Tensor*> input_values(num_inputs, nullptr);
  for (const Edge* edge : node->in_edges()) {
    if (edge->IsControlEdge()) continue;
    const Node* src = edge->src();
    const int slot = edge->dst_input();
    input_shapes[slot] = Known(src, edge->src_output());
    // A Const's value is in its attrs; shape functions that read a shape
    // argument (Reshape, Fill) need it. A value that does not parse is left
    // unknown: the kernel reports it when it runs.
    if (src->type_string() == "Const" && GetNodeAttr(src->def(), "value", &constants[slot]).ok()) {
      input_values[slot] = &constants[slot];
    }
  }
  std::vector<PartialTensorShape> outputs;
  TW_RETURN_IF_ERROR(
      shape_inference::RunShapeFunction(node->def(), node->op_def(), std::move(input_shapes),
                                        std::move(input_values), node->num_outputs(), &outputs));
  std::vector<HandleData> handles;
  TW_RETURN_IF_ERROR(InferHandleData(node, &handles, &outputs));
  if (static_cast<int>(shapes_.size()) <= node->id()) shapes_.resize(node->id() + 1);
  shapes_[node->id()] = std::move(outputs);
  if (!handles.empty() || node->id() < static_cast<int>(handle_data_.size())) {
    if (static_cast<int>(handle_data_.size()) <= node->id()) handle_data_.resize(node->id() + 1);
    handle_data_[node->id()] = std::move(handles);
  }
  return Status::OK();
}

Status ShapeRefiner::InferHandleData(const Node* node, std::vector<HandleData>* handles,
                                     std::vector<PartialTensorShape>* outputs) const {
  const std::string& op = node->type_string();
  if (op == "VarHandleOp") {
    handles->resize(1);
    return VariableHandleData(*node, &(*handles)[0]);
  }
  // Most graphs hold no handle data at all: nothing to look up then.
  if (handle_data_.empty()) return Status::OK();
  // What each data input's handle holds, by input slot (null: nothing).
  std::vector<const HandleData*> inputs(node->num_inputs(), nullptr);
  bool any_input = false;
  for (const Edge* edge : node->in_edges()) {
    if (edge->IsControlEdge()) continue;
    inputs[edge->dst_input()] = FindHandle(edge->src(), edge->src_output());
    any_input = any_input || inputs[edge->dst_input()] != nullptr;
  }
  if (!any_input) return Status::OK();
  if (op == "ReadVariableOp" && inputs[0] != nullptr && inputs[0]->shape_and_type_size() == 1) {
    // The value read has the variable's dtype and shape, as TensorFlow's
    // shape function for ReadVariableOp says.
    const CppShapeInferenceResult::HandleShapeAndType& variable = inputs[0]->shape_and_type(0);
    DataType dtype = DT_INVALID;
    TW_RETURN_IF_ERROR(GetNodeAttr(node->def(), "dtype", &dtype));
    if (variable.dtype() != static_cast<tensorweave::DataType>(dtype)) {
      return errors::InvalidArgument(
          "Node '", node->name(), "': Trying to read variable with wrong dtype. Expected ",
          DataTypeString(static_cast<DataType>(variable.dtype())), " got ", DataTypeString(dtype));
    }
    PartialTensorShape shape, merged;
    if (PartialTensorShape::FromProto(variable.shape(), &shape).ok() &&
        (*outputs)[0].MergeWith(shape, &merged).ok()) {
      (*outputs)[0] = std::move(merged);
    }
    return Status::OK();
  }
  for (int i = 0; i < node->num_outputs(); ++i) {
    if (!CarriesHandleData(node->output_type(i))) continue;
    int from = ForwardedHandleInput(*node, i);
    if (op == "Merge" || op == "RefMerge") {
      // The first input that knows something; TensorFlow's Merge also keeps
      // one input's handle data when they differ.
      for (int j = 0; j < node->num_inputs() && from < 0; ++j) {
        if (inputs[j] != nullptr) from = j;
      }
    }
    if (from < 0 || from >= node->num_inputs() || inputs[from] == nullptr) continue;
    handles->resize(node->num_outputs());
    (*handles)[i] = *inputs[from];
  }
  return Status::OK();
}

Status ShapeRefiner::SetShape(const Node* node, int index, const PartialTensorShape& shape) {
  TW_RETURN_IF_ERROR(CheckOutput(node, index));
  const PartialTensorShape known = Known(node, index);
  PartialTensorShape merged;
  if (!known.MergeWith(shape, &merged).ok()) {
    return errors::InvalidArgument("Shape ", shape.DebugString(), " for output ", index, " of '",
                                   node->name(), "' contradicts the known shape ",
                                   known.DebugString());
  }
  if (static_cast<int>(shapes_.size()) <= node->id()) shapes_.resize(node->id() + 1);
  std::vector<PartialTensorShape>& outputs = shapes_[node->id()];
  if (static_cast<int>(outputs.size()) < node->num_outputs()) outputs.resize(node->num_outputs());
  outputs[index] = std::move(merged);
  return Status::OK();
}

Status ShapeRefiner::GetShape(const Node* node, int index, PartialTensorShape* shape) const {
  TW_RETURN_IF_ERROR(CheckOutput(node, index));
  *shape = Known(node, index);
  return Status::OK();
}

void ShapeRefiner::RemoveNode(const Node* node) {
  if (node != nullptr && node->id() >= 0 && node->id() < static_cast<int>(shapes_.size())) {
    shapes_[node->id()].clear();
  }
  if (node != nullptr && node->id() >= 0 && node->id() < static_cast<int>(handle_data_.size())) {
    handle_data_[node->id()].clear();
  }
}

Status ShapeRefiner::SetHandleData(const Node* node, int index, const HandleData& data) {
  TW_RETURN_IF_ERROR(CheckOutput(node, index));
  for (const CppShapeInferenceResult::HandleShapeAndType& entry : data.shape_and_type()) {
    PartialTensorShape shape;
    const Status valid = PartialTensorShape::FromProto(entry.shape(), &shape);
    if (!valid.ok()) {
      return errors::InvalidArgument("Handle data for output ", index, " of '", node->name(),
                                     "': ", valid.message());
    }
  }
  if (static_cast<int>(handle_data_.size()) <= node->id()) handle_data_.resize(node->id() + 1);
  std::vector<HandleData>& outputs = handle_data_[node->id()];
  if (static_cast<int>(outputs.size()) < node->num_outputs()) outputs.resize(node->num_outputs());
  outputs[index] = data;
  outputs[index].set_is_set(true);
  return Status::OK();
}

Status ShapeRefiner::GetHandleData(const Node* node, int index, HandleData* data) const {
  TW_RETURN_IF_ERROR(CheckOutput(node, index));
  const HandleData* known = FindHandle(node, index);
  *data = known != nullptr ? *known : HandleData();
  return Status::OK();
}

Status ShapeRefiner::CheckOutput(const Node* node, int index) const {
  if (node == nullptr || graph_.FindNodeId(node->id()) != node || !node->IsOp()) {
    return errors::InvalidArgument("The output's operation is not in this graph");
  }
  if (index < 0 || index >= node->num_outputs()) {
    return errors::OutOfRange("Operation '", node->name(), "' has ", node->num_outputs(),
                              " outputs; there is no output ", index);
  }
  return Status::OK();
}

PartialTensorShape ShapeRefiner::Known(const Node* node, int index) const {
  const int id = node->id();
  if (id < 0 || id >= static_cast<int>(shapes_.size()) ||
      index >= static_cast<int>(shapes_[id].size())) {
    return PartialTensorShape();
  }
  return shapes_[id][index];
}

const ShapeRefiner::HandleData* ShapeRefiner::FindHandle(const Node* node, int index) const {
  const int id = node->id();
  if (id < 0 || id >= static_cast<int>(handle_data_.size()) ||
      index >= static_cast<int>(handle_data_[id].size()) || !handle_data_[id][index].is_set()) {
    return nullptr;
  }
  return &handle_data_[id][index];
}

}  // namespace tensorweave
