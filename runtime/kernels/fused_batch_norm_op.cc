// CPU kernels of FusedBatchNorm(V2, V3) and FusedBatchNormGrad(V2, V3)
// (ops and output meanings in runtime/ops/nn_norm_ops.cc).
//
// x is seen as [outer, channels, inner]: [N*H*W(*D), C, 1] for the
// channels-last layouts (NHWC, NDHWC) and [N, C, H*W(*D)] for the
// channels-first ones (NCHW, NCDHW), so every layout is one loop nest and
// nothing is transposed. Each kernel makes two passes over memory: one
// that sums per channel (in double, from a per-channel shift so that the
// one-pass variance keeps its precision), one that writes the result
// elementwise. Channels-last sums run over fixed row chunks (chunked_sum.h,
// results independent of the thread count), channels-first sums over
// channels in parallel; the elementwise pass runs over rows or planes.
//
// Like TensorFlow's CPU kernels, the gradient in inference mode uses the
// population statistics as constants, and an empty x gives NaN statistics
// (forward) or zero scale/offset gradients (backward). TensorFlow's CPU
// gradient refuses channels-first input in inference mode (its Python
// transposes around it, and so does ours); this one accepts it, since the
// [outer, channels, inner] view makes every layout the same loop.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/kernels/chunked_sum.h"
#include "runtime/kernels/kernel_util.h"

namespace tensorweave {
namespace {

// The [outer, channels, inner] view of a 4-D or 5-D tensor.
struct ChannelView {
  int64_t outer = 0;
  int64_t channels = 0;
  int64_t inner = 0;
  bool channels_first = false;

