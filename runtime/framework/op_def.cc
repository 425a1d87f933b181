#include "runtime/framework/op_def.h"

#include <google/protobuf/text_format.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "runtime/framework/tensor_shape.h"

namespace tensorweave {

const AttrDef* OpDef::FindAttr(const std::string& attr_name) const {
  for (const AttrDef& attr : attrs) {
    if (attr.name == attr_name) return &attr;
  }
  return nullptr;
}

OpRegistry* OpRegistry::Global() {
  static OpRegistry* registry = new OpRegistry();
  return registry;
}

Status OpRegistry::Register(OpDef op_def) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ops_.count(op_def.name)) {
    return errors::AlreadyExists("Op '", op_def.name, "' is already registered");
  }
  std::string name = op_def.name;
  ops_.emplace(std::move(name), std::make_unique<OpDef>(std::move(op_def)));
  return Status::OK();
}

const OpDef* OpRegistry::LookUp(const std::string& op_name) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = ops_.find(op_name);
    if (it != ops_.end()) return it->second.get();
  }
  return fallback_ != nullptr ? fallback_->LookUp(op_name) : nullptr;
}

Status OpRegistry::LookUp(const std::string& op_name, const OpDef** op_def) const {
  *op_def = LookUp(op_name);
  if (*op_def == nullptr) {
    return errors::NotFound("Op type not registered '", op_name, "'");
  }
  return Status::OK();
}

std::vector<std::string> OpRegistry::ListOpNames() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& entry : ops_) names.push_back(entry.first);
  return names;
}

// --- Spec parsing ---------------------------------------------------------

namespace {

std::string Trim(const std::string& text) {
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

bool IsIdentifier(const std::string& text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_')) {
    return false;
  }
  for (char c : text) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

// Splits "a, b, c" on commas that are not inside quotes or brackets.
std::vector<std::string> SplitTopLevel(const std::string& text) {
  std::vector<std::string> parts;
  int depth = 0;
  char quote = 0;
  std::string current;
  for (char c : text) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '[' || c == '(' || c == '{') {
      ++depth;
    } else if (c == ']' || c == ')' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      parts.push_back(Trim(current));
      current.clear();
      continue;
    }
    current += c;
  }
  if (!Trim(current).empty()) parts.push_back(Trim(current));
  return parts;
}

