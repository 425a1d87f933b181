#include "runtime/framework/node_def_util.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string_view>

namespace tensorweave {
namespace {

Status MissingAttr(const NodeDef& node, const std::string& name) {
  return errors::NotFound("No attr named '", name, "' in node '", node.name(), "' (op ", node.op(),
                          ")");
}

Status WrongAttrType(const NodeDef& node, const std::string& name, const char* wanted) {
  return errors::InvalidArgument("Attr '", name, "' of node '", node.name(), "' (op ", node.op(),
                                 ") must have type ", wanted);
}

// Finds the attr or reports NOT_FOUND; checks the oneof case.
Status FindAttrOfCase(const NodeDef& node, const std::string& name, AttrValue::ValueCase value_case,
                      const char* wanted, const AttrValue** value) {
  *value = FindNodeAttr(node, name);
  if (*value == nullptr) return MissingAttr(node, name);
  // An unset AttrValue is how an empty list is sometimes written.
  if (value_case == AttrValue::kList && (*value)->value_case() == AttrValue::VALUE_NOT_SET) {
    return Status::OK();
  }
  if ((*value)->value_case() != value_case) return WrongAttrType(node, name, wanted);
  return Status::OK();
}

Status ArgTypes(const NodeDef& node, const OpDef& op_def, const ArgDef& arg, DataTypeVector* types);

// `status` with the attr and node it concerns in front of its message. The
// prefix is built only on error: Const values and shapes are read once per
// node per optimizer pass, and building it on success cost a tenth of the
// first run of a 5,000-node chain.
Status AnnotateAttr(const Status& status, const std::string& attr_name, const NodeDef& node) {
  if (status.ok()) return status;
  return errors::Annotate(status, StrCat("Attr '", attr_name, "' of node '", node.name(), "': "));
}

}  // namespace

const AttrValue* FindNodeAttr(const NodeDef& node, const std::string& name) {
  auto it = node.attr().find(name);
  return it == node.attr().end() ? nullptr : &it->second;
}

Status GetNodeAttr(const NodeDef& node, const std::string& name, std::string* value) {
  const AttrValue* attr;
  TW_RETURN_IF_ERROR(FindAttrOfCase(node, name, AttrValue::kS, "string", &attr));
  *value = attr->s();
  return Status::OK();
}

Status GetNodeAttr(const NodeDef& node, const std::string& name, int64_t* value) {
  const AttrValue* attr;
  TW_RETURN_IF_ERROR(FindAttrOfCase(node, name, AttrValue::kI, "int", &attr));
  *value = attr->i();
  return Status::OK();
}

Status GetNodeAttr(const NodeDef& node, const std::string& name, int32_t* value) {
  int64_t wide;
  TW_RETURN_IF_ERROR(GetNodeAttr(node, name, &wide));
  if (wide < std::numeric_limits<int32_t>::min() || wide > std::numeric_limits<int32_t>::max()) {
    return errors::InvalidArgument("Attr '", name, "' of node '", node.name(), "' is ", wide,
                                   ", outside the int32 range");
  }
  *value = static_cast<int32_t>(wide);
  return Status::OK();
}

Status GetNodeAttr(const NodeDef& node, const std::string& name, float* value) {
  const AttrValue* attr;
  TW_RETURN_IF_ERROR(FindAttrOfCase(node, name, AttrValue::kF, "float", &attr));
  *value = attr->f();
  return Status::OK();
}

Status GetNodeAttr(const NodeDef& node, const std::string& name, bool* value) {
  const AttrValue* attr;
  TW_RETURN_IF_ERROR(FindAttrOfCase(node, name, AttrValue::kB, "bool", &attr));
  *value = attr->b();
  return Status::OK();
}

Status GetNodeAttr(const NodeDef& node, const std::string& name, DataType* value) {
  const AttrValue* attr;
  TW_RETURN_IF_ERROR(FindAttrOfCase(node, name, AttrValue::kType, "type", &attr));
  *value = attr->type();
  return Status::OK();
}

Status GetNodeAttr(const NodeDef& node, const std::string& name, PartialTensorShape* value) {
  const AttrValue* attr;
  TW_RETURN_IF_ERROR(FindAttrOfCase(node, name, AttrValue::kShape, "shape", &attr));
  return AnnotateAttr(PartialTensorShape::FromProto(attr->shape(), value), name, node);
}

Status GetNodeAttr(const NodeDef& node, const std::string& name, TensorShape* value) {
  const AttrValue* attr;
  TW_RETURN_IF_ERROR(FindAttrOfCase(node, name, AttrValue::kShape, "shape", &attr));
  return AnnotateAttr(TensorShape::FromProto(attr->shape(), value), name, node);
}

Status GetNodeAttr(const NodeDef& node, const std::string& name, Tensor* value) {
  const AttrValue* attr;
  TW_RETURN_IF_ERROR(FindAttrOfCase(node, name, AttrValue::kTensor, "tensor", &attr));
  return AnnotateAttr(Tensor::FromProto(attr->tensor(), value), name, node);
}

Status GetNodeAttr(const NodeDef& node, const std::string& name, std::vector<std::string>* value) {
  const AttrValue* attr;
  TW_RETURN_IF_ERROR(FindAttrOfCase(node, name, AttrValue::kList, "list(string)", &attr));
  value->assign(attr->list().s().begin(), attr->list().s().end());
  return Status::OK();
}

Status GetNodeAttr(const NodeDef& node, const std::string& name, std::vector<int64_t>* value) {
  const AttrValue* attr;
  TW_RETURN_IF_ERROR(FindAttrOfCase(node, name, AttrValue::kList, "list(int)", &attr));
  value->assign(attr->list().i().begin(), attr->list().i().end());
  return Status::OK();
}

Status GetNodeAttr(const NodeDef& node, const std::string& name, std::vector<int32_t>* value) {
  std::vector<int64_t> wide;
  TW_RETURN_IF_ERROR(GetNodeAttr(node, name, &wide));
  value->clear();
  for (int64_t v : wide) {
    if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
      return errors::InvalidArgument("Attr '", name, "' of node '", node.name(), "' holds ", v,
                                     ", outside the int32 range");
    }
    value->push_back(static_cast<int32_t>(v));
  }
  return Status::OK();
}

