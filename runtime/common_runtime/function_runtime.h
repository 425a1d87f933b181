// FunctionLibraryRuntime: instantiates the functions of a library on one
// device and runs them, for the call kernels (PartitionedCall, If, While,
// Case, and nodes whose op is a function). One per device per compiled
// graph; the executor hands it to every kernel (OpKernelContext::
// function_library()).
//
//   FunctionLibraryRuntime runtime(&graph.flib_def(), device);
//   FunctionLibraryRuntime::Handle handle;
//   TW_RETURN_IF_ERROR(runtime.Instantiate("f", call_attrs, &handle));
//   FunctionLibraryRuntime::Options options;   // the caller's step
//   options.step_id = ...; options.cancellation_manager = ...; options.runner = ...;
//   std::vector<Tensor> results;
//   runtime.Run(options, handle, {x, y}, &results, [](const Status& s) { ... });
//
// Instantiate builds the body once per (function, attrs) and caches it: the
// plain graph (function_instantiate.h) and an executor for it. It also
// instantiates every function the body calls, so a function reaching itself
// (which a func attr given by the caller can make happen, beyond what the
// library's own check sees) is INVALID_ARGUMENT when instantiated, never an
// endless run; so is nesting beyond kMaxFunctionCallDepth.
//
// Run never blocks: the body's kernels run on the caller's runner and
// `done` is called once, possibly before Run returns. The body shares the
// caller's step id, rendezvous and cancellation manager, so cancelling the
// step (Close, a timeout) stops the body too.
#ifndef TENSORWEAVE_COMMON_RUNTIME_FUNCTION_RUNTIME_H_
#define TENSORWEAVE_COMMON_RUNTIME_FUNCTION_RUNTIME_H_

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/common_runtime/executor.h"
#include "runtime/common_runtime/function_instantiate.h"
#include "runtime/framework/function_library.h"
#include "runtime/framework/op_kernel.h"

namespace tensorweave {

class FunctionLibraryRuntime {
 public:
  using Handle = int;
  using DoneCallback = std::function<void(const Status&)>;

  // What a call passes on from the caller's step; nothing is owned.
  struct Options {
    int64_t step_id = 0;
    Rendezvous* rendezvous = nullptr;
    CancellationManager* cancellation_manager = nullptr;
    Executor::Runner* runner = nullptr;
    // The caller's per-step resources: a TensorArray or Stack made in the
    // caller is used in the body, and the body's own end with the step.
    ScopedStepContainer* step_container = nullptr;
  };

  // Neither is owned; both outlive this.
  FunctionLibraryRuntime(const FunctionLibraryDefinition* library, Device* device);
  ~FunctionLibraryRuntime();
  FunctionLibraryRuntime(const FunctionLibraryRuntime&) = delete;
  FunctionLibraryRuntime& operator=(const FunctionLibraryRuntime&) = delete;

  const FunctionLibraryDefinition& library() const { return *library_; }
  Device* device() const { return device_; }
  bool IsFunction(const std::string& op) const { return library_->Contains(op); }

  // NOT_FOUND when `name` is no function of the library; INVALID_ARGUMENT
  // naming the function when it cannot be instantiated with `attrs`.
  Status Instantiate(const std::string& name, const AttrMap& attrs, Handle* handle);
  // The dtypes of the args a handle's function takes and returns.
  const DataTypeVector& arg_types(Handle handle) const;
  const DataTypeVector& ret_types(Handle handle) const;
  // How many distinct (function, attrs) were instantiated.
  int num_instantiations() const;

  // Runs the function with `args` (their number and dtypes are checked:
  // INVALID_ARGUMENT) and fills `results` (which must stay alive until
  // `done`) before calling `done` with the body's status.
  void Run(const Options& options, Handle handle, std::vector<Tensor> args,
           std::vector<Tensor>* results, DoneCallback done);

  // The kernel of a node whose op is a function of the library: a
  // StatefulPartitionedCall of that function with the node's attrs.
  Status CreateKernel(const NodeDef& node, std::unique_ptr<OpKernel>* kernel);

 private:
  struct Item;

  // With mu_ held; `path` holds the keys being instantiated, callers first.
  Status InstantiateLocked(const std::string& name, const AttrMap& attrs,
                           std::vector<std::string>* path, Handle* handle);
  // Instantiates each function a node of `graph` calls.
  Status InstantiateCallees(const GraphDef& graph, std::vector<std::string>* path);
  const Item& item(Handle handle) const;

  const FunctionLibraryDefinition* const library_;
  Device* const device_;
  mutable std::mutex mu_;                            // held through an instantiation
  std::unordered_map<std::string, Handle> handles_;  // by InstantiationKey
  mutable std::mutex items_mu_;                      // for lookups during an instantiation
  std::vector<std::unique_ptr<Item>> items_;         // by handle; never removed
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_COMMON_RUNTIME_FUNCTION_RUNTIME_H_
