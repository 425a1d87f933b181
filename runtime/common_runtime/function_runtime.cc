#include "runtime/common_runtime/function_runtime.h"

#include <algorithm>

#include "runtime/framework/node_def_util.h"
#include "runtime/graph/graph_def_import.h"

namespace tensorweave {

struct FunctionLibraryRuntime::Item {
  std::string name;
  DataTypeVector arg_types;
  DataTypeVector ret_types;
  std::unique_ptr<Executor> executor;
};

FunctionLibraryRuntime::FunctionLibraryRuntime(const FunctionLibraryDefinition* library,
                                               Device* device)
    : library_(library), device_(device) {}

FunctionLibraryRuntime::~FunctionLibraryRuntime() = default;

Status FunctionLibraryRuntime::Instantiate(const std::string& name, const AttrMap& attrs,
                                           Handle* handle) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> path;
  return InstantiateLocked(name, attrs, &path, handle);
}

Status FunctionLibraryRuntime::InstantiateLocked(const std::string& name, const AttrMap& attrs,
                                                 std::vector<std::string>* path, Handle* handle) {
  const FunctionDef* function = library_->Find(name);
  const OpDef* signature = library_->op_registry()->LookUp(name);
  if (function == nullptr || signature == nullptr) {
    return errors::NotFound("Function '", name, "' is not in the function library");
  }
  const std::string key = InstantiationKey(name, SignatureAttrs(*signature, attrs));
  auto cached = handles_.find(key);
  if (cached != handles_.end()) {
    *handle = cached->second;
    return Status::OK();
  }
  if (std::find(path->begin(), path->end(), key) != path->end()) {
    return errors::InvalidArgument("Function '", name,
                                   "' calls itself with the same attrs; recursive functions are "
                                   "not supported");
  }
  if (static_cast<int>(path->size()) >= kMaxFunctionCallDepth) {
    return errors::InvalidArgument("Function '", name, "' is called ", path->size() + 1,
                                   " deep; at most ", kMaxFunctionCallDepth,
                                   " nested calls are supported");
  }

  InstantiatedFunction body;
  TW_RETURN_IF_ERROR(
      InstantiateFunction(*function, *signature, attrs, *library_->op_registry(), &body));
  path->push_back(key);
  const Status callees = InstantiateCallees(body.graph, path);
  path->pop_back();
  TW_RETURN_IF_ERROR(callees);

  Graph graph(library_->op_registry());
  Status status = ConvertGraphDefToGraph(body.graph, &graph);
  auto item = std::make_unique<Item>();
  if (status.ok()) {
    LocalExecutorParams params;
    params.device = device_;
    params.function_library = this;
    status = NewLocalExecutor(params, graph, &item->executor);
  }
  if (!status.ok()) {
    return Status(status.code(), StrCat("Function '", name, "': ", status.message()));
  }
  item->name = name;
  item->arg_types = std::move(body.arg_types);
  item->ret_types = std::move(body.ret_types);
  std::lock_guard<std::mutex> lock(items_mu_);
  *handle = static_cast<Handle>(items_.size());
  items_.push_back(std::move(item));
  handles_.emplace(key, *handle);
  return Status::OK();
}

Status FunctionLibraryRuntime::InstantiateCallees(const GraphDef& graph,
                                                  std::vector<std::string>* path) {
  Handle ignored;
  auto instantiate_func = [&](const NameAttrList& func) -> Status {
    if (!IsFunction(func.name())) return Status::OK();
    return InstantiateLocked(func.name(), func.attr(), path, &ignored);
  };
  for (const NodeDef& node : graph.node()) {
    if (IsFunction(node.op())) {
      TW_RETURN_IF_ERROR(InstantiateLocked(node.op(), node.attr(), path, &ignored));
    }
    // The functions call kernels run (`f`, branches, cond and body) are
    // func attrs instantiated with their own attrs.
    for (const auto& [attr_name, value] : node.attr()) {
      if (value.has_func()) TW_RETURN_IF_ERROR(instantiate_func(value.func()));
      if (value.has_list()) {
        for (const NameAttrList& func : value.list().func()) {
          TW_RETURN_IF_ERROR(instantiate_func(func));
        }
      }
    }
  }
  return Status::OK();
}

