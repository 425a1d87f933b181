// ApiDefMap (api_def_map.h): per-op ApiDefs built from OpDefs, merged with
// ApiDefs text, with the docs' backticked names renamed on first use.
#include "runtime/framework/api_def_map.h"

#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "runtime/framework/str_util.h"
#include "runtime/framework/tensor_summary.h"

namespace tensorweave {
namespace {

ApiDef ApiDefFromOpDef(const proto::OpDef& op_def) {
  ApiDef api_def;
  api_def.set_graph_op_name(op_def.name());
  api_def.set_visibility(ApiDef::VISIBLE);
  api_def.add_endpoint()->set_name(op_def.name());
  for (const auto& input : op_def.input_arg()) {
    ApiDef::Arg* arg = api_def.add_in_arg();
    arg->set_name(input.name());
    arg->set_rename_to(input.name());
    arg->set_description(input.description());
    api_def.add_arg_order(input.name());
  }
  for (const auto& output : op_def.output_arg()) {
    ApiDef::Arg* arg = api_def.add_out_arg();
    arg->set_name(output.name());
    arg->set_rename_to(output.name());
    arg->set_description(output.description());
  }
  for (const auto& op_attr : op_def.attr()) {
    ApiDef::Attr* attr = api_def.add_attr();
    attr->set_name(op_attr.name());
    attr->set_rename_to(op_attr.name());
    if (op_attr.has_default_value()) *attr->mutable_default_value() = op_attr.default_value();
    attr->set_description(op_attr.description());
  }
  api_def.set_summary(op_def.summary());
  api_def.set_description(op_def.description());
  return api_def;
}

// Overrides `base`'s args with `overrides`' non-empty fields, matched by
// name; an override naming no arg of the op is FAILED_PRECONDITION.
Status MergeArgs(const google::protobuf::RepeatedPtrField<ApiDef::Arg>& overrides,
                 google::protobuf::RepeatedPtrField<ApiDef::Arg>* base, const std::string& op) {
  for (const ApiDef::Arg& change : overrides) {
    auto found = std::find_if(base->begin(), base->end(),
                              [&](const ApiDef::Arg& arg) { return arg.name() == change.name(); });
    if (found == base->end()) {
      return errors::FailedPrecondition("Argument ", change.name(), " not defined in base api for ",
                                        op);
    }
    if (!change.rename_to().empty()) found->set_rename_to(change.rename_to());
    if (!change.description().empty()) found->set_description(change.description());
  }
  return Status::OK();
}

Status MergeApiDef(const ApiDef& change, ApiDef* base) {
  const std::string& op = base->graph_op_name();
  if (change.visibility() != ApiDef::DEFAULT_VISIBILITY) base->set_visibility(change.visibility());
  if (change.endpoint_size() > 0) *base->mutable_endpoint() = change.endpoint();
  TW_RETURN_IF_ERROR(MergeArgs(change.in_arg(), base->mutable_in_arg(), op));
  TW_RETURN_IF_ERROR(MergeArgs(change.out_arg(), base->mutable_out_arg(), op));
  if (change.arg_order_size() > 0) {
    if (change.arg_order_size() != base->arg_order_size()) {
      return errors::FailedPrecondition("Invalid number of arguments ", change.arg_order_size(),
                                        " for ", op, ". Expected: ", base->arg_order_size());
    }
    if (!std::is_permutation(change.arg_order().begin(), change.arg_order().end(),
                             base->arg_order().begin())) {
      return errors::FailedPrecondition(
          "Invalid arg_order: ", StrJoin(change.arg_order(), ", "), " for ", op,
          ". All elements in arg_order override must match base arg_order: ",
          StrJoin(base->arg_order(), ", "));
    }
    *base->mutable_arg_order() = change.arg_order();
  }
  for (const ApiDef::Attr& attr_change : change.attr()) {
    auto& attrs = *base->mutable_attr();
    auto found = std::find_if(attrs.begin(), attrs.end(), [&](const ApiDef::Attr& attr) {
      return attr.name() == attr_change.name();
    });
    if (found == attrs.end()) {
      return errors::FailedPrecondition("Attribute ", attr_change.name(),
                                        " not defined in base api for ", op);
    }
    if (!attr_change.rename_to().empty()) found->set_rename_to(attr_change.rename_to());
    if (attr_change.has_default_value()) {
      *found->mutable_default_value() = attr_change.default_value();
    }
    if (!attr_change.description().empty()) found->set_description(attr_change.description());
  }
  if (!change.summary().empty()) base->set_summary(change.summary());
  std::string description =
      change.description().empty() ? base->description() : change.description();
  if (!change.description_prefix().empty()) {
    description = StrCat(change.description_prefix(), "\n", description);
  }
  if (!change.description_suffix().empty()) {
    description = StrCat(description, "\n", change.description_suffix());
  }
  base->set_description(description);
  return Status::OK();
}

void ReplaceAll(const std::string& from, const std::string& to, std::string* text) {
  for (size_t at = text->find(from); at != std::string::npos; at = text->find(from, at)) {
    text->replace(at, from.size(), to);
    at += to.size();
  }
}

// `name` in backticks becomes `new_name` in every doc string of `api_def`.
void RenameInDocs(const std::string& name, const std::string& new_name, ApiDef* api_def) {
  const std::string from = StrCat("`", name, "`");
  const std::string to = StrCat("`", new_name, "`");
  for (auto& arg : *api_def->mutable_in_arg()) ReplaceAll(from, to, arg.mutable_description());
  for (auto& arg : *api_def->mutable_out_arg()) ReplaceAll(from, to, arg.mutable_description());
  for (auto& attr : *api_def->mutable_attr()) ReplaceAll(from, to, attr.mutable_description());
  ReplaceAll(from, to, api_def->mutable_summary());
  ReplaceAll(from, to, api_def->mutable_description());
}

// `text` as a text-format string literal (UTF-8 kept, other bytes escaped).
std::string Quoted(const std::string& text) { return StrCat("\"", Utf8SafeCEscape(text), "\""); }

bool IsIdentifier(const std::string& word) {
  if (word.empty()) return false;
  return std::all_of(word.begin(), word.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

std::string Trimmed(const std::string& line) {
  const size_t begin = line.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  return line.substr(begin, line.find_last_not_of(" \t\r") - begin + 1);
}

}  // namespace

std::string TextFromMultiline(const std::string& text) {
  std::vector<std::string> lines = StrSplit(text, '\n');
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const size_t marker = line.rfind("<<");
    const std::string terminator =
        marker == std::string::npos ? "" : Trimmed(line.substr(marker + 2));
    if (!IsIdentifier(terminator)) {
      out += line;
      if (i + 1 < lines.size()) out += '\n';
      continue;
    }
    std::string value;
    size_t end = i + 1;
    for (; end < lines.size() && Trimmed(lines[end]) != terminator; ++end) {
      if (end > i + 1) value += '\n';
      value += lines[end];
    }
    out += line.substr(0, marker) + Quoted(value) + "\n";
    i = end;  // the terminator line (or past the end when it is missing)
  }
  return out;
}

ApiDefMap::ApiDefMap(const proto::OpList& op_list) {
  for (const proto::OpDef& op_def : op_list.op()) {
    api_defs_[op_def.name()] = ApiDefFromOpDef(op_def);
  }
}

Status ApiDefMap::Put(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  if (docs_final_) {
    return errors::FailedPrecondition(
        "TF_ApiDefMapPut cannot be called after TF_ApiDefMapGet has been called.");
  }
  ApiDefs parsed;
  if (!google::protobuf::TextFormat::ParseFromString(TextFromMultiline(text), &parsed)) {
    return errors::InvalidArgument("ApiDefs text does not parse as an ApiDefs message");
  }
  for (const ApiDef& change : parsed.op()) {
    auto found = api_defs_.find(change.graph_op_name());
    if (found == api_defs_.end()) continue;  // an op this map was not built with
    TW_RETURN_IF_ERROR(MergeApiDef(change, &found->second));
  }
  return Status::OK();
}

void ApiDefMap::FinalizeDocs() {
  for (auto& entry : api_defs_) {
    ApiDef& api_def = entry.second;
    if (api_def.endpoint_size() > 0 && api_def.endpoint(0).name() != api_def.graph_op_name()) {
      RenameInDocs(api_def.graph_op_name(), api_def.endpoint(0).name(), &api_def);
    }
    for (const auto& arg :
         std::vector<ApiDef::Arg>(api_def.in_arg().begin(), api_def.in_arg().end())) {
      if (arg.name() != arg.rename_to()) {
        RenameInDocs(arg.name(), arg.rename_to(), &api_def);
      }
    }
    for (const auto& arg :
         std::vector<ApiDef::Arg>(api_def.out_arg().begin(), api_def.out_arg().end())) {
      if (arg.name() != arg.rename_to()) {
        RenameInDocs(arg.name(), arg.rename_to(), &api_def);
      }
    }
    for (const auto& attr :
         std::vector<ApiDef::Attr>(api_def.attr().begin(), api_def.attr().end())) {
      if (attr.name() != attr.rename_to()) {
        RenameInDocs(attr.name(), attr.rename_to(), &api_def);
      }
    }
  }
}

Status ApiDefMap::Get(const std::string& name, ApiDef* api_def) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!docs_final_) {
    FinalizeDocs();
    docs_final_ = true;
  }
  auto found = api_defs_.find(name);
  if (found == api_defs_.end()) {
    return errors::NotFound("No ApiDef for op ", name, ": the OpList had no such op");
  }
  *api_def = found->second;
  return Status::OK();
}

}  // namespace tensorweave
