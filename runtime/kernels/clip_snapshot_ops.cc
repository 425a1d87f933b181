// ClipByValue (for the real numbers and the integers up to 16 bits), and
// the Identity-like PreventGradient for every dtype (Snapshot is an array op).
//
// ClipByValue's bounds are each a scalar or of t's shape (TensorFlow's
// kernel broadcasts nothing else); the result is max(min(t, hi), lo) with
// Eigen's comparisons, so a NaN in t stays NaN, a NaN bound leaves t, and
// lo > hi gives lo, all as TensorFlow gives them.
#include "runtime/framework/op_kernel.h"
#include "runtime/framework/tensor.h"
#include "runtime/kernels/kernel_util.h"

namespace tensorweave {
namespace {

template <typename T>
T Clip(T value, T lo, T hi) {
  const T below_hi = hi < value ? hi : value;
  return below_hi < lo ? lo : below_hi;
}

template <typename T>
class ClipByValueOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    const Tensor& lo = ctx->input(1);
    const Tensor& hi = ctx->input(2);
    const bool lo_scalar = lo.shape().dims() == 0, hi_scalar = hi.shape().dims() == 0;
    OP_REQUIRES(ctx,
                (lo_scalar || lo.shape() == t.shape()) && (hi_scalar || hi.shape() == t.shape()),
                errors::InvalidArgument(
                    "clip_value_min and clip_value_max must be either of the same shape as input, "
                    "or a scalar. input shape: ",
                    t.shape().DebugString(), " clip_value_min shape: ", lo.shape().DebugString(),
                    " clip_value_max shape: ", hi.shape().DebugString()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, t.shape(), &out));
    const T* values = t.data<T>();
    const T* lows = lo.data<T>();
    const T* highs = hi.data<T>();
    T* result = out->data<T>();
    ParallelFor(ctx, t.NumElements(), 4 * sizeof(T), 2 * kCheapCycles,
                [&](int64_t begin, int64_t end) {
                  for (int64_t i = begin; i < end; ++i) {
                    result[i] = Clip(values[i], lows[lo_scalar ? 0 : i], highs[hi_scalar ? 0 : i]);
                  }
                });
  }
};

// PreventGradient: the input itself (the message only matters to the
// Python gradient, which refuses to differentiate through the op).
class PreventGradientOp : public CheapKernel {
 public:
  using CheapKernel::CheapKernel;
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};

#define TW_REGISTER_CLIP(T) TW_REGISTER_CPU_KERNEL("ClipByValue", T, ClipByValueOp<T>);

TW_FOR_EACH_REAL_NUMBER(TW_REGISTER_CLIP)
TW_REGISTER_CLIP(uint8_t)
TW_REGISTER_CLIP(int8_t)
TW_REGISTER_CLIP(int16_t)
TW_REGISTER_CLIP(uint16_t)

#undef TW_REGISTER_CLIP

REGISTER_KERNEL_BUILDER(Name("PreventGradient").Device(DEVICE_CPU), PreventGradientOp);

}  // namespace
}  // namespace tensorweave
