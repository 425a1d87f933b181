// DepthwiseConv2dNativeBackpropInput and DepthwiseConv2dNativeBackpropFilter
// on CPU (the layout helpers are in depthwise_conv_op.cc).
//
// The input gradient is gathered, not scattered: one task computes a whole
// input row, visiting for each pixel the output pixels whose windows read
// it, so no two tasks write the same element and no atomics or per-thread
// copies are needed. Per tap the output gradient's out_depth channels are
// multiplied by the tap's filter values and summed over each input
// channel's `multiplier` outputs.
//
// The filter gradient sums over every output pixel: the output rows are cut
// into a fixed number of shards, each summing into its own accumulator, and
// the accumulators are added in shard order, so the result does not depend
// on thread timing or on the pool's size.
#include <algorithm>
#include <atomic>
#include <vector>

#include "runtime/kernels/depthwise_conv.h"

namespace tensorweave {
namespace {

// At most this many filter-gradient shards, and at most this many bytes of
// shard accumulators (a single shard when one filter is larger).
constexpr int64_t kMaxFilterShards = 16;
constexpr int64_t kShardBudgetBytes = 64 << 20;

// in[c] += sum over m of grad[c * multiplier + m] * f[c * multiplier + m].
template <typename T>
inline void MultiplyAccumulateReduce(const T* __restrict grad, const T* __restrict f,
                                     T* __restrict in, int64_t depth, int64_t multiplier) {
  if (multiplier == 1) {
    MultiplyAccumulate(grad, f, in, depth);
    return;
  }
  for (int64_t c = 0; c < depth; ++c) {
    T sum = T(0);
    for (int64_t m = 0; m < multiplier; ++m)
      sum += grad[c * multiplier + m] * f[c * multiplier + m];
    in[c] += sum;
  }
}

// The one window position along a dimension whose tap `tap` reads input
// position `in`: false when none does (between strides or outside the
// output).
inline bool OutputPosition(int64_t in, int64_t pad, int64_t tap, int64_t dilation, int64_t stride,
                           int64_t out_size, int64_t* out) {
  const int64_t shifted = in + pad - tap * dilation;
  if (shifted < 0 || shifted % stride != 0) return false;
  *out = shifted / stride;
  return *out < out_size;
}

// Input-gradient rows [row_begin, row_end) of the batch x in_rows rows,
// any multiplier.
template <typename T>
TW_DEPTHWISE_INLINE void BackpropInputRowsAnyMultiplier(const DepthwiseGeometry& g, const T* grad,
                                                        const T* filter, T* output,
                                                        int64_t row_begin, int64_t row_end) {
  const int64_t depth = g.out_depth;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t image = r / g.in_rows;
    const int64_t in_row = r % g.in_rows;
    T* dst = output + r * g.in_cols * g.in_depth;
    std::fill(dst, dst + g.in_cols * g.in_depth, T(0));
    for (int64_t fr = 0; fr < g.filter_rows; ++fr) {
      int64_t out_row = 0;
      if (!OutputPosition(in_row, g.pad_rows, fr, g.attrs.dilation_rows, g.attrs.stride_rows,
                          g.out_rows, &out_row)) {
        continue;
      }
      const T* grad_row = grad + (image * g.out_rows + out_row) * g.out_cols * depth;
      const T* taps = filter + fr * g.filter_cols * depth;
      for (int64_t in_col = 0; in_col < g.in_cols; ++in_col) {
        T* pixel = dst + in_col * g.in_depth;
        for (int64_t fc = 0; fc < g.filter_cols; ++fc) {
          int64_t out_col = 0;
          if (!OutputPosition(in_col, g.pad_cols, fc, g.attrs.dilation_cols, g.attrs.stride_cols,
                              g.out_cols, &out_col)) {
            continue;
          }
          MultiplyAccumulateReduce(grad_row + out_col * depth, taps + fc * depth, pixel, g.in_depth,
                                   g.multiplier);
        }
      }
    }
  }
}

// Adds the filter gradient of output rows [row_begin, row_end) into `sum`,
// any multiplier.
template <typename T>
TW_DEPTHWISE_INLINE void BackpropFilterRowsAnyMultiplier(const DepthwiseGeometry& g, const T* input,
                                                         const T* grad, T* sum, int64_t row_begin,
                                                         int64_t row_end) {
  const int64_t depth = g.out_depth;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t image = r / g.out_rows;
    const int64_t out_row = r % g.out_rows;
    const T* grad_row = grad + r * g.out_cols * depth;
    for (int64_t fr = 0; fr < g.filter_rows; ++fr) {
      const int64_t in_row =
          out_row * g.attrs.stride_rows - g.pad_rows + fr * g.attrs.dilation_rows;
      if (in_row < 0 || in_row >= g.in_rows) continue;
      const T* in = input + (image * g.in_rows + in_row) * g.in_cols * g.in_depth;
      T* taps = sum + fr * g.filter_cols * depth;
      for (int64_t out_col = 0; out_col < g.out_cols; ++out_col) {
        const int64_t col_start = out_col * g.attrs.stride_cols - g.pad_cols;
        const T* pixel_grad = grad_row + out_col * depth;
        for (int64_t fc = 0; fc < g.filter_cols; ++fc) {
          const int64_t in_col = col_start + fc * g.attrs.dilation_cols;
          if (in_col < 0 || in_col >= g.in_cols) continue;
          MultiplyAccumulateBroadcast(in + in_col * g.in_depth, pixel_grad, taps + fc * depth,
                                      g.in_depth, g.multiplier);
        }
      }
    }
  }
}