Status GetNodeAttr(const NodeDef& node, const std::string& name, std::vector<float>* value) {
  const AttrValue* attr;
  TW_RETURN_IF_ERROR(FindAttrOfCase(node, name, AttrValue::kList, "list(float)", &attr));
  value->assign(attr->list().f().begin(), attr->list().f().end());
  return Status::OK();
}

Status GetNodeAttr(const NodeDef& node, const std::string& name, std::vector<bool>* value) {
  const AttrValue* attr;
  TW_RETURN_IF_ERROR(FindAttrOfCase(node, name, AttrValue::kList, "list(bool)", &attr));
  value->assign(attr->list().b().begin(), attr->list().b().end());
  return Status::OK();
}

Status GetNodeAttr(const NodeDef& node, const std::string& name, DataTypeVector* value) {
  const AttrValue* attr;
  TW_RETURN_IF_ERROR(FindAttrOfCase(node, name, AttrValue::kList, "list(type)", &attr));
  value->clear();
  for (int t : attr->list().type()) value->push_back(static_cast<DataType>(t));
  return Status::OK();
}

Status GetNodeAttr(const NodeDef& node, const std::string& name,
                   std::vector<PartialTensorShape>* value) {
  const AttrValue* attr;
  TW_RETURN_IF_ERROR(FindAttrOfCase(node, name, AttrValue::kList, "list(shape)", &attr));
  value->clear();
  for (const TensorShapeProto& proto : attr->list().shape()) {
    PartialTensorShape shape;
    TW_RETURN_IF_ERROR(PartialTensorShape::FromProto(proto, &shape));
    value->push_back(shape);
  }
  return Status::OK();
}

void AddDefaultsToNodeDef(const OpDef& op_def, NodeDef* node) {
  for (const AttrDef& attr : op_def.attrs) {
    if (attr.has_default && node->attr().find(attr.name) == node->attr().end()) {
      (*node->mutable_attr())[attr.name] = attr.default_value;
    }
  }
}

