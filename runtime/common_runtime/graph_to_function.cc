#include "runtime/common_runtime/graph_to_function.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cctype>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "runtime/framework/node_def_util.h"
#include "runtime/framework/str_util.h"
#include "runtime/framework/types.h"

namespace tensorweave {
namespace {

using FunctionTensor = GraphToFunctionOptions::Tensor;

// The names a function's arguments, results and body nodes get: argument
// and result names must be lower-case identifiers ([a-z][a-z0-9_]*), and
// none may collide with another or with a body node's name.
class FunctionNames {
 public:
  // `name` made an identifier and unique.
  std::string ForArgument(const std::string& name) {
    std::string unique = MakeUnique(AsIdentifier(name));
    used_.insert(unique);
    return unique;
  }
  // A result name given by the caller: used as is, but only once.
  Status UseResultName(const std::string& name) {
    if (!used_.insert(name).second) {
      return errors::InvalidArgument("Cannot have duplicate output names. Name '", name,
                                     "' appears more than once in 'output_names' array.");
    }
    return Status::OK();
  }
  // The body node `name` under a name no argument or result has.
  std::string ForNode(const std::string& name) {
    std::string unique = MakeUnique(name);
    node_names_[name] = unique;
    used_.insert(unique);
    return unique;
  }
  // The name ForNode gave, or "" for a node outside the body.
  std::string NodeName(const std::string& name) const {
    auto found = node_names_.find(name);
    return found == node_names_.end() ? std::string() : found->second;
  }

 private:
  static std::string AsIdentifier(std::string name) {
    for (char& c : name) {
      c = std::isalnum(static_cast<unsigned char>(c))
              ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
              : '_';
    }
    size_t first_letter = 0;
    while (first_letter < name.size() &&
           !std::isalpha(static_cast<unsigned char>(name[first_letter])))
      ++first_letter;
    return first_letter == name.size() ? "unknown" : name.substr(first_letter);
  }
  std::string MakeUnique(const std::string& name) const {
    if (used_.count(name) == 0) return name;
    for (int suffix = 0;; ++suffix) {
      std::string candidate = StrCat(name, "_", suffix);
      if (used_.count(candidate) == 0) return candidate;
    }
  }