// The same with multiplier 1: per input pixel, the (output pixel, tap)
// pairs that read it are listed, then each block of channels is summed over
// them in registers and stored once.
template <typename T>
TW_DEPTHWISE_INLINE void BackpropInputRows(const DepthwiseGeometry& g, const T* grad,
                                           const T* filter, T* output, int64_t row_begin,
                                           int64_t row_end) {
  if (g.multiplier != 1) {
    BackpropInputRowsAnyMultiplier(g, grad, filter, output, row_begin, row_end);
    return;
  }
  const int64_t depth = g.out_depth;
  // Distinct taps of one input pixel reach distinct output rows and columns.
  const size_t max_taps = static_cast<size_t>(std::min(g.filter_rows, g.out_rows) *
                                              std::min(g.filter_cols, g.out_cols));
  std::vector<const T*> grads(max_taps), taps(max_taps);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t image = r / g.in_rows;
    const int64_t in_row = r % g.in_rows;
    T* dst = output + r * g.in_cols * depth;
    for (int64_t in_col = 0; in_col < g.in_cols; ++in_col) {
      int64_t count = 0;
      for (int64_t fr = 0; fr < g.filter_rows; ++fr) {
        int64_t out_row = 0;
        if (!OutputPosition(in_row, g.pad_rows, fr, g.attrs.dilation_rows, g.attrs.stride_rows,
                            g.out_rows, &out_row)) {
          continue;
        }
        const T* grad_row = grad + (image * g.out_rows + out_row) * g.out_cols * depth;
        for (int64_t fc = 0; fc < g.filter_cols; ++fc) {
          int64_t out_col = 0;
          if (!OutputPosition(in_col, g.pad_cols, fc, g.attrs.dilation_cols, g.attrs.stride_cols,
                              g.out_cols, &out_col)) {
            continue;
          }
          grads[count] = grad_row + out_col * depth;
          taps[count] = filter + (fr * g.filter_cols + fc) * depth;
          ++count;
        }
      }
      DotTaps(grads.data(), taps.data(), count, depth, dst + in_col * depth);
    }
  }
}

