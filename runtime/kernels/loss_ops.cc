// Losses: SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits
// and L2Loss.
//
// The cross entropies work row by row from the shifted logits x - max (so
// exp never overflows): with s = sum_j exp(x_j - max),
//   log softmax_j = (x_j - max) - log(s)
//   loss          = -sum_j labels_j * log softmax_j
//   backprop_j    = exp(x_j - max) / s - labels_j
// The sparse op's labels are class indices, i.e. one-hot rows.
#include <cmath>
#include <type_traits>
#include <vector>

#include "runtime/kernels/chunked_sum.h"
#include "runtime/kernels/cpu_dispatch.h"
#include "runtime/kernels/kernel_util.h"

namespace tensorweave {
namespace {

// One row: fills backprop with softmax (not yet minus the labels) and
// returns log(s), the log of the shifted exponentials' sum; `max_out` gets
// the row's maximum.
// Float rows run as passes of the CPU's float kernel table (cpu_dispatch.h)
// over the row, which stays in cache: max, shift, exp, sum, scale.
template <typename T>
T SoftmaxRow(const T* logits, int64_t classes, T* backprop, T* max_out) {
  if constexpr (std::is_same_v<T, float>) {
    const FloatKernelTable& table = ActiveFloatKernels();
    const float max_value = table.max(logits, classes);
    table.sub.vector_scalar(logits, max_value, backprop, classes);
    table.exp(backprop, backprop, classes);
    const float sum = table.sum(backprop, classes);
    table.mul.vector_scalar(backprop, 1.0f / sum, backprop, classes);
    *max_out = max_value;
    return std::log(sum);
  }
  T max_value = logits[0];
  for (int64_t j = 1; j < classes; ++j) max_value = logits[j] > max_value ? logits[j] : max_value;
  T sum = 0;
  for (int64_t j = 0; j < classes; ++j) {
    backprop[j] = std::exp(logits[j] - max_value);
    sum += backprop[j];
  }
  const T inverse = T(1) / sum;
  for (int64_t j = 0; j < classes; ++j) backprop[j] *= inverse;
  *max_out = max_value;
  return std::log(sum);
}

template <typename T>
class SoftmaxCrossEntropyOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    OP_REQUIRES(ctx, logits.dims() == 2,
                errors::InvalidArgument("logits must be 2-dimensional, got shape ",
                                        logits.shape().DebugString()));
    OP_REQUIRES(ctx, labels.dims() == 2,
                errors::InvalidArgument("labels must be 2-dimensional, got shape ",
                                        labels.shape().DebugString()));
    // As TensorFlow 1.x, a single row of either broadcasts over the batch.
    const int64_t logit_rows = logits.dim_size(0), label_rows = labels.dim_size(0);
    const int64_t batch = logit_rows == 1 ? label_rows : logit_rows;
    const int64_t classes = logits.dim_size(1);
    OP_REQUIRES(ctx,
                classes == labels.dim_size(1) &&
                    (logit_rows == label_rows || logit_rows == 1 || label_rows == 1),
                errors::InvalidArgument("logits and labels must be same size: logits_size=",
                                        logits.shape().DebugString(),
                                        " labels_size=", labels.shape().DebugString()));
    Tensor* loss = nullptr;
    Tensor* backprop = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch}), &loss));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, TensorShape({batch, classes}), &backprop));
    if (batch == 0) return;
    OP_REQUIRES(ctx, classes > 0,
                errors::InvalidArgument("Must have at least one class, but got logits shape ",
                                        logits.shape().DebugString()));
    const int64_t logit_stride = logit_rows == 1 ? 0 : classes;
    const int64_t label_stride = label_rows == 1 ? 0 : classes;
    const T* x = logits.data<T>();
    const T* p = labels.data<T>();
    T* out_loss = loss->data<T>();
    T* out_backprop = backprop->data<T>();
    ParallelFor(ctx, batch, 3 * classes * sizeof(T), classes * (kTranscendentalCycles + 4),
                [&](int64_t begin, int64_t end) {
                  for (int64_t r = begin; r < end; ++r) {
                    const T* row = x + r * logit_stride;
                    const T* target = p + r * label_stride;
                    T* grad = out_backprop + r * classes;
                    T max_value;
                    const T log_sum = SoftmaxRow(row, classes, grad, &max_value);
                    T total = 0;
                    for (int64_t j = 0; j < classes; ++j) {
                      // A zero label contributes nothing, even where the
                      // log-probability is -inf.
                      if (target[j] != T(0)) total += target[j] * (log_sum - (row[j] - max_value));
                      grad[j] -= target[j];
                    }
                    out_loss[r] = total;
                  }
                });
  }
};

