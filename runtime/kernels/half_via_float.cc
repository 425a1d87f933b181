// Kernels for half and bfloat16 that compute in float: each 16-bit input is
// widened to float, the op's float kernel runs, and each output the op
// declares as T is rounded back to nearest even. For one elementwise op this
// is exactly what TensorFlow's CPU kernels give (Eigen::half arithmetic is
// float arithmetic rounded per operation); products, convolutions and
// reductions accumulate in float, so they round once where TensorFlow may
// round more often.
//
// One adapter serves every op listed in kOpsComputedInFloat: the op's OpDef
// admits half and bfloat16 for "T", and the float kernel does the checks,
// so errors name the node exactly as for float. A second one
// (kUpdatesComputedInFloat) runs the optimizer updates of half and
// bfloat16 variables, reference or resource, through the float kernel of
// the Apply* op on float copies of the variables.
#include <Eigen/Core>
#include <algorithm>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/framework/node_def_util.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/resource_variable.h"

namespace tensorweave {
namespace {

// Ops whose half and bfloat16 kernels are their float kernels on widened
// inputs. Each OpDef's "T" lists TW_HALF_FLOAT_TYPES.
const char* const kOpsComputedInFloat[] = {
    "AddV2",
    "Sub",
    "Mul",
    "RealDiv",
    "Maximum",
    "Minimum",
    "Neg",
    "Abs",
    "Square",
    "Sqrt",
    "Rsqrt",
    "Exp",
    "Log",
    "Tanh",
    "Sigmoid",
    "Relu",
    "Relu6",
    "Elu",
    "Softplus",
    "MatMul",
    "BatchMatMulV2",
    "Conv2D",
    "DepthwiseConv2dNative",
    "BiasAdd",
    "Softmax",
    "MaxPool",
    "AvgPool",
    "Sum",
    "Mean",
    // The gradients and the rest of the elementwise ops a training step
    // in half or bfloat16 needs.
    "Max",
    "Min",
    "Prod",
    "ArgMax",
    "ArgMin",
    "Sign",
    "Round",
    "Floor",
    "Ceil",
    "Reciprocal",
    "Inv",
    "Expm1",
    "Log1p",
    "Sin",
    "Cos",
    "Erf",
    "Pow",
    "SquaredDifference",
    "Selu",
    "LeakyRelu",
    "ReluGrad",
    "Relu6Grad",
    "EluGrad",
    "SeluGrad",
    "SoftplusGrad",
    "LeakyReluGrad",
    "TanhGrad",
    "SigmoidGrad",
    "SqrtGrad",
    "RsqrtGrad",
    "ReciprocalGrad",
    "InvGrad",
    "BiasAddGrad",
    "Conv2DBackpropInput",
    "Conv2DBackpropFilter",
    "DepthwiseConv2dNativeBackpropInput",
    "DepthwiseConv2dNativeBackpropFilter",
    "MaxPoolGrad",
    "AvgPoolGrad",
    "SoftmaxCrossEntropyWithLogits",
    "SparseSoftmaxCrossEntropyWithLogits",
    // x, y and the gradients are T; scale, offset, mean and variance are
    // U = float, passed through unchanged.
    "FusedBatchNormV3",
    "FusedBatchNormGradV3",
    // Built by tf.gradients itself: the initial gradient, the sums of
    // gradients that meet, and the loss's log-softmax and one-hot labels.
    "OnesLike",
    "AddN",
    "LogSoftmax",
    "OneHot",
};

// Optimizer updates of half and bfloat16 variables, run by the float
// kernel of the reference-variable op (a ResourceApply* op by its Apply*
// twin, which takes the same inputs in the same order) on float copies of
// the variables, which are then rounded back into them.
const char* const kUpdatesComputedInFloat[] = {
    "ApplyGradientDescent",         "ApplyMomentum",         "ApplyAdam",
    "ResourceApplyGradientDescent", "ResourceApplyMomentum", "ResourceApplyAdam",
};

bool IsHalfFloat(DataType dtype) { return dtype == DT_HALF || dtype == DT_BFLOAT16; }

template <typename Half>
void Widen(const Tensor& in, Tensor* out, const OpKernelContext* ctx) {
  const Half* src = in.data<Half>();
  float* dst = out->data<float>();
  ParallelFor(ctx, in.NumElements(), 6, kCheapCycles, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dst[i] = static_cast<float>(src[i]);
  });
}

template <typename Half>
void Narrow(const Tensor& in, Tensor* out, const OpKernelContext* ctx) {
  const float* src = in.data<float>();
  Half* dst = out->data<Half>();
  ParallelFor(ctx, in.NumElements(), 6, kCheapCycles, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) dst[i] = Half(src[i]);
  });
}

