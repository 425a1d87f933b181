// Softmax and LogSoftmax along the last dimension, computed from x - max
// so that large logits do not overflow: softmax = exp(x - max) / sum and
// log_softmax = (x - max) - log(sum), sum = sum(exp(x - max)).
#include <cmath>
#include <type_traits>

#include "runtime/kernels/cpu_dispatch.h"
#include "runtime/kernels/eigen_helpers.h"

namespace tensorweave {
namespace {

template <typename T, bool kLog>
class SoftmaxOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    OP_REQUIRES(ctx, logits.dims() >= 1,
                errors::InvalidArgument("logits must have >= 1 dimension, got ",
                                        logits.shape().DebugString()));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, logits.shape(), &output));
    const int64_t depth = logits.dim_size(logits.dims() - 1);
    if (logits.NumElements() == 0) return;
    const int64_t rows = logits.NumElements() / depth;
    const T* in = logits.data<T>();
    T* out = output->data<T>();
    // Each row is read before it is written, so in == out is fine.
    ParallelFor(ctx, rows, 2 * depth * sizeof(T), depth * (kTranscendentalCycles + 3),
                [&](int64_t begin, int64_t end) {
                  // Float rows: the same computation from the CPU's kernel
                  // table (cpu_dispatch.h).
                  if constexpr (std::is_same_v<T, float>) {
                    const auto softmax = ActiveFloatKernels().softmax;
                    for (int64_t r = begin; r < end; ++r) {
                      softmax(in + r * depth, out + r * depth, depth, kLog);
                    }
                    return;
                  }
                  for (int64_t r = begin; r < end; ++r) {
                    ConstEigenVector<T> x(in + r * depth, depth);
                    EigenVector<T> y(out + r * depth, depth);
                    T max_value, sum;
                    EigenScalar<T> max_map(&max_value), sum_map(&sum);
                    max_map = x.maximum();
                    if (kLog) {
                      y = x - x.constant(max_value);
                      sum_map = y.exp().sum();
                      y = y - y.constant(std::log(sum));
                    } else {
                      y = (x - x.constant(max_value)).exp();
                      sum_map = y.sum();
                      y = y / y.constant(sum);
                    }
                  }
                });
  }
};

#define TW_REGISTER_SOFTMAX(T)                               \
  TW_REGISTER_CPU_KERNEL("Softmax", T, SoftmaxOp<T, false>); \
  TW_REGISTER_CPU_KERNEL("LogSoftmax", T, SoftmaxOp<T, true>);
TW_FOR_EACH_FLOAT(TW_REGISTER_SOFTMAX)
#undef TW_REGISTER_SOFTMAX

}  // namespace
}  // namespace tensorweave