bool ParseInt(const std::string& text, int64_t* value) {
  std::string t = Trim(text);
  if (t.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long parsed = std::strtoll(t.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *value = parsed;
  return true;
}

bool ParseFloat(const std::string& text, float* value) {
  std::string t = Trim(text);
  if (t == "inf") {
    *value = INFINITY;
    return true;
  }
  if (t == "-inf") {
    *value = -INFINITY;
    return true;
  }
  if (t.empty()) return false;
  char* end = nullptr;
  *value = std::strtof(t.c_str(), &end);
  return *end == '\0';
}

bool ParseDataType(const std::string& text, DataType* dtype) {
  std::string t = Trim(text);
  // Defaults are written either as "float" or as TensorFlow's "DT_FLOAT".
  if (t.rfind("DT_", 0) == 0) {
    return DataType_Parse(t, dtype);
  }
  return DataTypeFromString(t, dtype);
}

bool ParseQuoted(const std::string& text, std::string* out) {
  std::string t = Trim(text);
  if (t.size() < 2 || (t.front() != '\'' && t.front() != '"') || t.back() != t.front()) {
    return false;
  }
  *out = t.substr(1, t.size() - 2);
  return true;
}

// Parses "[1, 2, 3]" (or "[]") into its comma-separated items.
bool ParseList(const std::string& text, std::vector<std::string>* items) {
  std::string t = Trim(text);
  if (t.size() < 2 || t.front() != '[' || t.back() != ']') return false;
  *items = SplitTopLevel(t.substr(1, t.size() - 2));
  return true;
}

// A shape default: "[2, 3]", "[-1, 4]", or "{ unknown_rank: true }".
bool ParseShape(const std::string& text, TensorShapeProto* shape) {
  std::string t = Trim(text);
  shape->Clear();
  if (t.front() == '{') {
    if (t.find("unknown_rank") == std::string::npos) return false;
    shape->set_unknown_rank(true);
    return true;
  }
  std::vector<std::string> items;
  if (!ParseList(t, &items)) return false;
  for (const std::string& item : items) {
    int64_t size;
    if (!ParseInt(item, &size) || size < -1) return false;
    shape->add_dim()->set_size(size);
  }
  return true;
}

bool ParseScalarValue(const std::string& type, const std::string& text, AttrValue* value) {
  if (type == "int") {
    int64_t i;
    if (!ParseInt(text, &i)) return false;
    value->set_i(i);
  } else if (type == "float") {
    float f;
    if (!ParseFloat(text, &f)) return false;
    value->set_f(f);
  } else if (type == "bool") {
    std::string t = Trim(text);
    if (t != "true" && t != "false") return false;
    value->set_b(t == "true");
  } else if (type == "string") {
    std::string s;
    if (!ParseQuoted(text, &s)) return false;
    value->set_s(s);
  } else if (type == "type") {
    DataType dtype;
    if (!ParseDataType(text, &dtype)) return false;
    value->set_type(dtype);
  } else if (type == "shape") {
    if (!ParseShape(text, value->mutable_shape())) return false;
  } else if (type == "tensor") {
    // A TensorProto in text format, in braces as TensorFlow's op specs
    // write it: "{ dtype: DT_UINT8 tensor_shape { dim { size: 4 } } ... }".
    std::string body = Trim(text);
    if (body.size() < 2 || body.front() != '{' || body.back() != '}') return false;
    body = body.substr(1, body.size() - 2);
    if (!google::protobuf::TextFormat::ParseFromString(body, value->mutable_tensor())) return false;
  } else {
    return false;
  }
  return true;
}

bool ParseDefault(const std::string& type, const std::string& text, AttrValue* value) {
  if (type.rfind("list(", 0) != 0) return ParseScalarValue(type, text, value);
  const std::string element_type = type.substr(5, type.size() - 6);
  std::vector<std::string> items;
  if (!ParseList(text, &items)) return false;
  AttrValue::ListValue* list = value->mutable_list();
  for (const std::string& item : items) {
    AttrValue element;
    if (!ParseScalarValue(element_type, item, &element)) return false;
    if (element_type == "int")
      list->add_i(element.i());
    else if (element_type == "float")
      list->add_f(element.f());
    else if (element_type == "bool")
      list->add_b(element.b());
    else if (element_type == "string")
      list->add_s(element.s());
    else if (element_type == "type")
      list->add_type(element.type());
    else if (element_type == "shape")
      *list->add_shape() = element.shape();
    else
      return false;
  }
  return true;
}

bool IsKnownAttrType(const std::string& type) {
  static const char* const kScalarTypes[] = {"int",  "float", "bool",   "string",
                                             "type", "shape", "tensor", "func"};
  for (const char* scalar : kScalarTypes) {
    if (type == scalar || type == std::string("list(") + scalar + ")") return true;
  }
  return false;
}

Status ParseAttrSpec(const std::string& op, const std::string& spec, AttrDef* attr) {
  auto bad = [&](const std::string& why) {
    return errors::InvalidArgument("Op ", op, ": bad attr spec '", spec, "': ", why);
  };
  const size_t colon = spec.find(':');
  if (colon == std::string::npos) return bad("expected 'name: type'");
  attr->name = Trim(spec.substr(0, colon));
  if (!IsIdentifier(attr->name)) return bad("attr name is not an identifier");
  std::string rest = spec.substr(colon + 1);

  // The default follows the first '=' that is not part of ">=".
  std::string default_text;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '=' && (i == 0 || rest[i - 1] != '>')) {
      default_text = Trim(rest.substr(i + 1));
      rest = rest.substr(0, i);
      attr->has_default = true;
      break;
    }
  }
  std::string type = Trim(rest);

  const size_t minimum_at = type.find(">=");
  if (minimum_at != std::string::npos) {
    if (!ParseInt(type.substr(minimum_at + 2), &attr->minimum)) return bad("bad minimum");
    attr->has_minimum = true;
    type = Trim(type.substr(0, minimum_at));
  }

  // Allowed sets: "{float, double}" for type attrs, "{'A', 'B'}" for strings,
  // "list({float, int32})" for type lists.
  std::string allowed_text;
  bool list_of_allowed = false;
  if (!type.empty() && type.front() == '{') {
    allowed_text = type;
  } else if (type.rfind("list({", 0) == 0 && type.back() == ')') {
    allowed_text = type.substr(5, type.size() - 6);
    list_of_allowed = true;
  }
  if (!allowed_text.empty()) {
    if (allowed_text.back() != '}') return bad("unterminated allowed set");
    std::vector<std::string> items = SplitTopLevel(allowed_text.substr(1, allowed_text.size() - 2));
    if (items.empty()) return bad("empty allowed set");
    std::string quoted;
    if (ParseQuoted(items[0], &quoted)) {
      if (list_of_allowed) return bad("lists of strings take no allowed set");
      type = "string";
      for (const std::string& item : items) {
        if (!ParseQuoted(item, &quoted)) return bad("mixed allowed set");
        attr->allowed_strings.push_back(quoted);
      }
    } else {
      type = list_of_allowed ? "list(type)" : "type";
      for (const std::string& item : items) {
        DataType dtype;
        if (!ParseDataType(item, &dtype)) return bad("unknown dtype '" + item + "'");
        attr->allowed_types.push_back(dtype);
      }
    }
  }
  if (!IsKnownAttrType(type)) return bad("unknown attr type '" + type + "'");
  attr->type = type;
  if (attr->has_default && !ParseDefault(type, default_text, &attr->default_value)) {
    return bad("cannot parse default '" + default_text + "'");
  }
  return Status::OK();
}

