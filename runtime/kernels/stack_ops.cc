// Kernels of the Stack (V2) ops (runtime/ops/data_flow_ops.cc): a stack of
// tensors in the step container, which the gradient of tf.while_loop uses
// to keep each iteration's forward values for the backward loop. As in
// TensorFlow (core/kernels/stack.cc): pushing beyond max_size (when it is
// not negative), popping an empty stack, and any use after StackCloseV2 are
// INVALID_ARGUMENT, and so is a push or pop of another dtype.
#include <atomic>
#include <mutex>
#include <vector>

#include "runtime/framework/resource_mgr.h"
#include "runtime/kernels/kernel_util.h"

namespace tensorweave {
namespace {

class Stack : public ResourceBase {
 public:
  static const char* TypeName() { return "Stack"; }

  Stack(std::string name, DataType elem_type, int64_t max_size)
      : name_(std::move(name)), elem_type_(elem_type), max_size_(max_size) {}

  std::string DebugString() const override { return StrCat("Stack[", name_, "]"); }

  Status Push(const Tensor& value) {
    std::lock_guard<std::mutex> lock(mu_);
    TW_RETURN_IF_ERROR(CheckOpen());
    TW_RETURN_IF_ERROR(CheckType(value.dtype()));
    if (max_size_ >= 0 && static_cast<int64_t>(values_.size()) >= max_size_) {
      return errors::InvalidArgument("Stack[", name_, "] overflowed its max_size (", max_size_,
                                     ")");
    }
    values_.push_back(value);
    return Status::OK();
  }

  Status Pop(DataType dtype, Tensor* value) {
    std::lock_guard<std::mutex> lock(mu_);
    TW_RETURN_IF_ERROR(CheckOpen());
    TW_RETURN_IF_ERROR(CheckType(dtype));
    if (values_.empty()) return errors::InvalidArgument("Stack[", name_, "] is empty.");
    *value = std::move(values_.back());
    values_.pop_back();
    return Status::OK();
  }

  void Close() {
    std::vector<Tensor> freed;
    std::lock_guard<std::mutex> lock(mu_);
    freed.swap(values_);
    closed_ = true;
  }

 private:
  Status CheckOpen() const {
    if (closed_) return errors::InvalidArgument("Stack[", name_, "] has already been closed.");
    return Status::OK();
  }
  Status CheckType(DataType dtype) const {
    if (dtype == elem_type_) return Status::OK();
    return errors::InvalidArgument("Stack[", name_, "] holds ", DataTypeString(elem_type_),
                                   " elements, not ", DataTypeString(dtype));
  }

  const std::string name_;
  const DataType elem_type_;
  const int64_t max_size_;
  std::mutex mu_;
  std::vector<Tensor> values_;  // guarded by mu_
  bool closed_ = false;         // guarded by mu_
};

std::atomic<int64_t> stack_counter{0};

Status LookupStack(OpKernelContext* ctx, std::shared_ptr<Stack>* stack) {
  ResourceHandle handle;
  TW_RETURN_IF_ERROR(HandleFromInput(ctx, 0, &handle));
  return LookupResource(ctx, handle, stack);
}

class StackOp : public OpKernel {
 public:
  explicit StackOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("elem_type", &elem_type_));
    // A stack keeps the pushed tensors themselves (sharing their buffers),
    // so it can hold variants too: a TensorList's copy on write sees the
    // stack's reference, and the while-loop gradient keeps lists in stacks.
    OP_REQUIRES(c, TensorCanHold(elem_type_) || elem_type_ == DT_VARIANT,
                errors::InvalidArgument("A stack cannot hold ", DataTypeString(elem_type_)));
    OP_REQUIRES_OK(c, c->GetAttr("stack_name", &stack_name_));
    if (stack_name_.empty()) stack_name_ = name();
  }
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& max_size = ctx->input(0);
    OP_REQUIRES(ctx, max_size.IsScalar(),
                errors::InvalidArgument("max_size must be a scalar, but had shape: ",
                                        max_size.shape().DebugString()));
    const std::string unique_name = StrCat(stack_name_, "_", stack_counter.fetch_add(1));
    ResourceHandle handle;
    OP_REQUIRES_OK(ctx, MakeStepResourceHandle<Stack>(ctx, unique_name, &handle));
    OP_REQUIRES_OK(ctx, CreateResource(ctx, handle,
                                       std::make_shared<Stack>(unique_name, elem_type_,
                                                               max_size.scalar<int32_t>())));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    out->data<ResourceHandle>()[0] = handle;
  }

 private:
  DataType elem_type_;
  std::string stack_name_;
};

class StackPushOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<Stack> stack;
    OP_REQUIRES_OK(ctx, LookupStack(ctx, &stack));
    OP_REQUIRES_OK(ctx, stack->Push(ctx->input(1)));
    ctx->set_output(0, ctx->input(1));
  }
};

class StackPopOp : public OpKernel {
 public:
  explicit StackPopOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("elem_type", &elem_type_));
  }
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<Stack> stack;
    OP_REQUIRES_OK(ctx, LookupStack(ctx, &stack));
    Tensor value;
    OP_REQUIRES_OK(ctx, stack->Pop(elem_type_, &value));
    ctx->set_output(0, std::move(value));
  }

 private:
  DataType elem_type_;
};

// Frees the values and marks the stack closed; it stays in the container
// (until the step ends) so later use says "closed" rather than "not found".
class StackCloseOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool IsExpensive() const override { return false; }

  void Compute(OpKernelContext* ctx) override {
    std::shared_ptr<Stack> stack;
    OP_REQUIRES_OK(ctx, LookupStack(ctx, &stack));
    stack->Close();
  }
};

}  // namespace

REGISTER_KERNEL_BUILDER(Name("StackV2").Device(DEVICE_CPU), StackOp);
REGISTER_KERNEL_BUILDER(Name("StackPushV2").Device(DEVICE_CPU), StackPushOp);
REGISTER_KERNEL_BUILDER(Name("StackPopV2").Device(DEVICE_CPU), StackPopOp);
REGISTER_KERNEL_BUILDER(Name("StackCloseV2").Device(DEVICE_CPU), StackCloseOp);

}  // namespace tensorweave
