#include "runtime/graph/while_loop_builder.h"

#include <map>
#include <utility>

#include "runtime/framework/node_def_util.h"
#include "runtime/framework/str_util.h"

namespace tensorweave {
namespace {

// "name" for i = 0, "name_i" after, as TensorFlow names repeated ops.
std::string Indexed(const std::string& prefix, const std::string& op, size_t i) {
  return i == 0 ? StrCat(prefix, "/", op) : StrCat(prefix, "/", op, "_", i);
}

NodeDef* AddNode(GraphDef* loop, const std::string& name, const std::string& op, DataType dtype,
                 std::vector<std::string> inputs) {
  NodeDef* node = loop->add_node();
  node->set_name(name);
  node->set_op(op);
  for (std::string& input : inputs) node->add_input(std::move(input));
  if (dtype != DT_INVALID) (*node->mutable_attr())["T"].set_type(dtype);
  return node;
}

bool InGraph(const Graph& graph, const Node* node) {
  return node != nullptr && node->IsOp() && graph.FindNodeId(node->id()) == node;
}

// Copies the op nodes of `graph` into `loop` as `scope`/<name>, except the
// placeholders in `inputs`, whose readers read `replacements` instead.
// Nodes left without any input get a control input from `pivot`.
Status CopyInto(const Graph& graph, const std::vector<const Node*>& inputs,
                const std::vector<std::string>& replacements, const std::string& scope,
                const std::string& pivot, GraphDef* loop) {
  std::map<std::string, std::string> replaced;  // placeholder name -> tensor
  for (size_t i = 0; i < inputs.size(); ++i) replaced[inputs[i]->name()] = replacements[i];
  for (const Node* node : graph.op_nodes()) {
    if (replaced.count(node->name()) != 0) continue;
    NodeDef copy = Graph::NodeDefWithInputs(node);
    copy.set_name(StrCat(scope, "/", node->name()));
    for (int i = 0; i < copy.input_size(); ++i) {
      TensorId id;
      if (!ParseTensorName(copy.input(i), &id)) {
        return errors::InvalidArgument("Operation '", node->name(), "' has an unconnected input ",
                                       i);
      }
      auto found = replaced.find(id.node);
      std::string source = found != replaced.end() ? found->second : StrCat(scope, "/", id.node);
      if (id.index < 0) {
        // A control input from a loop variable waits for the tensor's node.
        TensorId variable;
        ParseTensorName(source, &variable);
        copy.set_input(i, StrCat("^", variable.node));
      } else if (found != replaced.end()) {
        copy.set_input(i, source);
      } else {
        copy.set_input(i, StrCat(source, ":", id.index));
      }
    }
    if (copy.input_size() == 0) copy.add_input(StrCat("^", pivot));
    // A loop inside the condition or body: its frame is renamed with its
    // nodes, so it stays distinct from this loop's frame (and from the same
    // loop built in another body).
    if (copy.op() == "Enter" || copy.op() == "RefEnter") {
      auto frame = copy.mutable_attr()->find("frame_name");
      if (frame != copy.mutable_attr()->end())
        frame->second.set_s(StrCat(scope, "/", frame->second.s()));
    }
    *loop->add_node() = std::move(copy);
  }
  // The functions the copied operations call come along.
  if (!graph.flib_def().empty()) {
    const FunctionDefLibrary functions = graph.flib_def().ToProto();
    for (const FunctionDef& function : functions.function()) {
      *loop->mutable_library()->add_function() = function;
    }
    for (const GradientDef& gradient : functions.gradient()) {
      *loop->mutable_library()->add_gradient() = gradient;
    }
  }
  return Status::OK();
}

// The copied name of a cond or body tensor: a placeholder's replacement or
// scope/node:index.
std::string CopiedTensor(const WhileLoopSpec::Tensor& tensor,
                         const std::vector<const Node*>& inputs,
                         const std::vector<std::string>& replacements, const std::string& scope) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == tensor.node && tensor.index == 0) return replacements[i];
  }
  return StrCat(scope, "/", tensor.node->name(), ":", tensor.index);
}