  int64_t per_channel() const { return outer * inner; }
};

ChannelView ViewOf(const TensorShape& shape, bool channels_first) {
  ChannelView view;
  view.channels_first = channels_first;
  const int channel_dim = channels_first ? 1 : shape.dims() - 1;
  view.channels = shape.dim_size(channel_dim);
  view.outer = 1;
  view.inner = 1;
  for (int i = 0; i < shape.dims(); ++i) {
    if (i < channel_dim) view.outer *= shape.dim_size(i);
    if (i > channel_dim) view.inner *= shape.dim_size(i);
  }
  return view;
}

// Two sums per channel, first[c] and second[c], over the elements of
// channel c. `add_row(index, first, second)` adds one channels-last row
// (element j at index + j belongs to channel j) into per-channel
// accumulators; `add_plane(index, c, &first, &second)` adds one
// channels-first plane (view.inner elements of channel c) into two scalars.
// Separate row and plane loops keep each inner loop plain enough to
// vectorize. `cycles_per_element` sizes the work for the pool.
template <typename AddRow, typename AddPlane>
void SumPerChannel(const OpKernelContext* ctx, const ChannelView& view, double cycles_per_element,
                   AddRow add_row, AddPlane add_plane, std::vector<double>* first,
                   std::vector<double>* second) {
  const int64_t channels = view.channels;
  first->assign(channels, 0.0);
  second->assign(channels, 0.0);
  if (!view.channels_first) {
    std::vector<double> totals(2 * channels);
    ChunkedSum<double>(
        ctx, view.outer, 2 * channels, cycles_per_element * channels,
        [&](int64_t begin, int64_t end, double* partial) {
          for (int64_t row = begin; row < end; ++row) {
            add_row(row * channels, partial, partial + channels);
          }
        },
        totals.data());
    std::copy(totals.begin(), totals.begin() + channels, first->begin());
    std::copy(totals.begin() + channels, totals.end(), second->begin());
    return;
  }
  ParallelFor(ctx, channels, 0, cycles_per_element * view.per_channel(),
              [&](int64_t begin, int64_t end) {
                for (int64_t c = begin; c < end; ++c) {
                  double sum_first = 0, sum_second = 0;
                  for (int64_t o = 0; o < view.outer; ++o) {
                    add_plane((o * channels + c) * view.inner, c, &sum_first, &sum_second);
                  }
                  (*first)[c] = sum_first;
                  (*second)[c] = sum_second;
                }
              });
}

// Adds the terms term(i, &a, &b) for i in [0, n) into *first and *second
// through two accumulator pairs, so that consecutive additions overlap
// instead of waiting on one another.
template <typename Term>
void AddPlaneTerms(int64_t n, Term term, double* first, double* second) {
  double first_even = 0, first_odd = 0, second_even = 0, second_odd = 0;
  int64_t i = 0;
  for (; i + 1 < n; i += 2) {
    term(i, &first_even, &second_even);
    term(i + 1, &first_odd, &second_odd);
  }
  if (i < n) term(i, &first_even, &second_even);
  *first += first_even + first_odd;
  *second += second_even + second_odd;
}

// Calls write_row(index) for every channels-last row or
// write_plane(index, c) for every channels-first plane, in parallel.
template <typename WriteRow, typename WritePlane>
void ForEachRun(const OpKernelContext* ctx, const ChannelView& view, double cycles_per_element,
                WriteRow write_row, WritePlane write_plane) {
  const int64_t channels = view.channels;
  if (!view.channels_first) {
    ParallelFor(ctx, view.outer, 8.0 * channels, cycles_per_element * channels,
                [&](int64_t begin, int64_t end) {
                  for (int64_t row = begin; row < end; ++row) write_row(row * channels);
                });
    return;
  }
  ParallelFor(ctx, view.outer * channels, 8.0 * view.inner, cycles_per_element * view.inner,
              [&](int64_t begin, int64_t end) {
                for (int64_t plane = begin; plane < end; ++plane) {
                  write_plane(plane * view.inner, plane % channels);
                }
              });
}

void FillWith(Tensor* tensor, float value) {
  std::fill(tensor->data<float>(), tensor->data<float>() + tensor->NumElements(), value);
}

// Checks x (rank 4 or 5) and that each named vector has one element per
// channel of x.
Status CheckChannelVector(const Tensor& vector, const char* name, int64_t channels,
                          const std::string& prefix = "") {
  if (vector.NumElements() != channels) {
    return errors::InvalidArgument(prefix, name,
                                   " must have the same number of elements as the channels of x, "
                                   "got ",
                                   vector.NumElements(), " and ", channels);
  }
  return Status::OK();
}

Status CheckRank1(const Tensor& tensor, const char* name) {
  if (tensor.dims() != 1) {
    return errors::InvalidArgument(name, " must be 1-dimensional", tensor.shape().DebugString());
  }
  return Status::OK();
}

Status CheckRank4Or5(const Tensor& tensor) {
  if (tensor.dims() != 4 && tensor.dims() != 5) {
    return errors::InvalidArgument("input must be 4 or 5-dimensional",
                                   tensor.shape().DebugString());
  }
  return Status::OK();
}

// The attrs both directions read.
class BatchNormKernelBase : public OpKernel {
 public:
  explicit BatchNormKernelBase(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("epsilon", &epsilon_));
    OP_REQUIRES_OK(c, c->GetAttr("is_training", &is_training_));
    std::string data_format;
    OP_REQUIRES_OK(c, c->GetAttr("data_format", &data_format));
    OP_REQUIRES(c,
                data_format == "NHWC" || data_format == "NCHW" || data_format == "NDHWC" ||
                    data_format == "NCDHW",
                errors::InvalidArgument("Invalid data format"));
    channels_first_ = data_format[1] == 'C';
  }