namespace {

// Checks one attr value against its declaration.
Status ValidateAttrValue(const NodeDef& node, const AttrDef& def, const AttrValue& value) {
  auto bad = [&](auto&&... why) {
    return errors::InvalidArgument("Attr '", def.name, "' of node '", node.name(), "' (op ",
                                   node.op(), ") ", why...);
  };
  const bool is_list = def.type.rfind("list(", 0) == 0;
  // A view, not a copy: this runs for every attr of every node a graph adds.
  const std::string_view element =
      is_list ? std::string_view(def.type).substr(5, def.type.size() - 6) : def.type;

  if (is_list) {
    if (value.value_case() != AttrValue::kList && value.value_case() != AttrValue::VALUE_NOT_SET) {
      return bad("must be a ", def.type, ", got ", SummarizeAttrValue(value));
    }
    const AttrValue::ListValue& list = value.list();
    int64_t length = 0;
    if (element == "int")
      length = list.i_size();
    else if (element == "float")
      length = list.f_size();
    else if (element == "bool")
      length = list.b_size();
    else if (element == "string")
      length = list.s_size();
    else if (element == "type")
      length = list.type_size();
    else if (element == "shape")
      length = list.shape_size();
    else if (element == "tensor")
      length = list.tensor_size();
    else if (element == "func")
      length = list.func_size();
    // Only the field matching the element type may hold values.
    const int64_t total = list.i_size() + list.f_size() + list.b_size() + list.s_size() +
                          list.type_size() + list.shape_size() + list.tensor_size() +
                          list.func_size();
    if (total != length) return bad("must be a ", def.type, ", got ", SummarizeAttrValue(value));
    if (def.has_minimum && length < def.minimum) {
      return bad("has length ", length, ", less than the minimum ", def.minimum);
    }
    if (element == "type") {
      for (int t : list.type()) {
        const DataType dtype = static_cast<DataType>(t);
        if (!DataType_IsValid(t) || dtype == DT_INVALID) return bad("holds an invalid dtype");
        if (!def.allowed_types.empty() &&
            std::find(def.allowed_types.begin(), def.allowed_types.end(), dtype) ==
                def.allowed_types.end()) {
          return bad("holds ", DataTypeString(dtype), ", not in the allowed list [",
                     DataTypeVectorString(def.allowed_types), "]");
        }
      }
    }
    return Status::OK();
  }

  AttrValue::ValueCase expected = AttrValue::VALUE_NOT_SET;
  if (element == "int")
    expected = AttrValue::kI;
  else if (element == "float")
    expected = AttrValue::kF;
  else if (element == "bool")
    expected = AttrValue::kB;
  else if (element == "string")
    expected = AttrValue::kS;
  else if (element == "type")
    expected = AttrValue::kType;
  else if (element == "shape")
    expected = AttrValue::kShape;
  else if (element == "tensor")
    expected = AttrValue::kTensor;
  else if (element == "func")
    expected = AttrValue::kFunc;
  if (value.value_case() != expected) {
    return bad("must be a ", def.type, ", got ", SummarizeAttrValue(value));
  }
  if (element == "int" && def.has_minimum && value.i() < def.minimum) {
    return bad("is ", value.i(), ", less than the minimum ", def.minimum);
  }
  if (element == "type") {
    const int t = value.type();
    if (!DataType_IsValid(t) || value.type() == DT_INVALID) return bad("is an invalid dtype");
    if (!def.allowed_types.empty() && std::find(def.allowed_types.begin(), def.allowed_types.end(),
                                                value.type()) == def.allowed_types.end()) {
      return bad("is ", DataTypeString(value.type()), ", not in the allowed list [",
                 DataTypeVectorString(def.allowed_types), "]");
    }
  }
  if (element == "string" && !def.allowed_strings.empty() &&
      std::find(def.allowed_strings.begin(), def.allowed_strings.end(), value.s()) ==
          def.allowed_strings.end()) {
    return bad("is '", value.s(), "', not one of [", StrJoin(def.allowed_strings, ", "), "]");
  }
  if (element == "shape") {
    PartialTensorShape shape;
    TW_RETURN_IF_ERROR(
        AnnotateAttr(PartialTensorShape::FromProto(value.shape(), &shape), def.name, node));
  }
  return Status::OK();
}

}  // namespace