// The same with multiplier 1: per filter tap, the output pixels of a row
// whose window puts that tap inside the input form one run, summed per
// block of channels in registers.
template <typename T>
TW_DEPTHWISE_INLINE void BackpropFilterRows(const DepthwiseGeometry& g, const T* input,
                                            const T* grad, T* sum, int64_t row_begin,
                                            int64_t row_end) {
  if (g.multiplier != 1) {
    BackpropFilterRowsAnyMultiplier(g, input, grad, sum, row_begin, row_end);
    return;
  }
  const int64_t depth = g.out_depth;
  const int64_t stride = g.attrs.stride_cols;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t image = r / g.out_rows;
    const int64_t out_row = r % g.out_rows;
    const T* grad_row = grad + r * g.out_cols * depth;
    for (int64_t fr = 0; fr < g.filter_rows; ++fr) {
      const int64_t in_row =
          out_row * g.attrs.stride_rows - g.pad_rows + fr * g.attrs.dilation_rows;
      if (in_row < 0 || in_row >= g.in_rows) continue;
      const T* in = input + (image * g.in_rows + in_row) * g.in_cols * depth;
      for (int64_t fc = 0; fc < g.filter_cols; ++fc) {
        // Output columns c with 0 <= c * stride + shift < in_cols.
        const int64_t shift = fc * g.attrs.dilation_cols - g.pad_cols;
        const int64_t first = shift >= 0 ? 0 : (-shift + stride - 1) / stride;
        const int64_t last_in = g.in_cols - 1 - shift;
        const int64_t end = last_in < 0 ? 0 : std::min(g.out_cols, last_in / stride + 1);
        if (first >= end) continue;
        StridedDotAdd(grad_row + first * depth, in + (first * stride + shift) * depth, depth,
                      stride * depth, end - first, depth, sum + (fr * g.filter_cols + fc) * depth);
      }
    }
  }
}

TW_DEPTHWISE_DISPATCH(RunBackpropInputRows, BackpropInputRows, float)
TW_DEPTHWISE_DISPATCH(RunBackpropInputRows, BackpropInputRows, double)
TW_DEPTHWISE_DISPATCH(RunBackpropFilterRows, BackpropFilterRows, float)
TW_DEPTHWISE_DISPATCH(RunBackpropFilterRows, BackpropFilterRows, double)

// Checks out_backprop against the forward op's output shape.
Status CheckOutBackprop(const Tensor& out_backprop, const TensorShape& expected,
                        const TensorShape& input, const TensorShape& filter) {
  if (out_backprop.shape() == expected) return Status::OK();
  return errors::InvalidArgument("out_backprop has shape ", out_backprop.shape().DebugString(),
                                 " but the depthwise convolution of input ", input.DebugString(),
                                 " with filter ", filter.DebugString(), " has output shape ",
                                 expected.DebugString());
}

template <typename T>
class DepthwiseConv2dNativeBackpropInputOp : public DepthwiseOpBase {
 public:
  using DepthwiseOpBase::DepthwiseOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& filter = ctx->input(1);
    TensorShape input_shape, output_shape;
    OP_REQUIRES_OK(ctx, DepthwiseShapeFromSizes(ctx->input(0), "input_sizes", &input_shape));
    DepthwiseGeometry g;
    OP_REQUIRES_OK(
        ctx, ComputeDepthwiseGeometry(input_shape, filter.shape(), attrs_, &g, &output_shape));
    OP_REQUIRES_OK(ctx, CheckOutBackprop(ctx->input(2), output_shape, input_shape, filter.shape()));
    Tensor grad, output;
    OP_REQUIRES_OK(ctx, ToNhwc(ctx, ctx->input(2), &grad));
    OP_REQUIRES_OK(ctx, AllocateNhwcOutput(ctx, input_shape, &output));
    if (output.NumElements() > 0) {
      const T* grad_data = grad.data<T>();
      const T* taps = filter.data<T>();
      T* out = output.data<T>();
      const double row_cycles =
          DepthwiseRowCycles(g) * g.in_cols / std::max<int64_t>(1, g.out_cols);
      ForEachRowUntilInterrupted(
          ctx, g.batch * g.in_rows, static_cast<double>(g.in_cols * g.out_depth) * sizeof(T),
          row_cycles,
          [&](int64_t row) { RunBackpropInputRows(g, grad_data, taps, out, row, row + 1); });
      if (!ctx->status().ok()) return;
    }
    OP_REQUIRES_OK(ctx, FinishNhwcOutput(ctx, output));
  }
};