Status ParseArgSpec(const std::string& op, const std::string& spec, const OpDef& op_def,
                    ArgDef* arg) {
  auto bad = [&](const std::string& why) {
    return errors::InvalidArgument("Op ", op, ": bad arg spec '", spec, "': ", why);
  };
  const size_t colon = spec.find(':');
  if (colon == std::string::npos) return bad("expected 'name: type'");
  arg->name = Trim(spec.substr(0, colon));
  if (!IsIdentifier(arg->name)) return bad("arg name is not an identifier");
  std::string type = Trim(spec.substr(colon + 1));

  if (type.rfind("Ref(", 0) == 0 && type.back() == ')') {
    arg->is_ref = true;
    type = Trim(type.substr(4, type.size() - 5));
  }
  const size_t star = type.find('*');
  if (star != std::string::npos) {
    arg->number_attr = Trim(type.substr(0, star));
    type = Trim(type.substr(star + 1));
    const AttrDef* number = op_def.FindAttr(arg->number_attr);
    if (number == nullptr || number->type != "int") {
      return bad("'" + arg->number_attr + "' must be an int attr declared before the arg");
    }
  }
  DataType dtype;
  if (ParseDataType(type, &dtype)) {
    arg->type = dtype;
    return Status::OK();
  }
  const AttrDef* attr = op_def.FindAttr(type);
  if (attr == nullptr) return bad("'" + type + "' is neither a dtype nor a declared attr");
  if (attr->type == "type") {
    arg->type_attr = type;
  } else if (attr->type == "list(type)" && arg->number_attr.empty()) {
    arg->type_list_attr = type;
  } else {
    return bad("attr '" + type + "' must have type 'type' or 'list(type)'");
  }
  return Status::OK();
}

}  // namespace

OpDefBuilder::OpDefBuilder(std::string op_name) { op_def_.name = std::move(op_name); }

OpDefBuilder& OpDefBuilder::Input(const std::string& spec) {
  input_specs_.push_back(spec);
  return *this;
}
OpDefBuilder& OpDefBuilder::Output(const std::string& spec) {
  output_specs_.push_back(spec);
  return *this;
}
OpDefBuilder& OpDefBuilder::Attr(const std::string& spec) {
  attr_specs_.push_back(spec);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetShapeFn(ShapeFn fn) {
  op_def_.shape_fn = std::move(fn);
  return *this;
}
OpDefBuilder& OpDefBuilder::SetIsStateful() {
  op_def_.is_stateful = true;
  return *this;
}
OpDefBuilder& OpDefBuilder::Doc(const std::string& text) {
  op_def_.doc = text;
  return *this;
}

Status OpDefBuilder::Finalize(OpDef* op_def) const {
  OpDef result = op_def_;
  // Attrs first: arg specs refer to them.
  for (const std::string& spec : attr_specs_) {
    AttrDef attr;
    TW_RETURN_IF_ERROR(ParseAttrSpec(result.name, spec, &attr));
    if (result.FindAttr(attr.name)) {
      return errors::InvalidArgument("Op ", result.name, ": attr '", attr.name, "' declared twice");
    }
    result.attrs.push_back(std::move(attr));
  }
  for (const std::string& spec : input_specs_) {
    ArgDef arg;
    TW_RETURN_IF_ERROR(ParseArgSpec(result.name, spec, result, &arg));
    result.inputs.push_back(std::move(arg));
  }
  for (const std::string& spec : output_specs_) {
    ArgDef arg;
    TW_RETURN_IF_ERROR(ParseArgSpec(result.name, spec, result, &arg));
    result.outputs.push_back(std::move(arg));
  }
  *op_def = std::move(result);
  return Status::OK();
}

OpDefBuilderReceiver::OpDefBuilderReceiver(const OpDefBuilder& builder) {
  OpDef op_def;
  Status status = builder.Finalize(&op_def);
  if (status.ok()) status = OpRegistry::Global()->Register(std::move(op_def));
  if (!status.ok()) {
    // A broken registration is a bug in our own sources: fail loudly at load.
    std::fprintf(stderr, "tensorweave: op registration failed: %s\n", status.ToString().c_str());
    std::abort();
  }
}

}  // namespace tensorweave
