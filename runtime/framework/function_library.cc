#include "runtime/framework/function_library.h"

#include <google/protobuf/util/message_differencer.h>

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "runtime/framework/op_def_proto.h"

namespace tensorweave {
namespace {

void CollectFunctionNames(const AttrValue& value, std::vector<std::string>* names);

void CollectFromNameAttrList(const NameAttrList& func, std::vector<std::string>* names) {
  names->push_back(func.name());
  // Attrs of a function-valued attr may name functions in turn (a call's
  // function passed on to a branch).
  std::vector<std::string> keys;
  for (const auto& entry : func.attr()) keys.push_back(entry.first);
  std::sort(keys.begin(), keys.end());
  for (const std::string& key : keys) CollectFunctionNames(func.attr().at(key), names);
}

void CollectFunctionNames(const AttrValue& value, std::vector<std::string>* names) {
  if (value.has_func()) CollectFromNameAttrList(value.func(), names);
  if (value.has_list()) {
    for (const NameAttrList& func : value.list().func()) CollectFromNameAttrList(func, names);
  }
}

// "node:output_arg:index" split into its parts; a bare "name" is an input
// arg. False when the text has neither form.
struct BodyTensorRef {
  std::string node;  // the arg's name when `output_arg` is empty
  std::string output_arg;
  int index = 0;
};

bool ParseBodyTensorRef(const std::string& text, BodyTensorRef* ref) {
  *ref = BodyTensorRef();
  const size_t first = text.find(':');
  ref->node = text.substr(0, first);
  if (ref->node.empty()) return false;
  if (first == std::string::npos) return true;
  const size_t second = text.find(':', first + 1);
  ref->output_arg =
      text.substr(first + 1, second == std::string::npos ? second : second - first - 1);
  if (ref->output_arg.empty()) return false;
  if (second == std::string::npos) return true;
  const std::string digits = text.substr(second + 1);
  if (digits.empty() || digits.size() > 9) return false;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  ref->index = std::stoi(digits);
  return true;
}

// The body's nodes form no cycle except through a while loop's back edge
// (NextIteration -> Merge), as in a graph. Its input names were checked.
Status CheckBodyIsAcyclic(const FunctionDef& function, const std::string& name) {
  const int n = function.node_def_size();
  std::unordered_map<std::string, int> index;
  for (int i = 0; i < n; ++i) index[function.node_def(i).name()] = i;
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (int i = 0; i < n; ++i) {
    const NodeDef& node = function.node_def(i);
    const bool is_merge = node.op() == "Merge" || node.op() == "RefMerge";
    for (const std::string& input : node.input()) {
      const std::string producer_name =
          input.substr(input[0] == '^' ? 1 : 0, input.find(':') - (input[0] == '^' ? 1 : 0));
      auto producer = index.find(producer_name);
      if (producer == index.end()) continue;  // an input arg
      const std::string& producer_op = function.node_def(producer->second).op();
      if (is_merge && (producer_op == "NextIteration" || producer_op == "RefNextIteration")) {
        continue;
      }
      consumers[producer->second].push_back(i);
      ++pending[i];
    }
  }
  std::vector<int> ready;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  int ordered = 0;
  while (!ready.empty()) {
    const int i = ready.back();
    ready.pop_back();
    ++ordered;
    for (int consumer : consumers[i]) {
      if (--pending[consumer] == 0) ready.push_back(consumer);
    }
  }
  if (ordered == n) return Status::OK();
  for (int i = 0; i < n; ++i) {
    if (pending[i] > 0) {
      return errors::InvalidArgument("Function '", name, "': body node '",
                                     function.node_def(i).name(),
                                     "' is on a cycle (the only cycles allowed are while loops, "
                                     "closed by an edge from a NextIteration to a Merge)");
    }
  }
  return Status::OK();
}

// Checks the names of `function`'s body against its signature and the ops
// of `ops` (which already holds the signatures of the functions being
// added).
Status ValidateBody(const FunctionDef& function, const OpDef& signature, const OpRegistry& ops) {
  const std::string& name = signature.name;
  auto bad = [&](auto&&... why) {
    return errors::InvalidArgument("Function '", name, "': ", why...);
  };
  std::unordered_set<std::string> inputs;
  for (const ArgDef& arg : signature.inputs) {
    if (!inputs.insert(arg.name).second) return bad("input arg '", arg.name, "' appears twice");
  }
  std::unordered_map<std::string, const OpDef*> body;
  for (const NodeDef& node : function.node_def()) {
    if (node.name().empty()) return bad("a body node (op '", node.op(), "') has no name");
    if (inputs.count(node.name())) {
      return bad("body node '", node.name(), "' has the name of an input arg");
    }
    const OpDef* op = ops.LookUp(node.op());
    if (op == nullptr) {
      return bad("body node '", node.name(), "' has op '", node.op(),
                 "', which is neither a registered op nor a function of the library");
    }
    if (!body.emplace(node.name(), op).second) {
      return bad("body node '", node.name(), "' appears twice");
    }
  }
  auto check_data_ref = [&](const std::string& where, const std::string& text) -> Status {
    BodyTensorRef ref;
    if (!ParseBodyTensorRef(text, &ref)) return bad(where, " '", text, "' is malformed");
    if (ref.output_arg.empty()) {
      if (inputs.count(ref.node)) return Status::OK();
      return bad(where, " '", text, "' names no input arg (body outputs are node:output:index)");
    }
    auto found = body.find(ref.node);
    if (found == body.end()) return bad(where, " '", text, "' names no body node");
    for (const ArgDef& output : found->second->outputs) {
      if (output.name == ref.output_arg) return Status::OK();
    }
    return bad(where, " '", text, "': op '", found->second->name, "' has no output '",
               ref.output_arg, "'");
  };
  for (const NodeDef& node : function.node_def()) {
    for (const std::string& input : node.input()) {
      const std::string where = StrCat("input of body node '", node.name(), "'");
      if (!input.empty() && input[0] == '^') {
        if (!body.count(input.substr(1))) return bad(where, " '", input, "' names no body node");
        continue;
      }
      TW_RETURN_IF_ERROR(check_data_ref(where, input));
    }
  }
  TW_RETURN_IF_ERROR(CheckBodyIsAcyclic(function, name));
  std::set<std::string> outputs;
  for (const ArgDef& arg : signature.outputs) {
    if (!outputs.insert(arg.name).second) return bad("output arg '", arg.name, "' appears twice");
    auto ret = function.ret().find(arg.name);
    if (ret == function.ret().end()) return bad("output arg '", arg.name, "' has no return value");
    TW_RETURN_IF_ERROR(check_data_ref(StrCat("return value of '", arg.name, "'"), ret->second));
  }
  for (const auto& [ret_name, value] : function.ret()) {
    if (!outputs.count(ret_name)) return bad("returns '", ret_name, "', which is no output arg");
  }
  for (const auto& [ret_name, node_name] : function.control_ret()) {
    if (!body.count(node_name)) {
      return bad("control output '", ret_name, "' names no body node ('", node_name, "')");
    }
  }
  return Status::OK();
}

// The functions each function calls: body ops that are functions, and the
// functions its body nodes' attrs name. INVALID_ARGUMENT for a func attr
// naming neither a function nor an op.
Status Callees(const FunctionDef& function, const OpRegistry& ops,
               const std::function<bool(const std::string&)>& is_function,
               std::vector<std::string>* callees) {
  callees->clear();
  for (const NodeDef& node : function.node_def()) {
    if (is_function(node.op())) callees->push_back(node.op());
    for (const std::string& named : FunctionsNamedByAttrs(node)) {
      if (is_function(named)) {
        callees->push_back(named);
      } else if (ops.LookUp(named) == nullptr) {
        return errors::InvalidArgument("Function '", function.signature().name(), "': body node '",
                                       node.name(), "' calls function '", named,
                                       "', which is not in the library");
      }
    }
  }
  return Status::OK();
}

// No function reaches itself and no chain of calls is deeper than
// kMaxFunctionCallDepth. Iterative, so a long chain cannot exhaust the stack.
Status CheckCallGraph(const std::map<std::string, std::vector<std::string>>& callees) {
  enum : char { kUnvisited, kOnPath, kDone };
  std::unordered_map<std::string, char> state;
  std::unordered_map<std::string, int> depth;
  for (const auto& root : callees) {
    if (state[root.first] != kUnvisited) continue;
    // (function, next callee to visit)
    std::vector<std::pair<const std::string*, size_t>> path = {{&root.first, 0}};
    state[root.first] = kOnPath;
    while (!path.empty()) {
      auto& [function, next] = path.back();
      const std::vector<std::string>& calls = callees.at(*function);
      if (next < calls.size()) {
        const std::string& callee = calls[next++];
        const char callee_state = state[callee];
        if (callee_state == kOnPath) {
          std::string cycle;
          bool in_cycle = false;
          for (const auto& step : path) {
            in_cycle |= *step.first == callee;
            if (in_cycle) cycle += *step.first + " -> ";
          }
          return errors::InvalidArgument("Function '", callee, "' calls itself (", cycle, callee,
                                         "); recursive functions are not supported");
        }
        if (callee_state == kUnvisited) {
          state[callee] = kOnPath;
          path.push_back({&callees.find(callee)->first, 0});
        }
        continue;
      }
      int deepest = 0;
      for (const std::string& callee : calls) deepest = std::max(deepest, depth[callee]);
      depth[*function] = deepest + 1;
      if (depth[*function] > kMaxFunctionCallDepth) {
        return errors::InvalidArgument("Function '", *function, "' nests calls ", depth[*function],
                                       " deep; at most ", kMaxFunctionCallDepth, " are supported");
      }
      state[*function] = kDone;
      path.pop_back();
    }
  }
  return Status::OK();
}

}  // namespace

bool SameFunction(const FunctionDef& a, const FunctionDef& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

std::vector<std::string> FunctionsNamedByAttrs(const NodeDef& node) {
  std::vector<std::string> keys;
  for (const auto& entry : node.attr()) keys.push_back(entry.first);
  std::sort(keys.begin(), keys.end());
  std::vector<std::string> names;
  for (const std::string& key : keys) CollectFunctionNames(node.attr().at(key), &names);
  return names;
}

FunctionLibraryDefinition::FunctionLibraryDefinition(const OpRegistry* ops)
    : ops_(ops), registry_(ops) {}

const FunctionDef* FunctionLibraryDefinition::Find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto found = functions_.find(name);
  return found == functions_.end() ? nullptr : found->second.get();
}

bool FunctionLibraryDefinition::empty() const {
  std::lock_guard<std::mutex> lock(mu_);
  return functions_.empty() && gradients_.empty() && registered_gradients_.empty();
}

FunctionDefLibrary FunctionLibraryDefinition::ToProto() const {
  std::lock_guard<std::mutex> lock(mu_);
  FunctionDefLibrary library;
  for (const FunctionDef* function : order_) *library.add_function() = *function;
  for (const GradientDef& gradient : gradients_) *library.add_gradient() = gradient;
  for (const RegisteredGradient& registered : registered_gradients_) {
    *library.add_registered_gradients() = registered;
  }
  return library;
}

Status FunctionLibraryDefinition::AddLibrary(const FunctionDefLibrary& library) {
  if (library.function_size() == 0 && library.gradient_size() == 0 &&
      library.registered_gradients_size() == 0) {
    return Status::OK();
  }
  std::lock_guard<std::mutex> lock(mu_);
  // The new functions' signatures, resolvable next to everything already
  // here while the bodies are checked; committed only when all pass.
  OpRegistry pending(&registry_);
  std::vector<const FunctionDef*> added;
  std::map<std::string, std::unique_ptr<OpDef>> signatures;
  for (const FunctionDef& function : library.function()) {
    const std::string& name = function.signature().name();
    if (name.empty()) return errors::InvalidArgument("A function of the library has no name");
    auto existing = functions_.find(name);
    if (existing != functions_.end()) {
      if (SameFunction(*existing->second, function)) continue;
      return errors::InvalidArgument("Cannot add function '", name,
                                     "' because a different function with the same name already "
                                     "exists");
    }
    if (signatures.count(name)) {
      return errors::InvalidArgument("Function '", name, "' appears twice in the library");
    }
    if (ops_->LookUp(name) != nullptr) {
      return errors::InvalidArgument("Cannot add function '", name,
                                     "' because an op with the same name already exists");
    }
    auto signature = std::make_unique<OpDef>();
    const Status parsed = OpDefFromProto(function.signature(), signature.get());
    if (!parsed.ok()) {
      return errors::InvalidArgument("Function '", name,
                                     "' has a bad signature: ", parsed.message());
    }
    TW_RETURN_IF_ERROR(pending.Register(*signature));
    signatures[name] = std::move(signature);
    added.push_back(&function);
  }
  for (const FunctionDef* function : added) {
    TW_RETURN_IF_ERROR(ValidateBody(*function, *signatures[function->signature().name()], pending));
  }
  auto is_function = [&](const std::string& name) {
    return functions_.count(name) > 0 || signatures.count(name) > 0;
  };
  std::map<std::string, std::vector<std::string>> callees;
  for (const auto& [name, function] : functions_) {
    TW_RETURN_IF_ERROR(Callees(*function, pending, is_function, &callees[name]));
  }
  for (const FunctionDef* function : added) {
    TW_RETURN_IF_ERROR(
        Callees(*function, pending, is_function, &callees[function->signature().name()]));
  }
  TW_RETURN_IF_ERROR(CheckCallGraph(callees));
  for (const GradientDef& gradient : library.gradient()) {
    // Either may be a function this library's fallback (an enclosing
    // graph's library) holds.
    if (pending.LookUp(gradient.function_name()) == nullptr ||
        pending.LookUp(gradient.gradient_func()) == nullptr) {
      return errors::InvalidArgument("Gradient of '", gradient.function_name(), "' is '",
                                     gradient.gradient_func(),
                                     "'; both must be functions of the library");
    }
  }

  for (const FunctionDef* function : added) {
    const std::string& name = function->signature().name();
    // Cannot fail: the name is new to registry_ (checked above).
    TW_RETURN_IF_ERROR(registry_.Register(std::move(*signatures[name])));
    auto stored = std::make_unique<const FunctionDef>(*function);
    order_.push_back(stored.get());
    functions_.emplace(name, std::move(stored));
  }
  // Gradients already held (a library added twice by Extend) stay once.
  for (const GradientDef& gradient : library.gradient()) {
    if (std::none_of(gradients_.begin(), gradients_.end(), [&](const GradientDef& held) {
          return google::protobuf::util::MessageDifferencer::Equals(held, gradient);
        })) {
      gradients_.push_back(gradient);
    }
  }
  for (const RegisteredGradient& registered : library.registered_gradients()) {
    if (std::none_of(registered_gradients_.begin(), registered_gradients_.end(),
                     [&](const RegisteredGradient& held) {
                       return google::protobuf::util::MessageDifferencer::Equals(held, registered);
                     })) {
      registered_gradients_.push_back(registered);
    }
  }
  return Status::OK();
}

}  // namespace tensorweave
