// What the DepthwiseConv2dNative kernel (depthwise_conv_op.cc) and its two
// backprop kernels (depthwise_conv_grad_op.cc) share: the attrs parsed once
// per kernel, NCHW tensors moved to and from the NHWC layout the loops
// run on, and the int32 sizes inputs read as shapes.
//
//   class MyDepthwiseOp : public DepthwiseOpBase {
//     void Compute(OpKernelContext* ctx) override {
//       Tensor input;  // NHWC whatever the node's data_format
//       OP_REQUIRES_OK(ctx, ToNhwc(ctx, ctx->input(0), &input));
//       ...
//     }
//   };
//
// The loops themselves walk NHWC rows with the channels innermost, so each
// filter tap is a multiply-add over a contiguous vector of out_depth values
// (channel c * multiplier + m of the output pairs with channel c of the
// input and entry [.., c, m] of the filter).
#ifndef TENSORWEAVE_KERNELS_DEPTHWISE_CONV_H_
#define TENSORWEAVE_KERNELS_DEPTHWISE_CONV_H_

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "runtime/framework/depthwise_geometry.h"
#include "runtime/framework/op_kernel.h"
#include "runtime/framework/tensor.h"
#include "runtime/kernels/kernel_util.h"

namespace tensorweave {

class DepthwiseOpBase : public OpKernel {
 public:
  explicit DepthwiseOpBase(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ParseDepthwiseAttrs(c->def(), &attrs_));
  }

 protected:
  // `tensor` itself when the node is NHWC, else an NHWC copy of it.
  Status ToNhwc(const OpKernelContext* ctx, const Tensor& tensor, Tensor* nhwc) const;

  // An NHWC tensor of `shape` (given in the node's data_format) to compute
  // into: the allocated output itself when the node is NHWC, else a
  // temporary that FinishNhwcOutput moves into the output.
  Status AllocateNhwcOutput(OpKernelContext* ctx, const TensorShape& shape, Tensor* nhwc) const;
  Status FinishNhwcOutput(OpKernelContext* ctx, const Tensor& nhwc) const;

  // The NHWC form of a shape given in the node's data_format.
  TensorShape NhwcShape(const TensorShape& shape) const;

  DepthwiseAttrs attrs_;
};

// Reads an int32 sizes input (input_sizes, filter_sizes) as a 4-D shape.
Status DepthwiseShapeFromSizes(const Tensor& sizes, const char* name, TensorShape* shape);

// Output rows [row_begin, row_end) of DepthwiseConv2dNative's NHWC output
// (batch * out_rows rows of out_cols pixels) on the calling thread, through
// the AVX2 build of the loops when the CPU has it. _FusedDepthwiseConv2dNative
// (fused_conv_ops.cc) applies its epilogue to each row while it is in cache.
void DepthwiseForwardRows(const DepthwiseGeometry& g, const float* input, const float* filter,
                          float* output, int64_t row_begin, int64_t row_end);
void DepthwiseForwardRows(const DepthwiseGeometry& g, const double* input, const double* filter,
                          double* output, int64_t row_begin, int64_t row_end);

// Cycles of one output row (out_cols pixels x taps x out_depth channels),
// for ParallelFor's block sizes.
double DepthwiseRowCycles(const DepthwiseGeometry& g);

// Calls fn(row) for each row in [0, total) in ParallelFor's blocks, stopping
// between rows once the step is cancelled or past its deadline (the kernel
// then fails with that status): the work is the product of two inputs'
// sizes (pixels x window taps), or set by a sizes value, so a small graph can
// ask for hours of it.
template <typename Fn>
void ForEachRowUntilInterrupted(OpKernelContext* ctx, int64_t total, double bytes_per_row,
                                double cycles_per_row, Fn&& fn) {
  std::atomic<bool> interrupted{false};
  ParallelFor(ctx, total, bytes_per_row, cycles_per_row, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      if (interrupted.load(std::memory_order_relaxed)) return;
      if (!ctx->CheckNotInterrupted().ok()) {
        interrupted.store(true, std::memory_order_relaxed);
        return;
      }
      fn(row);
    }
  });
  if (interrupted.load()) ctx->SetStatus(ctx->CheckNotInterrupted());
}

// The per-pixel loops are built twice: for AVX2+FMA and for the baseline
// the library is compiled for (no -march), and the CPU picks one once.
// TW_DEPTHWISE_DISPATCH(RunName, Name, T) defines RunName(g, a, b, out,
// begin, end) calling the template Name<T> so; the templates it calls are
// TW_DEPTHWISE_INLINE, so their loops are compiled inside each build.
#define TW_DEPTHWISE_INLINE inline __attribute__((always_inline))

inline bool CpuHasAvx2Fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

#define TW_DEPTHWISE_DISPATCH(RUN, IMPL, T)                                                     \
  __attribute__((target("avx2,fma"))) void RUN##Avx2(                                           \
      const DepthwiseGeometry& g, const T* a, const T* b, T* out, int64_t begin, int64_t end) { \
    IMPL(g, a, b, out, begin, end);                                                             \
  }                                                                                             \
  void RUN##Baseline(const DepthwiseGeometry& g, const T* a, const T* b, T* out, int64_t begin, \
                     int64_t end) {                                                             \
    IMPL(g, a, b, out, begin, end);                                                             \
  }                                                                                             \
  void RUN(const DepthwiseGeometry& g, const T* a, const T* b, T* out, int64_t begin,           \
           int64_t end) {                                                                       \
    if (CpuHasAvx2Fma()) {                                                                      \
      RUN##Avx2(g, a, b, out, begin, end);                                                      \
    } else {                                                                                    \
      RUN##Baseline(g, a, b, out, begin, end);                                                  \
    }                                                                                           \
  }