// A new float tensor holding the values of `in`, which the graph's types
// make half or bfloat16 (`dtype`); a kernel driven directly with another
// dtype must not read its buffer as 16-bit values.
Status Widened(const Tensor& in, DataType dtype, const OpKernelContext* ctx, Tensor* out) {
  if (in.dtype() != dtype) {
    return errors::InvalidArgument("Expected a ", DataTypeString(dtype), " input, got ",
                                   DataTypeString(in.dtype()));
  }
  TW_RETURN_IF_ERROR(Tensor::Allocate(DT_FLOAT, in.shape(), out));
  if (in.dtype() == DT_HALF) {
    Widen<Eigen::half>(in, out, ctx);
  } else {
    Widen<Eigen::bfloat16>(in, out, ctx);
  }
  return Status::OK();
}

// Rounds the float `in` into `out`, which has its shape and a 16-bit dtype.
void NarrowInto(const Tensor& in, Tensor* out, const OpKernelContext* ctx) {
  if (out->dtype() == DT_HALF) {
    Narrow<Eigen::half>(in, out, ctx);
  } else {
    Narrow<Eigen::bfloat16>(in, out, ctx);
  }
}

// The same node with every 16-bit type attr set to float, and named `op`.
NodeDef AsFloatNode(const NodeDef& node, const std::string& op) {
  NodeDef as_float = node;
  as_float.set_op(op);
  for (auto& [name, value] : *as_float.mutable_attr()) {
    if (value.value_case() == AttrValue::kType && IsHalfFloat(value.type())) {
      value.set_type(DT_FLOAT);
    }
  }
  return as_float;
}

// What the float kernel runs with: `ctx`'s step, device and resources, and
// `inputs`.
OpKernelContext::Params FloatParams(OpKernelContext* ctx, OpKernel* kernel,
                                    std::vector<TensorValue>* inputs) {
  OpKernelContext::Params params;
  params.step_id = ctx->step_id();
  params.device = ctx->device();
  params.op_kernel = kernel;
  params.inputs = inputs;
  params.rendezvous = ctx->rendezvous();
  params.cancellation_manager = ctx->cancellation_manager();
  params.call_frame = ctx->call_frame();
  params.runner = ctx->runner();
  params.frame_iter = ctx->frame_iter();
  params.step_container = ctx->step_container();
  params.function_library = ctx->function_library();
  return params;
}

class HalfViaFloatOp : public OpKernel {
 public:
  explicit HalfViaFloatOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, CreateOpKernel(DEVICE_CPU, c->device(), AsFloatNode(c->def(), c->def().op()),
                                     &float_kernel_));
  }

  void Compute(OpKernelContext* ctx) override {
    std::vector<TensorValue> inputs(ctx->num_inputs());
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      if (IsHalfFloat(input_type(i))) {
        OP_REQUIRES_OK(ctx, Widened(ctx->input(i), input_type(i), ctx, &inputs[i].tensor));
      } else {
        inputs[i].tensor = ctx->input(i);
      }
    }
    OpKernelContext::Params params = FloatParams(ctx, float_kernel_.get(), &inputs);
    OpKernelContext float_ctx(&params);
    float_kernel_->Compute(&float_ctx);
    OP_REQUIRES_OK(ctx, float_ctx.status());
    for (int i = 0; i < num_outputs(); ++i) {
      Tensor& result = float_ctx.mutable_output(i)->tensor;
      if (!IsHalfFloat(output_type(i))) {
        ctx->set_output(i, std::move(result));
        continue;
      }
      Tensor* out = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(i, result.shape(), &out));
      NarrowInto(result, out, ctx);
    }
  }

 private:
  std::unique_ptr<OpKernel> float_kernel_;
};

