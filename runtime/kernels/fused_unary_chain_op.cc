// The kernel of _FusedUnaryChain (ops/fused_elementwise_ops.cc): each block
// of the input goes through every step of the chain while it is in the L1
// cache, with the loops of the CPU's float kernel table (cpu_dispatch.h),
// so a chain of n steps reads and writes memory once instead of n times,
// and each step gives exactly what its own kernel does.
#include <algorithm>
#include <string>
#include <vector>

#include "runtime/kernels/cpu_dispatch.h"
#include "runtime/kernels/kernel_util.h"

namespace tensorweave {
namespace {

// 8 KB of floats: a block and its output stay in L1 across the chain.
constexpr int64_t kBlock = 2048;

// One step: a function, or a binary operation with a scalar on either side.
struct Step {
  FloatUnaryLoop FloatKernelTable::*function = nullptr;
  FloatBinaryLoops FloatKernelTable::*binary = nullptr;
  bool scalar_first = false;
  float scalar = 0;
};

// The step named `op`; false if the chain cannot run it.
bool ParseStep(const std::string& op, float scalar, Step* step) {
  static const struct {
    const char* name;
    FloatUnaryLoop FloatKernelTable::*loop;
  } kFunctions[] = {{"Exp", &FloatKernelTable::exp},   {"Log", &FloatKernelTable::log},
                    {"Tanh", &FloatKernelTable::tanh}, {"Sigmoid", &FloatKernelTable::sigmoid},
                    {"Sqrt", &FloatKernelTable::sqrt}, {"Rsqrt", &FloatKernelTable::rsqrt},
                    {"Relu", &FloatKernelTable::relu}};
  static const struct {
    const char* name;
    FloatBinaryLoops FloatKernelTable::*loops;
    bool scalar_first;
  } kBinary[] = {{"Add", &FloatKernelTable::add, false},
                 {"Sub", &FloatKernelTable::sub, false},
                 {"RSub", &FloatKernelTable::sub, true},
                 {"Mul", &FloatKernelTable::mul, false},
                 {"RealDiv", &FloatKernelTable::div, false},
                 {"RRealDiv", &FloatKernelTable::div, true},
                 {"Maximum", &FloatKernelTable::maximum, false},
                 {"Minimum", &FloatKernelTable::minimum, false}};
  for (const auto& f : kFunctions) {
    if (op == f.name) {
      step->function = f.loop;
      return true;
    }
  }
  for (const auto& b : kBinary) {
    if (op == b.name) {
      step->binary = b.loops;
      step->scalar_first = b.scalar_first;
      step->scalar = scalar;
      return true;
    }
  }
  return false;
}

void RunStep(const FloatKernelTable& table, const Step& step, const float* in, float* out,
             int64_t n) {
  if (step.function != nullptr) {
    (table.*step.function)(in, out, n);
  } else if (step.scalar_first) {
    (table.*step.binary).scalar_vector(step.scalar, in, out, n);
  } else {
    (table.*step.binary).vector_scalar(in, step.scalar, out, n);
  }
}

class FusedUnaryChainOp : public OpKernel {
 public:
  explicit FusedUnaryChainOp(OpKernelConstruction* c) : OpKernel(c) {
    std::vector<std::string> ops;
    std::vector<float> scalars;
    OP_REQUIRES_OK(c, c->GetAttr("ops", &ops));
    OP_REQUIRES_OK(c, c->GetAttr("scalars", &scalars));
    OP_REQUIRES(c, !ops.empty(), errors::InvalidArgument("ops must name at least one step"));
    OP_REQUIRES(c, scalars.empty() || scalars.size() == ops.size(),
                errors::InvalidArgument("scalars must be empty or hold one value per op: ",
                                        scalars.size(), " values for ", ops.size(), " ops"));
    for (size_t i = 0; i < ops.size(); ++i) {
      Step step;
      OP_REQUIRES(c, ParseStep(ops[i], scalars.empty() ? 0.0f : scalars[i], &step),
                  errors::InvalidArgument(
                      "_FusedUnaryChain cannot run '", ops[i],
                      "'; the steps are Exp, Log, Tanh, Sigmoid, Sqrt, Rsqrt, Relu, Add, Sub, "
                      "RSub, Mul, RealDiv, RRealDiv, Maximum and Minimum"));
      steps_.push_back(step);
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    const float* in = x.data<float>();
    float* out = y->data<float>();
    const FloatKernelTable& table = ActiveFloatKernels();
    const double cycles = static_cast<double>(kTranscendentalCycles) * steps_.size();
    ParallelFor(ctx, x.NumElements(), 2 * sizeof(float), cycles, [&](int64_t begin, int64_t end) {
      for (int64_t at = begin; at < end; at += kBlock) {
        const int64_t length = std::min(kBlock, end - at);
        RunStep(table, steps_[0], in + at, out + at, length);
        for (size_t i = 1; i < steps_.size(); ++i) {
          RunStep(table, steps_[i], out + at, out + at, length);
        }
      }
    });
  }

 private:
  std::vector<Step> steps_;
};

REGISTER_KERNEL_BUILDER(Name("_FusedUnaryChain").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                        FusedUnaryChainOp);

}  // namespace
}  // namespace tensorweave