Status ValidateNodeDef(const NodeDef& node, const OpDef& op_def) {
  if (node.op() != op_def.name) {
    return errors::InvalidArgument("Node '", node.name(), "' has op ", node.op(),
                                   " but was checked against ", op_def.name);
  }
  for (const auto& entry : node.attr()) {
    const std::string& name = entry.first;
    // Attrs with a leading underscore are internal annotations
    // (e.g. _class, _output_shapes) that any node may carry.
    if (!name.empty() && name[0] == '_') continue;
    if (op_def.FindAttr(name) == nullptr) {
      return errors::InvalidArgument("Node '", node.name(), "' has attr '", name, "' that op ",
                                     op_def.name, " does not define");
    }
  }
  for (const AttrDef& def : op_def.attrs) {
    const AttrValue* value = FindNodeAttr(node, def.name);
    const AttrValue* effective = value ? value : (def.has_default ? &def.default_value : nullptr);
    if (effective == nullptr) {
      return errors::InvalidArgument("Node '", node.name(), "' (op ", op_def.name,
                                     ") is missing attr '", def.name, "'");
    }
    TW_RETURN_IF_ERROR(ValidateAttrValue(node, def, *effective));
  }

  int num_data_inputs = 0;
  bool seen_control = false;
  for (const std::string& input : node.input()) {
    if (!input.empty() && input[0] == '^') {
      seen_control = true;
    } else {
      if (seen_control) {
        return errors::InvalidArgument("Node '", node.name(), "' has data input '", input,
                                       "' after a control input");
      }
      ++num_data_inputs;
    }
  }
  int expected = 0;
  for (const ArgDef& arg : op_def.inputs) {
    DataTypeVector types;
    TW_RETURN_IF_ERROR(ArgTypes(node, op_def, arg, &types));
    expected += static_cast<int>(types.size());
  }
  if (num_data_inputs != expected) {
    return errors::InvalidArgument("Node '", node.name(), "' (op ", op_def.name, ") has ",
                                   num_data_inputs, " data inputs but the op expects ", expected);
  }
  return Status::OK();
}

namespace {

// Reads an attr from the node or, failing that, the op's default.
const AttrValue* AttrOrDefault(const NodeDef& node, const OpDef& op_def, const std::string& name) {
  const AttrValue* value = FindNodeAttr(node, name);
  if (value) return value;
  const AttrDef* def = op_def.FindAttr(name);
  return def && def->has_default ? &def->default_value : nullptr;
}

// Expands one arg into its dtypes.
Status ArgTypes(const NodeDef& node, const OpDef& op_def, const ArgDef& arg,
                DataTypeVector* types) {
  auto missing = [&](const std::string& attr) {
    return errors::InvalidArgument("Node '", node.name(), "' (op ", op_def.name,
                                   ") is missing attr '", attr, "'");
  };
  int64_t count = 1;
  if (!arg.number_attr.empty()) {
    const AttrValue* n = AttrOrDefault(node, op_def, arg.number_attr);
    if (n == nullptr) return missing(arg.number_attr);
    if (n->value_case() != AttrValue::kI || n->i() < 0 || n->i() > (1 << 24)) {
      return errors::InvalidArgument("Attr '", arg.number_attr, "' of node '", node.name(),
                                     "' must be a non-negative int");
    }
    count = n->i();
  }
  if (!arg.type_list_attr.empty()) {
    const AttrValue* list = AttrOrDefault(node, op_def, arg.type_list_attr);
    if (list == nullptr) return missing(arg.type_list_attr);
    for (int t : list->list().type()) {
      const DataType dtype = static_cast<DataType>(t);
      types->push_back(arg.is_ref ? MakeRefType(dtype) : dtype);
    }
    return Status::OK();
  }
  DataType dtype = arg.type;
  if (!arg.type_attr.empty()) {
    const AttrValue* type = AttrOrDefault(node, op_def, arg.type_attr);
    if (type == nullptr) return missing(arg.type_attr);
    if (type->value_case() != AttrValue::kType) {
      return errors::InvalidArgument("Attr '", arg.type_attr, "' of node '", node.name(),
                                     "' must be a type");
    }
    dtype = type->type();
  }
  for (int64_t i = 0; i < count; ++i) types->push_back(arg.is_ref ? MakeRefType(dtype) : dtype);
  return Status::OK();
}

}  // namespace

