// Reading operations: names, inputs, outputs, consumers, control edges,
// attributes and NodeDefs. Operations are immutable once added, so these
// read the Node without taking the graph's lock (as TensorFlow's do).
#include <algorithm>
#include <cstring>

#include "c_api/c_api_internal.h"
#include "runtime/framework/node_def_util.h"

using tensorweave::AttrValue;
using tensorweave::Edge;
using tensorweave::Node;
using tensorweave::Status;
namespace errors = tensorweave::errors;
namespace c_api = tensorweave::c_api;

namespace {

// Applies `visit` to every edge of `edges` that joins two operations (not
// SOURCE or SINK) and passes `keep`; returns how many did.
template <typename Keep, typename Visit>
int ForEachEdge(const std::vector<const Edge*>& edges, Keep keep, Visit visit) {
  int count = 0;
  for (const Edge* edge : edges) {
    if (!edge->src()->IsOp() || !edge->dst()->IsOp() || !keep(edge)) continue;
    visit(edge, count);
    ++count;
  }
  return count;
}

bool IsControl(const Edge* edge) { return edge->IsControlEdge(); }

// The element kind of a list attr, from its values or, when it is empty,
// from the op's declaration.
TF_AttrType ListKind(const Node* node, const char* attr_name, const AttrValue::ListValue& list) {
  if (list.s_size() > 0) return TF_ATTR_STRING;
  if (list.i_size() > 0) return TF_ATTR_INT;
  if (list.f_size() > 0) return TF_ATTR_FLOAT;
  if (list.b_size() > 0) return TF_ATTR_BOOL;
  if (list.type_size() > 0) return TF_ATTR_TYPE;
  if (list.shape_size() > 0) return TF_ATTR_SHAPE;
  if (list.tensor_size() > 0) return TF_ATTR_TENSOR;
  if (list.func_size() > 0) return TF_ATTR_FUNC;
  const tensorweave::AttrDef* def = node->op_def().FindAttr(attr_name);
  const std::string declared = def ? def->type : "";
  if (declared == "list(int)") return TF_ATTR_INT;
  if (declared == "list(float)") return TF_ATTR_FLOAT;
  if (declared == "list(bool)") return TF_ATTR_BOOL;
  if (declared == "list(type)") return TF_ATTR_TYPE;
  if (declared == "list(shape)") return TF_ATTR_SHAPE;
  if (declared == "list(tensor)") return TF_ATTR_TENSOR;
  if (declared == "list(func)") return TF_ATTR_FUNC;
  return TF_ATTR_STRING;
}

int64_t ShapeRank(const tensorweave::TensorShapeProto& shape) {
  return shape.unknown_rank() ? -1 : shape.dim_size();
}

TF_AttrMetadata Describe(const Node* node, const char* attr_name, const AttrValue& value) {
  TF_AttrMetadata metadata{0, -1, TF_ATTR_STRING, -1};
  switch (value.value_case()) {
    case AttrValue::kS:
      metadata.total_size = static_cast<int64_t>(value.s().size());
      break;
    case AttrValue::kI:
      metadata.type = TF_ATTR_INT;
      break;
    case AttrValue::kF:
      metadata.type = TF_ATTR_FLOAT;
      break;
    case AttrValue::kB:
      metadata.type = TF_ATTR_BOOL;
      break;
    case AttrValue::kType:
      metadata.type = TF_ATTR_TYPE;
      break;
    case AttrValue::kShape:
      metadata.type = TF_ATTR_SHAPE;
      metadata.total_size = ShapeRank(value.shape());
      break;
    case AttrValue::kTensor:
      metadata.type = TF_ATTR_TENSOR;
      break;
    case AttrValue::kFunc:
      metadata.type = TF_ATTR_FUNC;
      break;
    case AttrValue::kPlaceholder:
      metadata.type = TF_ATTR_PLACEHOLDER;
      break;
    case AttrValue::kList:
    case AttrValue::VALUE_NOT_SET: {
      const AttrValue::ListValue& list = value.list();
      metadata.is_list = 1;
      metadata.type = ListKind(node, attr_name, list);
      metadata.list_size = list.s_size() + list.i_size() + list.f_size() + list.b_size() +
                           list.type_size() + list.shape_size() + list.tensor_size() +
                           list.func_size();
      if (metadata.type == TF_ATTR_STRING) {
        metadata.total_size = 0;
        for (const std::string& s : list.s()) metadata.total_size += s.size();
      } else if (metadata.type == TF_ATTR_SHAPE) {
        // Shapes of unknown rank hold no dims, so they add nothing.
        metadata.total_size = 0;
        for (const auto& shape : list.shape()) {
          metadata.total_size += std::max<int64_t>(ShapeRank(shape), 0);
        }
      }
      break;
    }
  }
  return metadata;
}

}  // namespace

