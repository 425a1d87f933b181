#include "runtime/common_runtime/function_instantiate.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <map>
#include <unordered_map>
#include <vector>

#include "runtime/framework/node_def_util.h"

namespace tensorweave {
namespace {

// Replaces placeholders in `value` (and in the attrs of func values) by the
// call's attrs.
Status Substitute(const AttrMap& attrs, AttrValue* value) {
  if (!value->placeholder().empty()) {
    auto found = attrs.find(value->placeholder());
    if (found == attrs.end()) {
      return errors::InvalidArgument("placeholder '$", value->placeholder(),
                                     "' names no attr of the function");
    }
    *value = found->second;
    return Status::OK();
  }
  auto substitute_func = [&](NameAttrList* func) -> Status {
    for (auto& entry : *func->mutable_attr()) TW_RETURN_IF_ERROR(Substitute(attrs, &entry.second));
    return Status::OK();
  };
  if (value->has_func()) TW_RETURN_IF_ERROR(substitute_func(value->mutable_func()));
  if (value->has_list()) {
    for (NameAttrList& func : *value->mutable_list()->mutable_func()) {
      TW_RETURN_IF_ERROR(substitute_func(&func));
    }
  }
  return Status::OK();
}

// Where the tensors of each output arg of a body node sit among its outputs.
struct OutputRange {
  int start = 0;
  int size = 0;
};

}  // namespace

AttrMap SignatureAttrs(const OpDef& signature, const AttrMap& attrs) {
  AttrMap used;
  for (const AttrDef& attr : signature.attrs) {
    auto found = attrs.find(attr.name);
    if (found != attrs.end()) {
      used[attr.name] = found->second;
    } else if (attr.has_default) {
      used[attr.name] = attr.default_value;
    }
  }
  return used;
}

std::string InstantiationKey(const std::string& name, const AttrMap& attrs) {
  NameAttrList key;
  key.set_name(name);
  *key.mutable_attr() = attrs;
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);  // map order fixed
    key.SerializeToCodedStream(&coded);
  }
  return bytes;
}