Status InOutTypesForNode(const NodeDef& node, const OpDef& op_def, DataTypeVector* inputs,
                         DataTypeVector* outputs) {
  inputs->clear();
  outputs->clear();
  for (const ArgDef& arg : op_def.inputs) TW_RETURN_IF_ERROR(ArgTypes(node, op_def, arg, inputs));
  for (const ArgDef& arg : op_def.outputs) {
    TW_RETURN_IF_ERROR(ArgTypes(node, op_def, arg, outputs));
  }
  return Status::OK();
}

Status ArgSizes(const NodeDef& node, const std::vector<ArgDef>& args, std::vector<int>* sizes) {
  const OpDef* op_def = OpRegistry::Global()->LookUp(node.op());
  if (op_def != nullptr) return ArgSizes(node, *op_def, args, sizes);
  sizes->clear();
  for (const ArgDef& arg : args) {
    DataTypeVector types;
    if (op_def != nullptr) {
      TW_RETURN_IF_ERROR(ArgTypes(node, *op_def, arg, &types));
    } else {
      // Without a registered op only plain args can be sized.
      types.push_back(arg.type);
    }
    sizes->push_back(static_cast<int>(types.size()));
  }
  return Status::OK();
}

Status ArgSizes(const NodeDef& node, const OpDef& op_def, const std::vector<ArgDef>& args,
                std::vector<int>* sizes) {
  sizes->clear();
  for (const ArgDef& arg : args) {
    DataTypeVector types;
    TW_RETURN_IF_ERROR(ArgTypes(node, op_def, arg, &types));
    sizes->push_back(static_cast<int>(types.size()));
  }
  return Status::OK();
}

bool ParseTensorName(const std::string& name, TensorId* id) {
  if (name.empty()) return false;
  if (name[0] == '^') {
    if (name.size() == 1 || name.find(':') != std::string::npos) return false;
    id->node = name.substr(1);
    id->index = -1;
    return true;
  }
  const size_t colon = name.rfind(':');
  if (colon == std::string::npos) {
    id->node = name;
    id->index = 0;
    return true;
  }
  if (colon == 0 || colon + 1 == name.size()) return false;
  int64_t index = 0;
  for (size_t i = colon + 1; i < name.size(); ++i) {
    const char c = name[i];
    if (c < '0' || c > '9') return false;
    index = index * 10 + (c - '0');
    if (index > std::numeric_limits<int32_t>::max()) return false;
  }
  id->node = name.substr(0, colon);
  id->index = static_cast<int>(index);
  return true;
}

std::string SummarizeAttrValue(const AttrValue& value) {
  switch (value.value_case()) {
    case AttrValue::kS:
      return "\"" + value.s() + "\"";
    case AttrValue::kI:
      return std::to_string(value.i());
    case AttrValue::kF:
      return StrCat(value.f());
    case AttrValue::kB:
      return value.b() ? "true" : "false";
    case AttrValue::kType:
      return DataTypeString(value.type());
    case AttrValue::kShape: {
      PartialTensorShape shape;
      if (!PartialTensorShape::FromProto(value.shape(), &shape).ok()) return "<invalid shape>";
      return shape.DebugString();
    }
    case AttrValue::kTensor:
      return "<tensor>";
    case AttrValue::kList:
      return "list";
    case AttrValue::kFunc:
      return "func " + value.func().name();
    case AttrValue::kPlaceholder:
      return "$" + value.placeholder();
    case AttrValue::VALUE_NOT_SET:
      return "<unset>";
  }
  return "<unknown>";
}

void SetAttrValue(const std::string& value, AttrValue* out) { out->set_s(value); }
void SetAttrValue(int64_t value, AttrValue* out) { out->set_i(value); }
void SetAttrValue(float value, AttrValue* out) { out->set_f(value); }
void SetAttrValue(bool value, AttrValue* out) { out->set_b(value); }
void SetAttrValue(DataType value, AttrValue* out) { out->set_type(value); }
void SetAttrValue(const PartialTensorShape& value, AttrValue* out) {
  value.AsProto(out->mutable_shape());
}
void SetAttrValue(const TensorShape& value, AttrValue* out) { value.AsProto(out->mutable_shape()); }
void SetAttrValue(const Tensor& value, AttrValue* out) {
  value.AsProtoTensorContent(out->mutable_tensor());
}

}  // namespace tensorweave