namespace tensorweave {
namespace c_api {

// The attr `attr_name` of `oper`; INVALID_ARGUMENT when it has none.
Status FindAttr(TF_Operation* oper, const char* attr_name, const AttrValue** value) {
  const Node* node = ToNode(oper);
  *value = attr_name ? tensorweave::FindNodeAttr(node->def(), attr_name) : nullptr;
  if (*value == nullptr) {
    return errors::InvalidArgument("Operation '", node->name(), "' has no attr named '",
                                   attr_name ? attr_name : "", "'");
  }
  return Status::OK();
}

// The attr, checked to hold a value of kind `expected`.
Status FindAttrOfKind(TF_Operation* oper, const char* attr_name, AttrValue::ValueCase expected,
                      const char* kind, const AttrValue** value) {
  TW_RETURN_IF_ERROR(FindAttr(oper, attr_name, value));
  if ((*value)->value_case() != expected) {
    return errors::InvalidArgument("Attr '", attr_name, "' of operation '", ToNode(oper)->name(),
                                   "' holds ", tensorweave::SummarizeAttrValue(**value), ", not a ",
                                   kind);
  }
  return Status::OK();
}

}  // namespace c_api
}  // namespace tensorweave

extern "C" {

const char* TF_OperationName(TF_Operation* oper) { return c_api::ToNode(oper)->name().c_str(); }

const char* TF_OperationOpType(TF_Operation* oper) {
  return c_api::ToNode(oper)->type_string().c_str();
}

const char* TF_OperationDevice(TF_Operation* oper) {
  return c_api::ToNode(oper)->requested_device().c_str();
}

int TF_OperationNumOutputs(TF_Operation* oper) { return c_api::ToNode(oper)->num_outputs(); }

TF_DataType TF_OperationOutputType(TF_Output oper_out) {
  const Node* node = c_api::ToNode(oper_out.oper);
  if (oper_out.index < 0 || oper_out.index >= node->num_outputs()) {
    return static_cast<TF_DataType>(0);
  }
  return static_cast<TF_DataType>(node->output_type(oper_out.index));
}

int TF_OperationNumInputs(TF_Operation* oper) { return c_api::ToNode(oper)->num_inputs(); }

TF_DataType TF_OperationInputType(TF_Input oper_in) {
  const Node* node = c_api::ToNode(oper_in.oper);
  if (oper_in.index < 0 || oper_in.index >= node->num_inputs()) {
    return static_cast<TF_DataType>(0);
  }
  return static_cast<TF_DataType>(node->input_type(oper_in.index));
}

TF_Output TF_OperationInput(TF_Input oper_in) {
  const Edge* edge = nullptr;
  if (!c_api::ToNode(oper_in.oper)->input_edge(oper_in.index, &edge).ok()) {
    return TF_Output{nullptr, -1};
  }
  return TF_Output{c_api::ToOperation(edge->src()), edge->src_output()};
}

void TF_OperationAllInputs(TF_Operation* oper, TF_Output* inputs, int max_inputs) {
  const Node* node = c_api::ToNode(oper);
  const int count = std::min(max_inputs, node->num_inputs());
  for (int i = 0; i < count; ++i) inputs[i] = TF_OperationInput(TF_Input{oper, i});
}

int TF_OperationOutputNumConsumers(TF_Output oper_out) {
  return TF_OperationOutputConsumers(oper_out, nullptr, 0);
}

int TF_OperationOutputConsumers(TF_Output oper_out, TF_Input* consumers, int max_consumers) {
  return ForEachEdge(
      c_api::ToNode(oper_out.oper)->out_edges(),
      [&](const Edge* edge) { return edge->src_output() == oper_out.index; },
      [&](const Edge* edge, int i) {
        if (i < max_consumers) {
          consumers[i] = TF_Input{c_api::ToOperation(edge->dst()), edge->dst_input()};
        }
      });
}

int TF_OperationNumControlInputs(TF_Operation* oper) {
  return TF_OperationGetControlInputs(oper, nullptr, 0);
}

int TF_OperationGetControlInputs(TF_Operation* oper, TF_Operation** control_inputs,
                                 int max_control_inputs) {
  return ForEachEdge(c_api::ToNode(oper)->in_edges(), IsControl, [&](const Edge* edge, int i) {
    if (i < max_control_inputs) control_inputs[i] = c_api::ToOperation(edge->src());
  });
}

int TF_OperationNumControlOutputs(TF_Operation* oper) {
  return TF_OperationGetControlOutputs(oper, nullptr, 0);
}

int TF_OperationGetControlOutputs(TF_Operation* oper, TF_Operation** control_outputs,
                                  int max_control_outputs) {
  return ForEachEdge(c_api::ToNode(oper)->out_edges(), IsControl, [&](const Edge* edge, int i) {
    if (i < max_control_outputs) control_outputs[i] = c_api::ToOperation(edge->dst());
  });
}

TF_AttrMetadata TF_OperationGetAttrMetadata(TF_Operation* oper, const char* attr_name,
                                            TF_Status* status) {
  const TF_AttrMetadata none{0, 0, TF_ATTR_STRING, 0};
  return c_api::Guard(status, none, [&] {
    const AttrValue* value = nullptr;
    Status found = c_api::FindAttr(oper, attr_name, &value);
    c_api::Set(status, found);
    return found.ok() ? Describe(c_api::ToNode(oper), attr_name, *value) : none;
  });
}

void TF_OperationGetAttrString(TF_Operation* oper, const char* attr_name, void* value,
                               size_t max_length, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    const AttrValue* attr = nullptr;
    Status found = c_api::FindAttrOfKind(oper, attr_name, AttrValue::kS, "string", &attr);
    if (found.ok()) std::memcpy(value, attr->s().data(), std::min(max_length, attr->s().size()));
    c_api::Set(status, std::move(found));
  });
}