 protected:
  float epsilon_ = 0;
  bool is_training_ = true;
  bool channels_first_ = false;
};

// FusedBatchNorm, V2 and V3: V3 has a sixth output, a scalar.
template <typename T>
class FusedBatchNormOp : public BatchNormKernelBase {
 public:
  explicit FusedBatchNormOp(OpKernelConstruction* c) : BatchNormKernelBase(c) {
    OP_REQUIRES_OK(c, c->GetAttr("exponential_avg_factor", &factor_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    const Tensor& scale = ctx->input(1);
    const Tensor& offset = ctx->input(2);
    const Tensor& mean = ctx->input(3);
    const Tensor& variance = ctx->input(4);
    OP_REQUIRES_OK(ctx, CheckRank4Or5(x));
    OP_REQUIRES_OK(ctx, CheckRank1(scale, "scale"));
    OP_REQUIRES_OK(ctx, CheckRank1(offset, "offset"));
    OP_REQUIRES_OK(ctx, CheckRank1(mean, "estimated_mean"));
    OP_REQUIRES_OK(ctx, CheckRank1(variance, "estimated_variance"));
    const ChannelView view = ViewOf(x.shape(), channels_first_);
    OP_REQUIRES_OK(ctx, CheckChannelVector(scale, "scale", view.channels));
    OP_REQUIRES_OK(ctx, CheckChannelVector(offset, "offset", view.channels));
    // Training with factor 1 ignores mean and variance (TensorFlow's
    // Python passes empty ones).
    if (!is_training_ || factor_ != 1.0f) {
      const std::string prefix =
          is_training_ ? "When exponential_avg_factor != 1, " : "When is_training=false, ";
      OP_REQUIRES_OK(ctx, CheckChannelVector(mean, "mean", view.channels, prefix));
      OP_REQUIRES_OK(ctx, CheckChannelVector(variance, "variance", view.channels, prefix));
    }

    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    Tensor* stats[4] = {};
    for (int i = 0; i < 4; ++i) {
      OP_REQUIRES_OK(ctx, ctx->allocate_output(1 + i, scale.shape(), &stats[i]));
    }
    if (ctx->num_outputs() == 6) {
      Tensor* unused = nullptr;
      OP_REQUIRES_OK(ctx, ctx->allocate_output(5, TensorShape(), &unused));
      FillWith(unused, 0.0f);
    }
    if (x.NumElements() == 0) {
      for (Tensor* stat : stats) FillWith(stat, std::numeric_limits<float>::quiet_NaN());
      return;
    }
    if (is_training_) {
      Train(ctx, view, x, scale, offset, mean, variance, y, stats);
    } else {
      Infer(ctx, view, x, scale, offset, mean, variance, y, stats);
    }
  }

 private:
  // Batch statistics, then y; the running statistics blend in the given
  // ones unless the factor is 1.
  void Train(OpKernelContext* ctx, const ChannelView& view, const Tensor& x, const Tensor& scale,
             const Tensor& offset, const Tensor& old_mean, const Tensor& old_variance, Tensor* y,
             Tensor* const stats[4]) {
    const int64_t channels = view.channels;
    const T* in = x.data<T>();
    // Sums of (x - shift) and its square, shift being each channel's first
    // element: the variance E[d^2] - E[d]^2 then does not lose the digits
    // a large mean would take.
    std::vector<double> shift(channels);
    for (int64_t c = 0; c < channels; ++c) {
      shift[c] = static_cast<double>(in[view.channels_first ? c * view.inner : c]);
    }
    const double* shift_values = shift.data();
    std::vector<double> sums, squares;
    SumPerChannel(
        ctx, view, 3 * kCheapCycles,
        [&](int64_t index, double* __restrict__ sum, double* __restrict__ square) {
          const T* src = in + index;
          const double* __restrict__ shift_row = shift_values;
          for (int64_t c = 0; c < channels; ++c) {
            const double d = static_cast<double>(src[c]) - shift_row[c];
            sum[c] += d;
            square[c] += d * d;
          }
        },
        [&](int64_t index, int64_t c, double* sum, double* square) {
          const T* src = in + index;
          const double plane_shift = shift_values[c];
          AddPlaneTerms(
              view.inner,
              [&](int64_t i, double* plane_sum, double* plane_square) {
                const double d = static_cast<double>(src[i]) - plane_shift;
                *plane_sum += d;
                *plane_square += d * d;
              },
              sum, square);
        },
        &sums, &squares);

    const double count = static_cast<double>(view.per_channel());
    // Bessel's correction for the variance kept for inference; a single
    // value per channel keeps its (zero) biased variance, as in TensorFlow.
    const double bessel = count > 1 ? count / (count - 1) : 1.0;
    const float factor = factor_;
    float* running_mean = stats[0]->data<float>();
    float* running_variance = stats[1]->data<float>();
    float* batch_mean = stats[2]->data<float>();
    float* batch_variance = stats[3]->data<float>();
    std::vector<float> multiplier(channels);
    for (int64_t c = 0; c < channels; ++c) {
      const double centered_mean = sums[c] / count;
      const double biased = std::max(0.0, squares[c] / count - centered_mean * centered_mean);
      batch_mean[c] = static_cast<float>(shift[c] + centered_mean);
      batch_variance[c] = static_cast<float>(biased);
      if (factor == 1.0f) {
        running_mean[c] = batch_mean[c];
        running_variance[c] = static_cast<float>(biased * bessel);
      } else {
        const float keep = 1.0f - factor;
        running_mean[c] = keep * old_mean.data<float>()[c] + factor * batch_mean[c];
        running_variance[c] =
            keep * old_variance.data<float>()[c] + factor * static_cast<float>(biased * bessel);
      }
      multiplier[c] = scale.data<float>()[c] / std::sqrt(batch_variance[c] + epsilon_);
    }
    Normalize(ctx, view, x, batch_mean, multiplier.data(), offset.data<float>(), y);
  }

  // y from the given statistics, which come back as outputs 1 and 2; the
  // reserve spaces (unused by any gradient on this path) get them too.
  void Infer(OpKernelContext* ctx, const ChannelView& view, const Tensor& x, const Tensor& scale,
             const Tensor& offset, const Tensor& mean, const Tensor& variance, Tensor* y,
             Tensor* const stats[4]) {
    const int64_t channels = view.channels;
    const float* mean_values = mean.data<float>();
    const float* variance_values = variance.data<float>();
    std::vector<float> multiplier(channels);
    for (int64_t c = 0; c < channels; ++c) {
      multiplier[c] = scale.data<float>()[c] / std::sqrt(variance_values[c] + epsilon_);
    }
    for (int i = 0; i < 4; ++i) {
      std::copy(i % 2 == 0 ? mean_values : variance_values,
                (i % 2 == 0 ? mean_values : variance_values) + channels, stats[i]->data<float>());
    }
    Normalize(ctx, view, x, mean_values, multiplier.data(), offset.data<float>(), y);
  }

  // y = (x - mean) * multiplier + offset per channel, in the order
  // TensorFlow computes it (a folded x * a + b would cancel digits when x
  // is near a large mean).
  static void Normalize(OpKernelContext* ctx, const ChannelView& view, const Tensor& x,
                        const float* mean, const float* multiplier, const float* offset,
                        Tensor* y) {
    const T* in = x.data<T>();
    T* out = y->data<T>();
    const int64_t channels = view.channels;
    ForEachRun(
        ctx, view, 3 * kCheapCycles,
        [&](int64_t index) {
          // y may share x's buffer, so only the per-channel values are
          // restrict: what matters is that writes to y cannot change them.
          const float* __restrict__ row_mean = mean;
          const float* __restrict__ row_multiplier = multiplier;
          const float* __restrict__ row_offset = offset;
          const T* src = in + index;
          T* dst = out + index;
          for (int64_t c = 0; c < channels; ++c) {
            dst[c] = static_cast<T>((static_cast<float>(src[c]) - row_mean[c]) * row_multiplier[c] +
                                    row_offset[c]);
          }
        },
        [&](int64_t index, int64_t c) {
          const float plane_mean = mean[c], plane_multiplier = multiplier[c];
          const float plane_offset = offset[c];
          const T* src = in + index;
          T* dst = out + index;
          for (int64_t i = 0; i < view.inner; ++i) {
            dst[i] = static_cast<T>((static_cast<float>(src[i]) - plane_mean) * plane_multiplier +
                                    plane_offset);
          }
        });
  }

  float factor_ = 1.0f;
};

// FusedBatchNormGrad, V2 and V3 (V3's reserve_space_3 is not read).
template <typename T>
class FusedBatchNormGradOp : public BatchNormKernelBase {
 public:
  using BatchNormKernelBase::BatchNormKernelBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& y_backprop = ctx->input(0);
    const Tensor& x = ctx->input(1);
    const Tensor& scale = ctx->input(2);
    const Tensor& mean = ctx->input(3);
    const Tensor& variance = ctx->input(4);
    OP_REQUIRES_OK(ctx, CheckRank4Or5(y_backprop));
    OP_REQUIRES_OK(ctx, CheckRank4Or5(x));
    OP_REQUIRES_OK(ctx, CheckRank1(scale, "scale"));
    OP_REQUIRES_OK(ctx, CheckRank1(mean, "saved mean"));
    OP_REQUIRES_OK(ctx, CheckRank1(variance, "saved variance"));
    OP_REQUIRES(ctx, x.shape() == y_backprop.shape(),
                errors::InvalidArgument("x and y_backprop must have same shape, but x has shape ",
                                        x.shape().DebugString(), " and y_backprop has shape ",
                                        y_backprop.shape().DebugString()));
    const ChannelView view = ViewOf(x.shape(), channels_first_);
    OP_REQUIRES_OK(ctx, CheckChannelVector(scale, "scale", view.channels));
    OP_REQUIRES_OK(ctx, CheckChannelVector(mean, "reserve_space_1", view.channels));
    OP_REQUIRES_OK(ctx, CheckChannelVector(variance, "reserve_space_2", view.channels));

    Tensor* x_backprop = nullptr;
    Tensor* scale_backprop = nullptr;
    Tensor* offset_backprop = nullptr;
    Tensor* unused = nullptr;
    // dx[i] depends only on dy[i] and x[i] once the sums are taken, so it
    // may overwrite y_backprop when nothing else reads it.
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &x_backprop));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, scale.shape(), &scale_backprop));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(2, scale.shape(), &offset_backprop));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(3, TensorShape({0}), &unused));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(4, TensorShape({0}), &unused));
    if (x.NumElements() == 0) {
      FillWith(scale_backprop, 0.0f);
      FillWith(offset_backprop, 0.0f);
      return;
    }

    const int64_t channels = view.channels;
    const T* dy = y_backprop.data<T>();
    const T* in = x.data<T>();
    const float* mean_values = mean.data<float>();
    std::vector<double> dy_sums, dy_centered_sums;
    SumPerChannel(
        ctx, view, 3 * kCheapCycles,
        [&](int64_t index, double* __restrict__ dy_sum, double* __restrict__ dy_centered_sum) {
          const float* __restrict__ row_mean = mean_values;
          const T* g = dy + index;
          const T* src = in + index;
          for (int64_t c = 0; c < channels; ++c) {
            const double value = static_cast<double>(g[c]);
            dy_sum[c] += value;
            dy_centered_sum[c] += value * (static_cast<double>(src[c]) - row_mean[c]);
          }
        },
        [&](int64_t index, int64_t c, double* dy_sum, double* dy_centered_sum) {
          const double plane_mean = mean_values[c];
          const T* g = dy + index;
          const T* src = in + index;
          AddPlaneTerms(
              view.inner,
              [&](int64_t i, double* sum, double* centered_sum) {
                const double value = static_cast<double>(g[i]);
                *sum += value;
                *centered_sum += value * (static_cast<double>(src[i]) - plane_mean);
              },
              dy_sum, dy_centered_sum);
        },
        &dy_sums, &dy_centered_sums);

    const double count = static_cast<double>(view.per_channel());
    std::vector<float> inv_std(channels), dy_mean(channels), centered_coef(channels),
        multiplier(channels);
    for (int64_t c = 0; c < channels; ++c) {
      inv_std[c] = 1.0f / std::sqrt(variance.data<float>()[c] + epsilon_);
      scale_backprop->data<float>()[c] = static_cast<float>(dy_centered_sums[c] * inv_std[c]);
      offset_backprop->data<float>()[c] = static_cast<float>(dy_sums[c]);
      multiplier[c] = scale.data<float>()[c] * inv_std[c];
      dy_mean[c] = static_cast<float>(dy_sums[c] / count);
      centered_coef[c] = static_cast<float>(dy_centered_sums[c] / count * inv_std[c] * inv_std[c]);
    }
    T* dx = x_backprop->data<T>();
    const float* multipliers = multiplier.data();
    if (is_training_) {
      // x's batch statistics depend on x: dx = scale / std * (dy - mean(dy)
      // - (x - mean) / var * mean(dy * (x - mean))).
      const float* dy_means = dy_mean.data();
      const float* centered_coefs = centered_coef.data();
      ForEachRun(
          ctx, view, 6 * kCheapCycles,
          [&](int64_t index) {
            const float* __restrict__ row_mean = mean_values;
            const float* __restrict__ row_dy_mean = dy_means;
            const float* __restrict__ row_coef = centered_coefs;
            const float* __restrict__ row_multiplier = multipliers;
            const T* g = dy + index;
            const T* src = in + index;
            T* dst = dx + index;
            for (int64_t c = 0; c < channels; ++c) {
              const float centered = static_cast<float>(src[c]) - row_mean[c];
              const float g_centered = static_cast<float>(g[c]) - row_dy_mean[c];
              dst[c] = static_cast<T>(row_multiplier[c] * (g_centered - centered * row_coef[c]));
            }
          },
          [&](int64_t index, int64_t c) {
            const float plane_mean = mean_values[c], plane_dy_mean = dy_means[c];
            const float plane_coef = centered_coefs[c], plane_multiplier = multipliers[c];
            const T* g = dy + index;
            const T* src = in + index;
            T* dst = dx + index;
            for (int64_t i = 0; i < view.inner; ++i) {
              const float centered = static_cast<float>(src[i]) - plane_mean;
              const float g_centered = static_cast<float>(g[i]) - plane_dy_mean;
              dst[i] = static_cast<T>(plane_multiplier * (g_centered - centered * plane_coef));
            }
          });
    } else {
      // The population statistics are constants: dx = dy * scale / std.
      ForEachRun(
          ctx, view, kCheapCycles,
          [&](int64_t index) {
            const float* __restrict__ row_multiplier = multipliers;
            const T* g = dy + index;
            T* dst = dx + index;
            for (int64_t c = 0; c < channels; ++c) {
              dst[c] = static_cast<T>(static_cast<float>(g[c]) * row_multiplier[c]);
            }
          },
          [&](int64_t index, int64_t c) {
            const float plane_multiplier = multipliers[c];
            const T* g = dy + index;
            T* dst = dx + index;
            for (int64_t i = 0; i < view.inner; ++i) {
              dst[i] = static_cast<T>(static_cast<float>(g[i]) * plane_multiplier);
            }
          });
    }
  }
};

#define TW_REGISTER_BATCH_NORM(NAME, KERNEL)                                               \
  REGISTER_KERNEL_BUILDER(                                                                 \
      Name(NAME).Device(DEVICE_CPU).TypeConstraint<float>("T").TypeConstraint<float>("U"), \
      KERNEL<float>);

TW_REGISTER_CPU_KERNEL("FusedBatchNorm", float, FusedBatchNormOp<float>);
TW_REGISTER_BATCH_NORM("FusedBatchNormV2", FusedBatchNormOp)
TW_REGISTER_BATCH_NORM("FusedBatchNormV3", FusedBatchNormOp)
TW_REGISTER_CPU_KERNEL("FusedBatchNormGrad", float, FusedBatchNormGradOp<float>);
TW_REGISTER_BATCH_NORM("FusedBatchNormGradV2", FusedBatchNormGradOp)
TW_REGISTER_BATCH_NORM("FusedBatchNormGradV3", FusedBatchNormGradOp)

#undef TW_REGISTER_BATCH_NORM

}  // namespace
}  // namespace tensorweave