template <typename T, typename Index>
class SparseSoftmaxCrossEntropyOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& logits = ctx->input(0);
    const Tensor& labels = ctx->input(1);
    OP_REQUIRES(ctx, logits.dims() == 2,
                errors::InvalidArgument("logits must be 2-D, but got shape ",
                                        logits.shape().DebugString()));
    OP_REQUIRES(ctx, labels.dims() == 1,
                errors::InvalidArgument("labels must be 1-D, but got shape ",
                                        labels.shape().DebugString()));
    const int64_t batch = logits.dim_size(0), classes = logits.dim_size(1);
    OP_REQUIRES(
        ctx, labels.dim_size(0) == batch,
        errors::InvalidArgument(
            "logits and labels must have the same first dimension, got logits shape ",
            logits.shape().DebugString(), " and labels shape ", labels.shape().DebugString()));
    Tensor* loss = nullptr;
    Tensor* backprop = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({batch}), &loss));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, logits.shape(), &backprop));
    if (batch == 0) return;
    OP_REQUIRES(ctx, classes > 0,
                errors::InvalidArgument("Must have at least one class, but got logits shape ",
                                        logits.shape().DebugString()));
    const Index* label = labels.data<Index>();
    for (int64_t r = 0; r < batch; ++r) {
      if (label[r] < 0 || label[r] >= classes) {
        ctx->SetStatus(errors::InvalidArgument("Received a label value of ", label[r],
                                               " which is outside the valid range of [0, ", classes,
                                               ").  Label values: ", LabelList(label, batch)));
        return;
      }
    }
    const T* x = logits.data<T>();
    T* out_loss = loss->data<T>();
    T* out_backprop = backprop->data<T>();
    ParallelFor(ctx, batch, 2 * classes * sizeof(T), classes * (kTranscendentalCycles + 3),
                [&](int64_t begin, int64_t end) {
                  for (int64_t r = begin; r < end; ++r) {
                    const T* row = x + r * classes;
                    T* grad = out_backprop + r * classes;
                    T max_value;
                    const T log_sum = SoftmaxRow(row, classes, grad, &max_value);
                    out_loss[r] = log_sum - (row[label[r]] - max_value);
                    grad[label[r]] -= T(1);
                  }
                });
  }

 private:
  // The labels for an error message, the first few of a long batch.
  static std::string LabelList(const Index* label, int64_t batch) {
    constexpr int64_t kShown = 32;
    std::vector<Index> shown(label, label + std::min(batch, kShown));
    return StrJoin(shown, " ") + (batch > kShown ? " ..." : "");
  }
};

// sum(t^2) / 2, accumulated in double for float inputs.
template <typename T>
class L2LossOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& t = ctx->input(0);
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &output));
    const T* in = t.data<T>();
    double total = 0;
    if (t.NumElements() > 0) {
      ChunkedSum<double>(
          ctx, t.NumElements(), 1, 2 * kCheapCycles,
          [&](int64_t begin, int64_t end, double* partial) {
            // Two running sums let the compiler pipeline the additions.
            double even = 0, odd = 0;
            int64_t i = begin;
            for (; i + 1 < end; i += 2) {
              even += static_cast<double>(in[i]) * in[i];
              odd += static_cast<double>(in[i + 1]) * in[i + 1];
            }
            if (i < end) even += static_cast<double>(in[i]) * in[i];
            *partial += even + odd;
          },
          &total);
    }
    output->data<T>()[0] = static_cast<T>(total / 2);
  }
};

#define TW_REGISTER_LOSSES(T)                                                          \
  REGISTER_KERNEL_BUILDER(                                                             \
      Name("SoftmaxCrossEntropyWithLogits").Device(DEVICE_CPU).TypeConstraint<T>("T"), \
      SoftmaxCrossEntropyOp<T>);                                                       \
  REGISTER_KERNEL_BUILDER(Name("SparseSoftmaxCrossEntropyWithLogits")                  \
                              .Device(DEVICE_CPU)                                      \
                              .TypeConstraint<T>("T")                                  \
                              .TypeConstraint<int32_t>("Tlabels"),                     \
                          SparseSoftmaxCrossEntropyOp<T, int32_t>);                    \
  REGISTER_KERNEL_BUILDER(Name("SparseSoftmaxCrossEntropyWithLogits")                  \
                              .Device(DEVICE_CPU)                                      \
                              .TypeConstraint<T>("T")                                  \
                              .TypeConstraint<int64_t>("Tlabels"),                     \
                          SparseSoftmaxCrossEntropyOp<T, int64_t>);                    \
  TW_REGISTER_CPU_KERNEL("L2Loss", T, L2LossOp<T>);
TW_FOR_EACH_FLOAT(TW_REGISTER_LOSSES)
#undef TW_REGISTER_LOSSES

}  // namespace
}  // namespace tensorweave