void TF_OperationGetAttrInt(TF_Operation* oper, const char* attr_name, int64_t* value,
                            TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    const AttrValue* attr = nullptr;
    Status found = c_api::FindAttrOfKind(oper, attr_name, AttrValue::kI, "int", &attr);
    if (found.ok()) *value = attr->i();
    c_api::Set(status, std::move(found));
  });
}

void TF_OperationGetAttrFloat(TF_Operation* oper, const char* attr_name, float* value,
                              TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    const AttrValue* attr = nullptr;
    Status found = c_api::FindAttrOfKind(oper, attr_name, AttrValue::kF, "float", &attr);
    if (found.ok()) *value = attr->f();
    c_api::Set(status, std::move(found));
  });
}

void TF_OperationGetAttrBool(TF_Operation* oper, const char* attr_name, unsigned char* value,
                             TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    const AttrValue* attr = nullptr;
    Status found = c_api::FindAttrOfKind(oper, attr_name, AttrValue::kB, "bool", &attr);
    if (found.ok()) *value = attr->b() ? 1 : 0;
    c_api::Set(status, std::move(found));
  });
}

void TF_OperationGetAttrType(TF_Operation* oper, const char* attr_name, TF_DataType* value,
                             TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    const AttrValue* attr = nullptr;
    Status found = c_api::FindAttrOfKind(oper, attr_name, AttrValue::kType, "type", &attr);
    if (found.ok()) *value = static_cast<TF_DataType>(attr->type());
    c_api::Set(status, std::move(found));
  });
}

void TF_OperationGetAttrShape(TF_Operation* oper, const char* attr_name, int64_t* value,
                              int num_dims, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    const AttrValue* attr = nullptr;
    Status found = c_api::FindAttrOfKind(oper, attr_name, AttrValue::kShape, "shape", &attr);
    if (!found.ok()) return c_api::Set(status, std::move(found));
    // As TensorFlow: the dims that fit in `num_dims` (none for an unknown
    // rank); TF_OperationGetAttrMetadata gives the rank to size `value`.
    const int copied = static_cast<int>(std::min<int64_t>(ShapeRank(attr->shape()), num_dims));
    for (int i = 0; i < copied; ++i) value[i] = attr->shape().dim(i).size();
    c_api::Set(status, Status::OK());
  });
}

void TF_OperationGetAttrTensor(TF_Operation* oper, const char* attr_name, TF_Tensor** value,
                               TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    const AttrValue* attr = nullptr;
    Status result = c_api::FindAttrOfKind(oper, attr_name, AttrValue::kTensor, "tensor", &attr);
    tensorweave::Tensor tensor;
    if (result.ok()) result = tensorweave::Tensor::FromProto(attr->tensor(), &tensor);
    if (result.ok()) result = c_api::TensorToC(std::move(tensor), value);
    c_api::Set(status, std::move(result));
  });
}

void TF_OperationGetAttrValueProto(TF_Operation* oper, const char* attr_name,
                                   TF_Buffer* output_attr_value, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    const AttrValue* attr = nullptr;
    Status found = c_api::FindAttr(oper, attr_name, &attr);
    if (!found.ok()) return c_api::Set(status, std::move(found));
    c_api::Set(status, c_api::StringToBuffer(attr->SerializeAsString(), output_attr_value));
  });
}

void TF_OperationToNodeDef(TF_Operation* oper, TF_Buffer* output_node_def, TF_Status* status) {
  c_api::GuardVoid(status, [&] {
    const tensorweave::NodeDef def = tensorweave::Graph::NodeDefWithInputs(c_api::ToNode(oper));
    c_api::Set(status, c_api::StringToBuffer(def.SerializeAsString(), output_node_def));
  });
}

}  // extern "C"