Status CheckSpec(const WhileLoopSpec& spec) {
  const size_t n = spec.inputs.size();
  if (n == 0) return errors::InvalidArgument("TF_WhileParams must have at least one input");
  if (spec.input_types.size() != n || spec.cond_inputs.size() != n ||
      spec.body_inputs.size() != n || spec.body_outputs.size() != n || spec.cond == nullptr ||
      spec.body == nullptr) {
    return errors::InvalidArgument("The while loop's parts disagree on the number of variables");
  }
  const WhileLoopSpec::Tensor& cond = spec.cond_output;
  if (cond.node == nullptr) {
    return errors::InvalidArgument("TF_WhileParams `cond_output` field isn't set");
  }
  if (!InGraph(*spec.cond, cond.node) || cond.index < 0 || cond.index >= cond.node->num_outputs()) {
    return errors::InvalidArgument("TF_WhileParams `cond_output` is not an output of `cond_graph`");
  }
  const DataType cond_type = cond.node->output_type(cond.index);
  if (cond_type != DT_BOOL) {
    return errors::InvalidArgument(
        "BuildWhileLoop: 'cond' argument must return a boolean output, got ",
        DataTypeString(cond_type));
  }
  if (spec.cond_shapes != nullptr) {
    PartialTensorShape shape;
    if (spec.cond_shapes->GetShape(cond.node, cond.index, &shape).ok() && shape.dims() > 0) {
      return errors::InvalidArgument("The while loop's condition must be a scalar; '",
                                     cond.node->name(), ":", cond.index, "' has shape ",
                                     shape.DebugString());
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const WhileLoopSpec::Tensor& out = spec.body_outputs[i];
    if (out.node == nullptr) {
      return errors::InvalidArgument("TF_WhileParams `body_outputs[", i, "]` field isn't set");
    }
    if (!InGraph(*spec.body, out.node) || out.index < 0 || out.index >= out.node->num_outputs()) {
      return errors::InvalidArgument("TF_WhileParams `body_outputs[", i,
                                     "]` is not an output of `body_graph`");
    }
    const DataType type = out.node->output_type(out.index);
    if (type != spec.input_types[i]) {
      return errors::InvalidArgument("Body output ", i, " ('", out.node->name(), ":", out.index,
                                     "') has type ", DataTypeString(type), " but loop variable ", i,
                                     " has type ", DataTypeString(spec.input_types[i]));
    }
  }
  return Status::OK();
}

}  // namespace

Status BuildWhileLoopGraphDef(const WhileLoopSpec& spec, GraphDef* loop,
                              std::vector<std::string>* exit_names) {
  TW_RETURN_IF_ERROR(CheckSpec(spec));
  const std::string& prefix = spec.prefix;
  const size_t n = spec.inputs.size();
  std::vector<std::string> merges(n), identities(n);
  exit_names->clear();
  for (size_t i = 0; i < n; ++i) {
    const DataType dtype = spec.input_types[i];
    NodeDef* enter = AddNode(loop, Indexed(prefix, "Enter", i), "Enter", dtype, {spec.inputs[i]});
    (*enter->mutable_attr())["frame_name"].set_s(prefix);
    (*enter->mutable_attr())["is_constant"].set_b(false);
    (*enter->mutable_attr())["parallel_iterations"].set_i(spec.parallel_iterations);
    NodeDef* merge = AddNode(loop, Indexed(prefix, "Merge", i), "Merge", dtype,
                             {enter->name(), Indexed(prefix, "NextIteration", i)});
    (*merge->mutable_attr())["N"].set_i(2);
    merges[i] = StrCat(merge->name(), ":0");
  }
  const std::string cond_scope = StrCat(prefix, "/cond");
  TW_RETURN_IF_ERROR(CopyInto(*spec.cond, spec.cond_inputs, merges, cond_scope,
                              Indexed(prefix, "Merge", 0), loop));
  const std::string loop_cond = StrCat(prefix, "/LoopCond");
  AddNode(loop, loop_cond, "LoopCond", DT_INVALID,
          {CopiedTensor(spec.cond_output, spec.cond_inputs, merges, cond_scope)});
  for (size_t i = 0; i < n; ++i) {
    const DataType dtype = spec.input_types[i];
    const std::string switch_name = Indexed(prefix, "Switch", i);
    AddNode(loop, switch_name, "Switch", dtype, {merges[i], loop_cond});
    AddNode(loop, Indexed(prefix, "Exit", i), "Exit", dtype, {StrCat(switch_name, ":0")});
    AddNode(loop, Indexed(prefix, "Identity", i), "Identity", dtype, {StrCat(switch_name, ":1")});
    identities[i] = StrCat(Indexed(prefix, "Identity", i), ":0");
    exit_names->push_back(Indexed(prefix, "Exit", i));
  }
  const std::string body_scope = StrCat(prefix, "/body");
  TW_RETURN_IF_ERROR(CopyInto(*spec.body, spec.body_inputs, identities, body_scope,
                              Indexed(prefix, "Identity", 0), loop));
  for (size_t i = 0; i < n; ++i) {
    AddNode(loop, Indexed(prefix, "NextIteration", i), "NextIteration", spec.input_types[i],
            {CopiedTensor(spec.body_outputs[i], spec.body_inputs, identities, body_scope)});
  }
  return Status::OK();
}

}  // namespace tensorweave
