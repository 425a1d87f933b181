// Kernels of the control-flow ops. They only forward values (sharing the
// buffer, or the reference for the Ref variants); dead tensors, frames and
// iterations are the executor's work (runtime/common_runtime/executor.cc).
#include "runtime/kernels/kernel_util.h"

namespace tensorweave {
namespace {

// Output `out` becomes input `in`: the same buffer, or the same reference.
void Forward(OpKernelContext* ctx, int in, int out) {
  if (ctx->input_is_ref(in)) {
    ctx->set_output_ref(out, ctx->input_ref(in));
  } else {
    ctx->set_output(out, ctx->input(in));
  }
}

// Enter, Exit, NextIteration, LoopCond and their Ref variants.
class ForwardOp : public CheapKernel {
 public:
  using CheapKernel::CheapKernel;
  void Compute(OpKernelContext* ctx) override { Forward(ctx, 0, 0); }
};

// Forwards data to output_true or output_false; the other output stays
// empty, which the executor turns into a dead tensor.
class SwitchOp : public CheapKernel {
 public:
  using CheapKernel::CheapKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& pred = ctx->input(1);
    OP_REQUIRES(ctx, pred.dims() == 0,
                errors::InvalidArgument("The second input must be a scalar, but it has shape ",
                                        pred.shape().DebugString()));
    Forward(ctx, 0, pred.scalar<bool>() ? 1 : 0);
  }
};

// The executor hands a Merge only its first live input; the others are empty.
// Its value_index output is one of num_inputs scalars made once here and
// shared by every run (as Const shares its value): a loop's Merge runs once
// per iteration, and a fresh scalar each time was a third of its cost.
// Consumers cannot write into a shared buffer (forwarding needs a buffer
// held once).
class MergeOp : public CheapKernel {
 public:
  explicit MergeOp(OpKernelConstruction* c) : CheapKernel(c) {
    index_values_.reserve(c->num_inputs());
    for (int i = 0; i < c->num_inputs(); ++i) {
      Tensor index(DT_INT32, TensorShape());
      index.data<int32_t>()[0] = i;
      index_values_.push_back(std::move(index));
    }
  }
  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      if (!ctx->input_is_ref(i) && ctx->input(i).dtype() == DT_INVALID) continue;
      Forward(ctx, i, 0);
      ctx->set_output(1, index_values_[i]);
      return;
    }
    ctx->SetStatus(errors::Internal("Merge ran without a live input"));
  }

 private:
  std::vector<Tensor> index_values_;
};

class ControlTriggerOp : public CheapKernel {
 public:
  using CheapKernel::CheapKernel;
  void Compute(OpKernelContext*) override {}
};

REGISTER_KERNEL_BUILDER(Name("Switch").Device(DEVICE_CPU), SwitchOp);
REGISTER_KERNEL_BUILDER(Name("RefSwitch").Device(DEVICE_CPU), SwitchOp);
REGISTER_KERNEL_BUILDER(Name("Merge").Device(DEVICE_CPU), MergeOp);
REGISTER_KERNEL_BUILDER(Name("RefMerge").Device(DEVICE_CPU), MergeOp);
REGISTER_KERNEL_BUILDER(Name("Enter").Device(DEVICE_CPU), ForwardOp);
REGISTER_KERNEL_BUILDER(Name("RefEnter").Device(DEVICE_CPU), ForwardOp);
REGISTER_KERNEL_BUILDER(Name("Exit").Device(DEVICE_CPU), ForwardOp);
REGISTER_KERNEL_BUILDER(Name("RefExit").Device(DEVICE_CPU), ForwardOp);
REGISTER_KERNEL_BUILDER(Name("NextIteration").Device(DEVICE_CPU), ForwardOp);
REGISTER_KERNEL_BUILDER(Name("RefNextIteration").Device(DEVICE_CPU), ForwardOp);
REGISTER_KERNEL_BUILDER(Name("LoopCond").Device(DEVICE_CPU), ForwardOp);
REGISTER_KERNEL_BUILDER(Name("ControlTrigger").Device(DEVICE_CPU), ControlTriggerOp);

}  // namespace
}  // namespace tensorweave