  std::unordered_set<std::string> used_;
  std::unordered_map<std::string, std::string> node_names_;
};

std::string FlatName(const Node* node, int index) { return StrCat(node->name(), ":", index); }

bool IsOpNodeOf(const Graph& graph, const Node* node) {
  return node != nullptr && node->IsOp() && graph.FindNodeId(node->id()) == node;
}

// The tensor is an output of one of the graph's op nodes, not of a ref type.
Status CheckTensor(const Graph& graph, const FunctionTensor& tensor, const std::string& context) {
  if (!IsOpNodeOf(graph, tensor.node)) {
    return errors::InvalidArgument("An operation that is not in the graph. ", context);
  }
  if (tensor.index < 0 || tensor.index >= tensor.node->num_outputs()) {
    return errors::OutOfRange("Node '", tensor.node->name(), "' (type: '",
                              tensor.node->type_string(),
                              "', num of outputs: ", tensor.node->num_outputs(),
                              ") does not have output ", tensor.index, ". ", context);
  }
  const DataType dtype = tensor.node->output_type(tensor.index);
  if (IsRefType(dtype)) {
    return errors::InvalidArgument("Output ", tensor.index, " of node '", tensor.node->name(),
                                   "' has a reference type ", DataTypeString(dtype), ". ", context);
  }
  return Status::OK();
}

Status CheckOptions(const Graph& graph, const GraphToFunctionOptions& options) {
  const std::string& name = options.name;
  std::set<std::pair<const Node*, int>> seen_inputs;
  for (size_t i = 0; i < options.inputs.size(); ++i) {
    const FunctionTensor& input = options.inputs[i];
    TW_RETURN_IF_ERROR(CheckTensor(
        graph, input,
        StrCat("Encountered while processing input ", i, " into function '", name, "'")));
    if (!seen_inputs.insert({input.node, input.index}).second) {
      return errors::InvalidArgument("TF_Output ", FlatName(input.node, input.index),
                                     " appears more than once in the input list");
    }
  }
  for (size_t i = 0; i < options.outputs.size(); ++i) {
    TW_RETURN_IF_ERROR(CheckTensor(
        graph, options.outputs[i],
        StrCat("Encountered while processing output ", i, " from function '", name, "'")));
  }
  if (!options.output_names.empty() && options.output_names.size() != options.outputs.size()) {
    return errors::InvalidArgument("Function '", name, "' has ", options.outputs.size(),
                                   " outputs but ", options.output_names.size(), " output names");
  }
  if (!options.control_output_names.empty() &&
      options.control_output_names.size() != options.control_outputs.size()) {
    return errors::InvalidArgument("Function '", name, "' has ", options.control_outputs.size(),
                                   " control outputs but ", options.control_output_names.size(),
                                   " control output names");
  }
  std::set<const Node*> seen_body;
  for (const Node* node : options.body) {
    if (!IsOpNodeOf(graph, node)) {
      return errors::InvalidArgument("A body operation of function '", name,
                                     "' is not in the graph");
    }
    if (!seen_body.insert(node).second) {
      return errors::InvalidArgument("Operation '", node->name(),
                                     "' appears more than once in the body of function '", name,
                                     "'");
    }
  }
  for (const Node* node : options.control_outputs) {
    if (seen_body.count(node) == 0) {
      return errors::InvalidArgument("A control output of function '", name,
                                     "' is not one of its body operations");
    }
  }
  return Status::OK();
}

// For every output of every body node, the name a function body uses for it
// ("node:out_arg:index"), unless the tensor is an argument already.
Status NameBodyOutputs(const std::vector<const Node*>& body, FunctionNames* names,
                       std::unordered_map<std::string, std::string>* renamed) {
  for (const Node* node : body) {
    const std::string node_name = names->ForNode(node->name());
    const auto& outputs = node->op_def().outputs;
    std::vector<int> sizes;
    TW_RETURN_IF_ERROR(ArgSizes(node->def(), node->op_def(), outputs, &sizes));
    int flat = 0;
    for (size_t arg = 0; arg < outputs.size(); ++arg) {
      for (int k = 0; k < sizes[arg]; ++k, ++flat) {
        renamed->emplace(FlatName(node, flat), StrCat(node_name, ":", outputs[arg].name, ":", k));
      }
    }
  }
  return Status::OK();
}

Status AddBodyNodes(const GraphToFunctionOptions& options, const FunctionNames& names,
                    const std::unordered_map<std::string, std::string>& renamed,
                    FunctionDef* function) {
  for (const Node* node : options.body) {
    NodeDef* node_def = function->add_node_def();
    *node_def = node->def();
    if (!node->assigned_device_name().empty()) node_def->set_device(node->assigned_device_name());
    node_def->set_name(names.NodeName(node->name()));
    node_def->clear_input();
    std::vector<const Edge*> data_inputs(node->num_inputs(), nullptr);
    std::vector<const Edge*> control_inputs;
    for (const Edge* edge : node->in_edges()) {
      if (edge->src()->IsSource()) continue;
      if (edge->IsControlEdge()) {
        control_inputs.push_back(edge);
      } else {
        data_inputs[edge->dst_input()] = edge;
      }
    }
    for (size_t i = 0; i < data_inputs.size(); ++i) {
      const Edge* edge = data_inputs[i];
      if (edge == nullptr) {
        return errors::InvalidArgument(
            "Graph to be converted to function appears to be malformed. ", "Node ", node->name(),
            " is missing input edge ", i);
      }
      const std::string source = FlatName(edge->src(), edge->src_output());
      auto found = renamed.find(source);
      if (found == renamed.end()) {
        return errors::InvalidArgument(
            "Input ", i, ", '", source, "', of node '", node->name(), "' in function '",
            options.name,
            "' is not available. You might need to include it in inputs or include its source "
            "node in the body");
      }
      node_def->add_input(found->second);
    }
    for (const Edge* edge : control_inputs) {
      const std::string source = names.NodeName(edge->src()->name());
      if (source.empty()) {
        return errors::InvalidArgument(
            "The source of control edge ", edge->src()->name(), " -> ", node->name(),
            " is not in the body. Encountered while creating function '", options.name, "'");
      }
      node_def->add_input(StrCat("^", source));
    }
    if (node->IsStateful()) function->mutable_signature()->set_is_stateful(true);
  }
  return Status::OK();
}

// A name suffix from the FunctionDef's deterministic bytes: FNV-1a, written
// with letters and digits only (valid in op names).
std::string HashSuffix(const FunctionDef& function) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    function.SerializeToCodedStream(&coded);
  }
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ull;
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string suffix;
  for (int i = 0; i < 11; ++i, hash /= 62) suffix += kAlphabet[hash % 62];
  return suffix;
}

}  // namespace