// An Apply* or ResourceApply* update of half or bfloat16 variables: under
// the variables' locks, each is widened into a float Variable of the same
// name, the float Apply* kernel updates those, and the results are rounded
// back, in place while the variable alone holds its buffer, else into a
// fresh one (the copy-on-write rule of training_ops.cc, so a value already
// read never changes). TensorFlow's kernels round after each operation of
// the update; this rounds once.
class HalfUpdateViaFloatOp : public OpKernel {
 public:
  explicit HalfUpdateViaFloatOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string op = c->def().op();
    resource_ = op.rfind("Resource", 0) == 0;
    if (resource_) op = op.substr(std::string("Resource").size());
    for (int i = 0; i < c->num_inputs(); ++i) {
      if (IsRefType(c->input_type(i)) || c->input_type(i) == DT_RESOURCE) num_variables_ = i + 1;
      input_names_.push_back(c->op_def().inputs[i].name);
    }
    OP_REQUIRES_OK(
        c, CreateOpKernel(DEVICE_CPU, c->device(), AsFloatNode(c->def(), op), &float_kernel_));
  }

  void Compute(OpKernelContext* ctx) override {
    std::vector<Variable*> variables(num_variables_);
    std::vector<std::shared_ptr<Var>> vars(num_variables_);  // alive while updated
    for (int i = 0; i < num_variables_; ++i) {
      if (resource_) {
        OP_REQUIRES_OK(ctx, LookupVar(ctx, i, &vars[i]));
        variables[i] = &vars[i]->variable;
      } else {
        variables[i] = ctx->input_ref(i);
      }
      OP_REQUIRES(ctx, variables[i] != nullptr,
                  errors::InvalidArgument("Input '", input_names_[i],
                                          "' must be a reference to a variable"));
      for (int j = 0; j < i; ++j) {
        OP_REQUIRES(ctx, variables[j] != variables[i],
                    errors::InvalidArgument("'", input_names_[j], "' and '", input_names_[i],
                                            "' must be different variables, both are ",
                                            variables[i]->name));
      }
    }
    // Address order, as the float kernels lock, so updates sharing
    // variables cannot deadlock.
    std::vector<Variable*> lock_order = variables;
    std::sort(lock_order.begin(), lock_order.end(), std::less<Variable*>());
    std::vector<std::unique_lock<std::mutex>> locks;
    for (Variable* variable : lock_order) locks.emplace_back(variable->mu);

    const DataType dtype = input_type(num_variables_);  // the first scalar is T
    std::vector<std::unique_ptr<Variable>> widened;
    std::vector<TensorValue> inputs(ctx->num_inputs());
    for (int i = 0; i < num_variables_; ++i) {
      const Tensor& value = variables[i]->tensor;
      OP_REQUIRES(
          ctx, value.IsInitialized(),
          errors::FailedPrecondition("Attempting to use uninitialized value ", variables[i]->name));
      OP_REQUIRES(
          ctx, value.dtype() == dtype,
          errors::InvalidArgument("Variable ", variables[i]->name, " holds ",
                                  DataTypeString(value.dtype()), ", not ", DataTypeString(dtype)));
      widened.push_back(std::make_unique<Variable>(variables[i]->name));
      OP_REQUIRES_OK(ctx, Widened(value, dtype, ctx, &widened.back()->tensor));
      inputs[i].ref = widened.back().get();
    }
    for (int i = num_variables_; i < ctx->num_inputs(); ++i) {
      OP_REQUIRES_OK(ctx, Widened(ctx->input(i), dtype, ctx, &inputs[i].tensor));
    }
    OpKernelContext::Params params = FloatParams(ctx, float_kernel_.get(), &inputs);
    OpKernelContext float_ctx(&params);
    float_kernel_->Compute(&float_ctx);
    OP_REQUIRES_OK(ctx, float_ctx.status());
    for (int i = 0; i < num_variables_; ++i) {
      Tensor& value = variables[i]->tensor;
      if (value.RefCountIsOne()) {
        NarrowInto(widened[i]->tensor, &value, ctx);
        continue;
      }
      Tensor fresh;
      OP_REQUIRES_OK(ctx, Tensor::Allocate(dtype, value.shape(), &fresh));
      NarrowInto(widened[i]->tensor, &fresh, ctx);
      value = std::move(fresh);
    }
    if (!resource_) ctx->set_output_ref(0, variables[0]);
  }

 private:
  std::unique_ptr<OpKernel> float_kernel_;
  bool resource_ = false;  // ResourceApply*: handles in, no output
  int num_variables_ = 0;  // inputs [0, num_variables_) are variables
  std::vector<std::string> input_names_;
};

// Static registration runs before main; the op names are fixed above.
struct Registrar {
  Registrar() {
    auto compute = [](OpKernelConstruction* c) -> OpKernel* { return new HalfViaFloatOp(c); };
    auto update = [](OpKernelConstruction* c) -> OpKernel* { return new HalfUpdateViaFloatOp(c); };
    for (const char* op : kOpsComputedInFloat) {
      RegisterKernel(Name(op).Device(DEVICE_CPU).TypeConstraint<Eigen::half>("T"), compute);
      RegisterKernel(Name(op).Device(DEVICE_CPU).TypeConstraint<Eigen::bfloat16>("T"), compute);
    }
    for (const char* op : kUpdatesComputedInFloat) {
      RegisterKernel(Name(op).Device(DEVICE_CPU).TypeConstraint<Eigen::half>("T"), update);
      RegisterKernel(Name(op).Device(DEVICE_CPU).TypeConstraint<Eigen::bfloat16>("T"), update);
    }
  }
} registrar;

}  // namespace
}  // namespace tensorweave
