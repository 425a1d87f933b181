#include "runtime/framework/op_def_proto.h"

#include "runtime/framework/shape_inference.h"

namespace tensorweave {

namespace {

void ArgDefToProto(const ArgDef& arg, proto::OpDef::ArgDef* out) {
  out->set_name(arg.name);
  out->set_type(arg.type);
  out->set_type_attr(arg.type_attr);
  out->set_number_attr(arg.number_attr);
  out->set_type_list_attr(arg.type_list_attr);
  out->set_is_ref(arg.is_ref);
}

void AttrDefToProto(const AttrDef& attr, proto::OpDef::AttrDef* out) {
  out->set_name(attr.name);
  out->set_type(attr.type);
  if (attr.has_default) *out->mutable_default_value() = attr.default_value;
  out->set_has_minimum(attr.has_minimum);
  out->set_minimum(attr.minimum);
  // An empty allowed list means "anything", so allowed_values stays unset.
  if (!attr.allowed_types.empty()) {
    AttrValue::ListValue* list = out->mutable_allowed_values()->mutable_list();
    for (DataType type : attr.allowed_types) list->add_type(type);
  }
  if (!attr.allowed_strings.empty()) {
    AttrValue::ListValue* list = out->mutable_allowed_values()->mutable_list();
    for (const std::string& allowed : attr.allowed_strings) list->add_s(allowed);
  }
}

bool IsAttrTypeName(const std::string& type) {
  static const char* const kScalarTypes[] = {"int",  "float", "bool",   "string",
                                             "type", "shape", "tensor", "func"};
  for (const char* scalar : kScalarTypes) {
    if (type == scalar || type == std::string("list(") + scalar + ")") return true;
  }
  return false;
}

// One arg of `op_def` (whose attrs are already converted) from its message.
Status ArgDefFromProto(const OpDef& op_def, const proto::OpDef::ArgDef& message, ArgDef* arg) {
  auto bad = [&](const std::string& why) {
    return errors::InvalidArgument("Op '", op_def.name, "': arg '", message.name(), "' ", why);
  };
  if (message.name().empty())
    return errors::InvalidArgument("Op '", op_def.name, "' has an arg without a name");
  arg->name = message.name();
  arg->is_ref = message.is_ref();
  arg->number_attr = message.number_attr();
  const bool has_type = message.type() != DT_INVALID;
  const int ways =
      int{has_type} + int{!message.type_attr().empty()} + int{!message.type_list_attr().empty()};
  if (ways != 1) return bad("must give its type by exactly one of type, type_attr, type_list_attr");
  if (has_type) {
    if (!DataType_IsValid(message.type())) return bad("has an unknown type");
    arg->type = static_cast<DataType>(message.type());
  }
  auto check_attr = [&](const std::string& name, const char* kind) -> Status {
    const AttrDef* attr = op_def.FindAttr(name);
    if (attr == nullptr || attr->type != kind) {
      return bad(StrCat("names attr '", name, "', which is not a '", kind, "' attr of the op"));
    }
    return Status::OK();
  };
  if (!arg->number_attr.empty()) {
    TW_RETURN_IF_ERROR(check_attr(arg->number_attr, "int"));
    if (!message.type_list_attr().empty()) return bad("has both number_attr and type_list_attr");
  }
  if (!message.type_attr().empty()) {
    TW_RETURN_IF_ERROR(check_attr(message.type_attr(), "type"));
    arg->type_attr = message.type_attr();
  }
  if (!message.type_list_attr().empty()) {
    TW_RETURN_IF_ERROR(check_attr(message.type_list_attr(), "list(type)"));
    arg->type_list_attr = message.type_list_attr();
  }
  return Status::OK();
}

}  // namespace

Status OpDefFromProto(const proto::OpDef& message, OpDef* op_def) {
  *op_def = OpDef();
  op_def->name = message.name();
  if (op_def->name.empty()) return errors::InvalidArgument("An OpDef has no name");
  for (const proto::OpDef::AttrDef& attr_message : message.attr()) {
    if (attr_message.name().empty() || op_def->FindAttr(attr_message.name()) != nullptr) {
      return errors::InvalidArgument("Op '", op_def->name, "' has an attr without a name or '",
                                     attr_message.name(), "' twice");
    }
    if (!IsAttrTypeName(attr_message.type())) {
      return errors::InvalidArgument("Op '", op_def->name, "': attr '", attr_message.name(),
                                     "' has unknown type '", attr_message.type(), "'");
    }
    AttrDef attr;
    attr.name = attr_message.name();
    attr.type = attr_message.type();
    attr.has_default = attr_message.has_default_value();
    if (attr.has_default) attr.default_value = attr_message.default_value();
    attr.has_minimum = attr_message.has_minimum();
    attr.minimum = attr_message.minimum();
    if (attr_message.has_allowed_values()) {
      const AttrValue::ListValue& allowed = attr_message.allowed_values().list();
      for (int type : allowed.type()) {
        if (DataType_IsValid(type)) attr.allowed_types.push_back(static_cast<DataType>(type));
      }
      attr.allowed_strings.assign(allowed.s().begin(), allowed.s().end());
    }
    op_def->attrs.push_back(std::move(attr));
  }
  for (const proto::OpDef::ArgDef& input : message.input_arg()) {
    op_def->inputs.emplace_back();
    TW_RETURN_IF_ERROR(ArgDefFromProto(*op_def, input, &op_def->inputs.back()));
  }
  for (const proto::OpDef::ArgDef& output : message.output_arg()) {
    op_def->outputs.emplace_back();
    TW_RETURN_IF_ERROR(ArgDefFromProto(*op_def, output, &op_def->outputs.back()));
  }
  op_def->doc = message.summary();
  op_def->is_stateful = message.is_stateful();
  op_def->shape_fn = shape_fns::UnknownShape;
  return Status::OK();
}

proto::OpDef OpDefToProto(const OpDef& op_def) {
  proto::OpDef out;
  out.set_name(op_def.name);
  for (const ArgDef& input : op_def.inputs) ArgDefToProto(input, out.add_input_arg());
  for (const ArgDef& output : op_def.outputs) ArgDefToProto(output, out.add_output_arg());
  for (const AttrDef& attr : op_def.attrs) AttrDefToProto(attr, out.add_attr());
  out.set_summary(op_def.doc);
  out.set_is_stateful(op_def.is_stateful);
  return out;
}

proto::OpList OpListFromRegistry(const OpRegistry& registry) {
  proto::OpList list;
  // Registered ops are never removed or changed, so each name found stays
  // valid while it is read.
  for (const std::string& name : registry.ListOpNames()) {
    const OpDef* op_def = registry.LookUp(name);
    if (op_def != nullptr) *list.add_op() = OpDefToProto(*op_def);
  }
  return list;
}

}  // namespace tensorweave