// Channels per accumulator block: 128 bytes, which the compiler keeps in
// registers (4 AVX or 8 SSE registers) across all the taps of a pixel.
template <typename T>
constexpr int64_t kChannelBlock = 128 / sizeof(T);

// out[k] = sum over t < count of a[t][offset + k] * b[t][offset + k] for
// k < kWidth: one channel block of one pixel, summed over its taps.
template <typename T, int64_t kWidth>
TW_DEPTHWISE_INLINE void DotTapsBlock(const T* const* a, const T* const* b, int64_t count,
                                      int64_t offset, int64_t width, T* out) {
  T acc[kWidth] = {};
  for (int64_t t = 0; t < count; ++t) {
    const T* x = a[t] + offset;
    const T* f = b[t] + offset;
    if (width == kWidth) {
#pragma GCC unroll 64
      for (int64_t k = 0; k < kWidth; ++k) acc[k] += x[k] * f[k];
    } else {
      for (int64_t k = 0; k < width; ++k) acc[k] += x[k] * f[k];
    }
  }
  for (int64_t k = 0; k < width; ++k) out[k] = acc[k];
}

// out[c] = sum over t < count of a[t][c] * b[t][c] for c < depth: one pixel
// of the forward pass or the input gradient with multiplier 1, where a[t]
// and b[t] are the pixel's taps (input or output-gradient channels, filter
// values). No taps gives zeros.
template <typename T>
TW_DEPTHWISE_INLINE void DotTaps(const T* const* a, const T* const* b, int64_t count, int64_t depth,
                                 T* out) {
  constexpr int64_t kWidth = kChannelBlock<T>;
  int64_t c = 0;
  for (; c + kWidth <= depth; c += kWidth) DotTapsBlock<T, kWidth>(a, b, count, c, kWidth, out + c);
  if (c < depth) DotTapsBlock<T, kWidth>(a, b, count, c, depth - c, out + c);
}

// out[k] += sum over i < count of a[i * stride_a + k] * b[i * stride_b + k]
// for k < width <= kWidth: one channel block of one filter tap's gradient.
template <typename T, int64_t kWidth>
TW_DEPTHWISE_INLINE void StridedDotAddBlock(const T* a, const T* b, int64_t stride_a,
                                            int64_t stride_b, int64_t count, int64_t width,
                                            T* out) {
  T acc[kWidth] = {};
  for (int64_t i = 0; i < count; ++i) {
    const T* x = a + i * stride_a;
    const T* y = b + i * stride_b;
    if (width == kWidth) {
#pragma GCC unroll 64
      for (int64_t k = 0; k < kWidth; ++k) acc[k] += x[k] * y[k];
    } else {
      for (int64_t k = 0; k < width; ++k) acc[k] += x[k] * y[k];
    }
  }
  for (int64_t k = 0; k < width; ++k) out[k] += acc[k];
}

// out[c] += sum over i < count of a[i * stride_a + c] * b[i * stride_b + c]
// for c < depth: one filter tap's gradient over a run of output pixels.
template <typename T>
TW_DEPTHWISE_INLINE void StridedDotAdd(const T* a, const T* b, int64_t stride_a, int64_t stride_b,
                                       int64_t count, int64_t depth, T* out) {
  constexpr int64_t kWidth = kChannelBlock<T>;
  int64_t c = 0;
  for (; c + kWidth <= depth; c += kWidth) {
    StridedDotAddBlock<T, kWidth>(a + c, b + c, stride_a, stride_b, count, kWidth, out + c);
  }
  if (c < depth) {
    StridedDotAddBlock<T, kWidth>(a + c, b + c, stride_a, stride_b, count, depth - c, out + c);
  }
}

// out[k] += x[k] * f[k] for k < n: the inner loop of the forward pass and
// the filter gradient (multiplier 1, or x already per output channel).
template <typename T>
inline void MultiplyAccumulate(const T* __restrict x, const T* __restrict f, T* __restrict out,
                               int64_t n) {
  for (int64_t k = 0; k < n; ++k) out[k] += x[k] * f[k];
}

// out[c * multiplier + m] += x[c] * f[c * multiplier + m]: one tap of the
// forward pass for one pixel, input channels broadcast to their outputs.
template <typename T>
inline void MultiplyAccumulateBroadcast(const T* __restrict x, const T* __restrict f,
                                        T* __restrict out, int64_t depth, int64_t multiplier) {
  if (multiplier == 1) {
    MultiplyAccumulate(x, f, out, depth);
    return;
  }
  for (int64_t c = 0; c < depth; ++c) {
    const T value = x[c];
    for (int64_t m = 0; m < multiplier; ++m)
      out[c * multiplier + m] += value * f[c * multiplier + m];
  }
}

}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_DEPTHWISE_CONV_H_