Status InstantiateFunction(const FunctionDef& function, const OpDef& signature,
                           const AttrMap& attrs, const OpRegistry& ops,
                           InstantiatedFunction* result) {
  *result = InstantiatedFunction();
  const std::string& name = signature.name;
  auto bad = [&](const Status& status) {
    return errors::InvalidArgument("Function '", name, "': ", status.message());
  };

  // The call as a node of the signature's op: its arg sizes and dtypes.
  NodeDef call;
  call.set_name(name);
  call.set_op(name);
  *call.mutable_attr() = SignatureAttrs(signature, attrs);
  for (const AttrDef& attr : signature.attrs) {
    if (!call.attr().count(attr.name)) {
      return errors::InvalidArgument("Function '", name, "' needs attr '", attr.name,
                                     "', which the call does not give");
    }
  }
  std::vector<int> input_sizes, output_sizes;
  Status status = InOutTypesForNode(call, signature, &result->arg_types, &result->ret_types);
  if (status.ok()) status = ArgSizes(call, signature, signature.inputs, &input_sizes);
  if (status.ok()) status = ArgSizes(call, signature, signature.outputs, &output_sizes);
  if (!status.ok()) return bad(status);
  const AttrMap& call_attrs = call.attr();

  GraphDef& graph = result->graph;
  // Input arg name -> the plain tensors ("node:0") it stands for.
  std::unordered_map<std::string, std::vector<std::string>> arg_tensors;
  int arg_index = 0;
  for (size_t a = 0; a < signature.inputs.size(); ++a) {
    std::vector<std::string>& tensors = arg_tensors[signature.inputs[a].name];
    for (int k = 0; k < input_sizes[a]; ++k, ++arg_index) {
      NodeDef* arg = graph.add_node();
      arg->set_name(StrCat("_arg_", signature.inputs[a].name, "_", k));
      arg->set_op("_Arg");
      SetAttrValue(result->arg_types[arg_index], &(*arg->mutable_attr())["T"]);
      SetAttrValue(int64_t{arg_index}, &(*arg->mutable_attr())["index"]);
      tensors.push_back(arg->name() + ":0");
    }
  }

  // Body nodes with concrete attrs, and where their output args sit.
  std::unordered_map<std::string, std::map<std::string, OutputRange>> outputs_of;
  const int first_body = graph.node_size();
  for (const NodeDef& body_node : function.node_def()) {
    NodeDef* node = graph.add_node();
    *node = body_node;
    node->clear_input();
    node->clear_device();  // the call runs on its caller's device
    auto bad_node = [&](const Status& why) {
      return errors::InvalidArgument("Function '", name, "': body node '", body_node.name(),
                                     "': ", why.message());
    };
    for (auto& entry : *node->mutable_attr()) {
      status = Substitute(call_attrs, &entry.second);
      if (!status.ok()) return bad_node(status);
    }
    const OpDef* op = ops.LookUp(node->op());
    if (op == nullptr) {
      return bad_node(errors::InvalidArgument("op '", node->op(), "' is not registered"));
    }
    AddDefaultsToNodeDef(*op, node);
    std::vector<int> sizes;
    status = ArgSizes(*node, *op, op->outputs, &sizes);
    if (!status.ok()) return bad_node(status);
    std::map<std::string, OutputRange>& ranges = outputs_of[node->name()];
    int start = 0;
    for (size_t o = 0; o < op->outputs.size(); ++o) {
      ranges[op->outputs[o].name] = {start, sizes[o]};
      start += sizes[o];
    }
  }

  // "x", "node:output_arg" (every tensor) or "node:output_arg:index".
  auto resolve = [&](const std::string& text, std::vector<std::string>* tensors) -> Status {
    const size_t first = text.find(':');
    if (first == std::string::npos) {
      auto arg = arg_tensors.find(text);
      if (arg == arg_tensors.end()) {
        return errors::InvalidArgument("'", text, "' names no input arg");
      }
      tensors->insert(tensors->end(), arg->second.begin(), arg->second.end());
      return Status::OK();
    }
    const std::string node = text.substr(0, first);
    const size_t second = text.find(':', first + 1);
    const std::string output = text.substr(
        first + 1, second == std::string::npos ? std::string::npos : second - first - 1);
    auto ranges = outputs_of.find(node);
    if (ranges == outputs_of.end()) return errors::InvalidArgument("'", text, "' names no node");
    auto range = ranges->second.find(output);
    if (range == ranges->second.end()) {
      return errors::InvalidArgument("'", text, "': node '", node, "' has no output '", output,
                                     "'");
    }
    if (second == std::string::npos) {
      for (int k = 0; k < range->second.size; ++k) {
        tensors->push_back(StrCat(node, ":", range->second.start + k));
      }
      return Status::OK();
    }
    int64_t index = -1;
    const std::string digits = text.substr(second + 1);
    if (!digits.empty() && digits.size() <= 9 &&
        digits.find_first_not_of("0123456789") == std::string::npos) {
      index = std::stoll(digits);
    }
    if (index < 0 || index >= range->second.size) {
      return errors::InvalidArgument("'", text, "' asks for tensor ", digits, " of output '",
                                     output, "', which has ", range->second.size);
    }
    tensors->push_back(StrCat(node, ":", range->second.start + index));
    return Status::OK();
  };

  for (int i = 0; i < function.node_def_size(); ++i) {
    const NodeDef& body_node = function.node_def(i);
    NodeDef* node = graph.mutable_node(first_body + i);
    std::vector<std::string> data, control;
    for (const std::string& input : body_node.input()) {
      if (!input.empty() && input[0] == '^') {
        if (!outputs_of.count(input.substr(1))) {
          return errors::InvalidArgument("Function '", name, "': body node '", body_node.name(),
                                         "' has control input '", input, "', which names no node");
        }
        control.push_back(input);
        continue;
      }
      status = resolve(input, &data);
      if (!status.ok()) {
        return errors::InvalidArgument("Function '", name, "': input of body node '",
                                       body_node.name(), "': ", status.message());
      }
    }
    for (const std::string& input : data) node->add_input(input);
    for (const std::string& input : control) node->add_input(input);
  }

  int ret_index = 0;
  for (size_t o = 0; o < signature.outputs.size(); ++o) {
    const std::string& output = signature.outputs[o].name;
    auto ret = function.ret().find(output);
    if (ret == function.ret().end()) {
      return errors::InvalidArgument("Function '", name, "': output '", output,
                                     "' has no return value");
    }
    std::vector<std::string> tensors;
    status = resolve(ret->second, &tensors);
    if (!status.ok()) {
      return errors::InvalidArgument("Function '", name, "': return value of '", output,
                                     "': ", status.message());
    }
    if (static_cast<int>(tensors.size()) != output_sizes[o]) {
      return errors::InvalidArgument("Function '", name, "': output '", output, "' has ",
                                     output_sizes[o], " tensors but its return value '",
                                     ret->second, "' gives ", tensors.size());
    }
    for (int k = 0; k < output_sizes[o]; ++k, ++ret_index) {
      NodeDef* retval = graph.add_node();
      retval->set_name(StrCat("_retval_", output, "_", k));
      retval->set_op("_Retval");
      retval->add_input(tensors[k]);
      SetAttrValue(result->ret_types[ret_index], &(*retval->mutable_attr())["T"]);
      SetAttrValue(int64_t{ret_index}, &(*retval->mutable_attr())["index"]);
    }
  }
  return Status::OK();
}

}  // namespace tensorweave
