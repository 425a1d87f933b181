// The kernel of _FusedUnaryChain (ops/fused_elementwise_ops.cc): each block
// of the input goes through every function of the chain while it is in the
// L1 cache, with the loops of the CPU's float kernel table (cpu_dispatch.h),
// so a chain of n functions reads and writes memory once instead of n
// times, and each function gives exactly what its own kernel does.
#include <algorithm>
#include <string>
#include <vector>

#include "runtime/kernels/cpu_dispatch.h"
#include "runtime/kernels/kernel_util.h"

namespace tensorweave {
namespace {

// The table entry of a function the chain may hold; null if none (the
// fusion pass fuses only these).
FloatUnaryLoop FloatKernelTable::*FusableUnaryLoop(const std::string& op) {
  if (op == "Exp") return &FloatKernelTable::exp;
  if (op == "Log") return &FloatKernelTable::log;
  if (op == "Tanh") return &FloatKernelTable::tanh;
  if (op == "Sigmoid") return &FloatKernelTable::sigmoid;
  if (op == "Sqrt") return &FloatKernelTable::sqrt;
  if (op == "Rsqrt") return &FloatKernelTable::rsqrt;
  if (op == "Relu") return &FloatKernelTable::relu;
  return nullptr;
}

// 8 KB of floats: a block and its output stay in L1 across the chain.
constexpr int64_t kBlock = 2048;

class FusedUnaryChainOp : public OpKernel {
 public:
  explicit FusedUnaryChainOp(OpKernelConstruction* c) : OpKernel(c) {
    std::vector<std::string> ops;
    OP_REQUIRES_OK(c, c->GetAttr("ops", &ops));
    OP_REQUIRES(c, !ops.empty(), errors::InvalidArgument("ops must name at least one function"));
    for (const std::string& op : ops) {
      FloatUnaryLoop FloatKernelTable::*loop = FusableUnaryLoop(op);
      OP_REQUIRES(c, loop != nullptr,
                  errors::InvalidArgument("_FusedUnaryChain cannot run '", op,
                                          "'; the functions are Exp, Log, Tanh, Sigmoid, Sqrt, "
                                          "Rsqrt and Relu"));
      loops_.push_back(loop);
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    const float* in = x.data<float>();
    float* out = y->data<float>();
    const FloatKernelTable& table = ActiveFloatKernels();
    const double cycles = static_cast<double>(kTranscendentalCycles) * loops_.size();
    ParallelFor(ctx, x.NumElements(), 2 * sizeof(float), cycles, [&](int64_t begin, int64_t end) {
      for (int64_t at = begin; at < end; at += kBlock) {
        const int64_t length = std::min(kBlock, end - at);
        (table.*loops_[0])(in + at, out + at, length);
        for (size_t i = 1; i < loops_.size(); ++i) (table.*loops_[i])(out + at, out + at, length);
      }
    });
  }

 private:
  std::vector<FloatUnaryLoop FloatKernelTable::*> loops_;
};

REGISTER_KERNEL_BUILDER(Name("_FusedUnaryChain").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                        FusedUnaryChainOp);

}  // namespace
}  // namespace tensorweave