const FunctionLibraryRuntime::Item& FunctionLibraryRuntime::item(Handle handle) const {
  std::lock_guard<std::mutex> lock(items_mu_);
  return *items_[handle];
}

const DataTypeVector& FunctionLibraryRuntime::arg_types(Handle handle) const {
  return item(handle).arg_types;
}

const DataTypeVector& FunctionLibraryRuntime::ret_types(Handle handle) const {
  return item(handle).ret_types;
}

int FunctionLibraryRuntime::num_instantiations() const {
  std::lock_guard<std::mutex> lock(items_mu_);
  return static_cast<int>(items_.size());
}

void FunctionLibraryRuntime::Run(const Options& options, Handle handle, std::vector<Tensor> args,
                                 std::vector<Tensor>* results, DoneCallback done) {
  {
    std::lock_guard<std::mutex> lock(items_mu_);
    if (handle < 0 || handle >= static_cast<Handle>(items_.size())) {
      done(errors::Internal("No function instantiated with handle ", handle));
      return;
    }
  }
  const Item& function = item(handle);
  if (args.size() != function.arg_types.size()) {
    done(errors::InvalidArgument("Function '", function.name, "' takes ", function.arg_types.size(),
                                 " arguments but the call gives ", args.size()));
    return;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].dtype() != function.arg_types[i]) {
      done(errors::InvalidArgument("Function '", function.name, "': argument ", i, " must be ",
                                   DataTypeString(function.arg_types[i]), " but the call gives ",
                                   DataTypeString(args[i].dtype())));
      return;
    }
  }
  // Lives until the body's executor is done with it.
  struct Call {
    Call(std::vector<Tensor> values, int num_results)
        : args(std::move(values)), frame(args.data(), static_cast<int>(args.size()), num_results) {}
    std::vector<Tensor> args;
    SimpleCallFrame frame;
  };
  auto* call = new Call(std::move(args), static_cast<int>(function.ret_types.size()));
  Executor::Args exec_args;
  exec_args.step_id = options.step_id;
  exec_args.rendezvous = options.rendezvous;
  exec_args.cancellation_manager = options.cancellation_manager;
  exec_args.call_frame = &call->frame;
  exec_args.runner = options.runner;
  exec_args.step_container = options.step_container;
  function.executor->RunAsync(exec_args,
                              [call, results, done = std::move(done)](const Status& status) {
                                std::unique_ptr<Call> owned(call);
                                if (status.ok()) *results = std::move(*call->frame.retvals());
                                done(status);
                              });
}

Status FunctionLibraryRuntime::CreateKernel(const NodeDef& node,
                                            std::unique_ptr<OpKernel>* kernel) {
  const OpDef* signature = library_->op_registry()->LookUp(node.op());
  if (signature == nullptr || !IsFunction(node.op())) {
    return errors::NotFound("Node '", node.name(), "': '", node.op(), "' is not a function");
  }
  DataTypeVector input_types, output_types;
  TW_RETURN_IF_ERROR(InOutTypesForNode(node, *signature, &input_types, &output_types));
  NodeDef call;
  call.set_name(node.name());
  call.set_op("StatefulPartitionedCall");
  call.set_device(node.device());
  for (const std::string& input : node.input()) call.add_input(input);
  AttrValue f;
  f.mutable_func()->set_name(node.op());
  *f.mutable_func()->mutable_attr() = SignatureAttrs(*signature, node.attr());
  (*call.mutable_attr())["f"] = f;
  for (DataType type : input_types) (*call.mutable_attr())["Tin"].mutable_list()->add_type(type);
  for (DataType type : output_types) (*call.mutable_attr())["Tout"].mutable_list()->add_type(type);
  // Lists may be empty; the attrs must still be there.
  (*call.mutable_attr())["Tin"].mutable_list();
  (*call.mutable_attr())["Tout"].mutable_list();
  return CreateOpKernel(device_->device_type(), device_, call, kernel);
}

}  // namespace tensorweave