Status AllBodyNodes(const Graph& graph, const std::vector<FunctionTensor>& inputs,
                    const std::string& function_name, std::vector<const Node*>* body) {
  std::set<const Node*> input_nodes;
  for (const FunctionTensor& input : inputs) input_nodes.insert(input.node);
  for (const Node* node : graph.op_nodes()) {
    if (input_nodes.count(node) == 0) {
      body->push_back(node);
    } else if (node->num_outputs() != 1) {
      return errors::InvalidArgument(
          "When `num_opers` is set to -1, nodes referenced in `inputs` must have a single "
          "output. Node ",
          node->name(), " has ", node->num_outputs(),
          " outputs. Encountered while creating function '", function_name, "'");
    }
  }
  return Status::OK();
}

Status GraphToFunctionDef(const Graph& graph, const GraphToFunctionOptions& options,
                          FunctionDef* function) {
  TW_RETURN_IF_ERROR(CheckOptions(graph, options));
  function->Clear();
  proto::OpDef* signature = function->mutable_signature();
  if (!options.description.empty()) signature->set_description(options.description);
  FunctionNames names;
  std::unordered_map<std::string, std::string> renamed;  // "node:i" -> body name
  // Results first, so the caller's result names are never renamed.
  for (size_t i = 0; i < options.outputs.size(); ++i) {
    const FunctionTensor& output = options.outputs[i];
    proto::OpDef::ArgDef* arg = signature->add_output_arg();
    arg->set_type(output.node->output_type(output.index));
    if (options.output_names.empty()) {
      arg->set_name(names.ForArgument(output.node->name()));
    } else {
      TW_RETURN_IF_ERROR(names.UseResultName(options.output_names[i]));
      arg->set_name(options.output_names[i]);
    }
  }
  for (const FunctionTensor& input : options.inputs) {
    proto::OpDef::ArgDef* arg = signature->add_input_arg();
    arg->set_type(input.node->output_type(input.index));
    arg->set_name(names.ForArgument(input.node->name()));
    renamed[FlatName(input.node, input.index)] = arg->name();
  }
  TW_RETURN_IF_ERROR(NameBodyOutputs(options.body, &names, &renamed));
  TW_RETURN_IF_ERROR(AddBodyNodes(options, names, renamed, function));
  for (size_t i = 0; i < options.outputs.size(); ++i) {
    const std::string source = FlatName(options.outputs[i].node, options.outputs[i].index);
    auto found = renamed.find(source);
    if (found == renamed.end()) {
      return errors::InvalidArgument("TF_Output ", source,
                                     " is neither in the function body nor among function "
                                     "inputs. Encountered while creating function '",
                                     options.name, "'");
    }
    (*function->mutable_ret())[signature->output_arg(i).name()] = found->second;
  }
  for (size_t i = 0; i < options.control_outputs.size(); ++i) {
    const Node* node = options.control_outputs[i];
    const std::string name =
        options.control_output_names.empty() ? node->name() : options.control_output_names[i];
    if (function->control_ret().count(name) != 0) {
      return errors::InvalidArgument("Cannot have duplicate control output names. Name '", name,
                                     "' appears more than once in 'control_output_names' array.");
    }
    (*function->mutable_control_ret())[name] = names.NodeName(node->name());
  }
  signature->set_name(options.append_hash_to_name ? StrCat(options.name, "_", HashSuffix(*function))
                                                  : options.name);
  return Status::OK();
}

}  // namespace tensorweave
