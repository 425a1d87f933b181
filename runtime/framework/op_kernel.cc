#include "runtime/framework/op_kernel.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>

#include "runtime/framework/kernel_listing.h"

namespace tensorweave {

Status AttachNodeName(const Status& status, const std::string& node_name, const std::string& op) {
  if (status.ok() || status.message().find("(node '") != std::string::npos) return status;
  return Status(status.code(), StrCat(status.message(), " (node '", node_name, "', op ", op, ")"));
}

// --- OpKernel -------------------------------------------------------------

OpKernel::OpKernel(OpKernelConstruction* context)
    : def_(context->def()),
      name_(context->def().name()),
      type_(context->def().op()),
      input_types_(context->input_types()),
      output_types_(context->output_types()) {}

void AsyncOpKernel::Compute(OpKernelContext* context) {
  // Synchronous callers (tests) wait for the asynchronous completion.
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  ComputeAsync(context, [&]() {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
    done_cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  done_cv.wait(lock, [&] { return done; });
}

void ComputeCatchingExceptions(OpKernel* kernel, OpKernelContext* context) {
  try {
    kernel->Compute(context);
  } catch (...) {
    context->SetStatus(errors::FromCurrentException());
  }
}

void ComputeAsyncCatchingExceptions(AsyncOpKernel* kernel, OpKernelContext* context,
                                    AsyncOpKernel::DoneCallback done) {
  // If the kernel throws, it may or may not have called `done` already (or
  // handed it to someone who will); the flag makes the callback run once.
  auto called = std::make_shared<std::atomic<bool>>(false);
  auto done_once = [called, done = std::move(done)] {
    if (!called->exchange(true)) done();
  };
  try {
    kernel->ComputeAsync(context, done_once);
  } catch (...) {
    if (!called->load()) context->SetStatus(errors::FromCurrentException());
    done_once();
  }
}

// --- OpKernelContext ------------------------------------------------------

OpKernelContext::OpKernelContext(Params* params)
    : params_(params), outputs_(params->op_kernel->num_outputs()) {}

Status OpKernelContext::CheckNotInterrupted() const {
  const CancellationManager* cancellation = params_->cancellation_manager;
  if (cancellation != nullptr && cancellation->IsCancelled()) {
    return errors::Cancelled("The step was cancelled");
  }
  if (params_->deadline != std::chrono::steady_clock::time_point::max() &&
      std::chrono::steady_clock::now() > params_->deadline) {
    return errors::DeadlineExceeded("The step ran out of time");
  }
  return Status::OK();
}

const Tensor& OpKernelContext::input(int i) const {
  const TensorValue& value = (*params_->inputs)[i];
  return value.is_ref() ? value.ref->tensor : value.tensor;
}

DataType OpKernelContext::expected_output_dtype(int i) const {
  return params_->op_kernel->output_type(i);
}

Status OpKernelContext::allocate_output(int i, const TensorShape& shape, Tensor** out) {
  TensorValue& slot = outputs_[i];
  TW_RETURN_IF_ERROR(Tensor::Allocate(BaseType(expected_output_dtype(i)), shape, &slot.tensor));
  slot.ref = nullptr;
  *out = &slot.tensor;
  return Status::OK();
}

Status OpKernelContext::forward_input_or_allocate_output(std::initializer_list<int> candidates,
                                                         int output, const TensorShape& shape,
                                                         Tensor** out) {
  const DataType dtype = BaseType(expected_output_dtype(output));
  for (int i : candidates) {
    TensorValue& input = (*params_->inputs)[i];
    // Only a value nobody else holds may be overwritten; string buffers own
    // objects and are never reused.
    if (input.is_ref() || dtype == DT_STRING || input.tensor.dtype() != dtype ||
        input.tensor.NumElements() != shape.num_elements() || !input.tensor.RefCountIsOne()) {
      continue;
    }
    TensorValue& slot = outputs_[output];
    slot.ref = nullptr;
    slot.tensor.CopyFrom(input.tensor, shape);
    *out = &slot.tensor;
    return Status::OK();
  }
  return allocate_output(output, shape, out);
}

void OpKernelContext::set_output(int i, Tensor value) {
  TensorValue& slot = outputs_[i];
  slot.ref = nullptr;
  slot.tensor = std::move(value);
}

void OpKernelContext::set_output_ref(int i, Variable* variable) {
  TensorValue& slot = outputs_[i];
  slot.tensor = Tensor();
  slot.ref = variable;
}

// --- Kernel registry ------------------------------------------------------

namespace {

struct KernelRegistration {
  KernelDefBuilder def;
  KernelFactory factory;
};

class KernelRegistry {
 public:
  static KernelRegistry* Global() {
    static KernelRegistry* registry = new KernelRegistry();
    return registry;
  }

  void Add(const KernelDefBuilder& def, KernelFactory factory) {
    std::lock_guard<std::mutex> lock(mu_);
    kernels_.emplace(def.op(), KernelRegistration{def, std::move(factory)});
  }

  // Every registration's definition, in op name order.
  std::vector<KernelDefBuilder> Definitions() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<KernelDefBuilder> definitions;
    for (const auto& entry : kernels_) definitions.push_back(entry.second.def);
    return definitions;
  }

  // The registration whose device and type constraints match the node.
  // `candidates` (when given) describes the registrations when none matches;
  // the description is only built then, since every kernel creation and
  // every folding candidate looks a kernel up.
  const KernelRegistration* Find(const std::string& device_type, const NodeDef& node,
                                 std::string* candidates) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto range = kernels_.equal_range(node.op());
    for (auto it = range.first; it != range.second; ++it) {
      if (Matches(it->second.def, device_type, node)) return &it->second;
    }
    if (candidates != nullptr) {
      std::vector<std::string> seen;
      for (auto it = range.first; it != range.second; ++it) {
        const KernelDefBuilder& def = it->second.def;
        std::vector<std::string> parts;
        for (const auto& constraint : def.constraints()) {
          parts.push_back(constraint.attr + "=" + DataTypeString(constraint.dtype));
        }
        seen.push_back(def.device_type() +
                       (parts.empty() ? "" : " [" + StrJoin(parts, ", ") + "]"));
      }
      *candidates = StrJoin(seen, "; ");
    }
    return nullptr;
  }

 private:
  static bool Matches(const KernelDefBuilder& def, const std::string& device_type,
                      const NodeDef& node) {
    if (def.device_type() != device_type) return false;
    for (const auto& constraint : def.constraints()) {
      const AttrValue* attr = FindNodeAttr(node, constraint.attr);
      if (attr == nullptr || attr->value_case() != AttrValue::kType ||
          attr->type() != constraint.dtype) {
        return false;
      }
    }
    return true;
  }

  mutable std::mutex mu_;
  std::multimap<std::string, KernelRegistration> kernels_;
};

}  // namespace

void RegisterKernel(const KernelDefBuilder& def, KernelFactory factory) {
  KernelRegistry::Global()->Add(def, std::move(factory));
}

// Declared in kernel_listing.h (the registry is private to this file).
std::vector<KernelDefBuilder> ListKernelDefs() { return KernelRegistry::Global()->Definitions(); }

bool KernelExists(const std::string& device_type, const NodeDef& node) {
  return KernelRegistry::Global()->Find(device_type, node, nullptr) != nullptr;
}

Status CreateOpKernel(const std::string& device_type, Device* device, const NodeDef& node,
                      std::unique_ptr<OpKernel>* kernel) {
  const OpDef* op_def = nullptr;
  TW_RETURN_IF_ERROR(OpRegistry::Global()->LookUp(node.op(), &op_def));
  std::string candidates;
  const KernelRegistration* registration =
      KernelRegistry::Global()->Find(device_type, node, &candidates);
  if (registration == nullptr) {
    std::string type_attrs;
    for (const AttrDef& attr : op_def->attrs) {
      DataType dtype;
      if (attr.type == "type" && GetNodeAttr(node, attr.name, &dtype).ok()) {
        type_attrs += StrCat(type_attrs.empty() ? "" : ", ", attr.name, "=", DataTypeString(dtype));
      }
    }
    return errors::NotFound("No kernel registered for op ", node.op(), " on ", device_type,
                            type_attrs.empty() ? "" : " with " + type_attrs,
                            "; registered kernels: ", candidates.empty() ? "<none>" : candidates,
                            " (node '", node.name(), "', op ", node.op(), ")");
  }
  DataTypeVector input_types, output_types;
  TW_RETURN_IF_ERROR(InOutTypesForNode(node, *op_def, &input_types, &output_types));
  OpKernelConstruction construction(device, node, *op_def, std::move(input_types),
                                    std::move(output_types));
  std::unique_ptr<OpKernel> created;
  try {
    created.reset(registration->factory(&construction));
  } catch (...) {
    construction.SetStatus(errors::FromCurrentException());
  }
  if (!construction.status().ok()) {
    return AttachNodeName(construction.status(), node.name(), node.op());
  }
  *kernel = std::move(created);
  return Status::OK();
}

}  // namespace tensorweave