template <typename T>
class DepthwiseConv2dNativeBackpropFilterOp : public DepthwiseOpBase {
 public:
  using DepthwiseOpBase::DepthwiseOpBase;

  void Compute(OpKernelContext* ctx) override {
    TensorShape filter_shape, output_shape;
    OP_REQUIRES_OK(ctx, DepthwiseShapeFromSizes(ctx->input(1), "filter_sizes", &filter_shape));
    DepthwiseGeometry g;
    OP_REQUIRES_OK(ctx, ComputeDepthwiseGeometry(ctx->input(0).shape(), filter_shape, attrs_, &g,
                                                 &output_shape));
    OP_REQUIRES_OK(
        ctx, CheckOutBackprop(ctx->input(2), output_shape, ctx->input(0).shape(), filter_shape));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, filter_shape, &output));
    const int64_t filter_size = output->NumElements();
    T* out = output->data<T>();
    std::fill(out, out + filter_size, T(0));
    const int64_t rows = g.batch * g.out_rows;
    if (filter_size == 0 || rows == 0 || g.out_cols == 0) return;
    Tensor input, grad;
    OP_REQUIRES_OK(ctx, ToNhwc(ctx, ctx->input(0), &input));
    OP_REQUIRES_OK(ctx, ToNhwc(ctx, ctx->input(2), &grad));

    const int64_t shard_limit =
        std::max<int64_t>(1, kShardBudgetBytes / (filter_size * static_cast<int64_t>(sizeof(T))));
    const int64_t shards = std::min({rows, kMaxFilterShards, shard_limit});
    Tensor sums;
    TensorShape sums_shape;
    OP_REQUIRES_OK(ctx, TensorShape::Build({shards, filter_size}, &sums_shape));
    OP_REQUIRES_OK(ctx, Tensor::Allocate(output->dtype(), sums_shape, &sums));
    T* sum_data = sums.data<T>();
    std::fill(sum_data, sum_data + shards * filter_size, T(0));
    const T* in = input.data<T>();
    const T* grad_data = grad.data<T>();
    // Shard s sums rows [rows * s / shards, rows * (s + 1) / shards), one
    // call per row, stopping between rows once the step is interrupted.
    std::atomic<bool> interrupted{false};
    ForEachRowUntilInterrupted(
        ctx, shards, static_cast<double>(filter_size) * sizeof(T),
        DepthwiseRowCycles(g) * rows / shards, [&](int64_t shard) {
          for (int64_t row = rows * shard / shards; row < rows * (shard + 1) / shards; ++row) {
            if (!ctx->CheckNotInterrupted().ok()) {
              interrupted.store(true, std::memory_order_relaxed);
              return;
            }
            RunBackpropFilterRows(g, in, grad_data, sum_data + shard * filter_size, row, row + 1);
          }
        });
    if (interrupted.load()) ctx->SetStatus(ctx->CheckNotInterrupted());
    if (!ctx->status().ok()) return;
    for (int64_t shard = 0; shard < shards; ++shard) {
      const T* sum = sum_data + shard * filter_size;
      for (int64_t i = 0; i < filter_size; ++i) out[i] += sum[i];
    }
  }
};

#define TW_REGISTER_DEPTHWISE_GRADS(T)                             \
  TW_REGISTER_CPU_KERNEL("DepthwiseConv2dNativeBackpropInput", T,  \
                         DepthwiseConv2dNativeBackpropInputOp<T>); \
  TW_REGISTER_CPU_KERNEL("DepthwiseConv2dNativeBackpropFilter", T, \
                         DepthwiseConv2dNativeBackpropFilterOp<T>);
TW_FOR_EACH_FLOAT(TW_REGISTER_DEPTHWISE_GRADS)
#undef TW_REGISTER_DEPTHWISE_GRADS

}  // namespace
}  // namespace tensorweave
