// BiasAdd: adds a 1-D bias along the channel dimension, the last one for
// NHWC (the default) and dimension 1 for NCHW. It is a broadcast add with
// the bias shaped [C] or [C, 1, ..., 1]. BiasAddGrad, its gradient for the
// bias, sums over every other dimension.
#include <Eigen/Core>
#include <type_traits>

#include "runtime/kernels/chunked_sum.h"
#include "runtime/kernels/cwise_binary.h"
#include "runtime/ops/type_lists.h"

namespace tensorweave {
namespace {

// What BiasAdd and BiasAddGrad share: the data_format attr and where the
// channel dimension of a tensor of at least rank 2 sits.
class BiasOpBase : public OpKernel {
 public:
  explicit BiasOpBase(OpKernelConstruction* c) : OpKernel(c) {
    std::string data_format;
    OP_REQUIRES_OK(c, c->GetAttr("data_format", &data_format));
    OP_REQUIRES(c, data_format == "NHWC" || data_format == "NCHW",
                errors::InvalidArgument("Unknown data_format '", data_format, "'"));
    channels_first_ = data_format == "NCHW";
  }

 protected:
  int ChannelDim(const Tensor& value) const { return channels_first_ ? 1 : value.dims() - 1; }

 private:
  bool channels_first_ = false;
};

template <typename T>
class BiasAddOp : public BiasOpBase {
 public:
  using BiasOpBase::BiasOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& value = ctx->input(0);
    const Tensor& bias = ctx->input(1);
    OP_REQUIRES(
        ctx, value.dims() >= 2,
        errors::InvalidArgument("Input tensor must be at least 2D: ", value.shape().DebugString()));
    OP_REQUIRES(ctx, bias.dims() == 1,
                errors::InvalidArgument("Biases must be 1D: ", bias.shape().DebugString()));
    const int channel = ChannelDim(value);
    OP_REQUIRES(ctx, bias.dim_size(0) == value.dim_size(channel),
                errors::InvalidArgument(
                    "Must provide as many biases as the channel dimension of the input tensor: ",
                    bias.shape().DebugString(), " vs. ", value.shape().DebugString()));
    TensorShape bias_shape({bias.dim_size(0)});
    for (int i = channel + 1; i < value.dims(); ++i) OP_REQUIRES_OK(ctx, bias_shape.AddDim(1));
    BinaryBroadcast broadcast;
    OP_REQUIRES_OK(ctx, broadcast.Init(value.shape(), bias_shape));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, value.shape(), &output));
    RunBinary<T, T, EigenBinaryLoops<T, T, AddExpr>>(
        ctx, broadcast, value.data<T>(), bias.data<T>(), output->data<T>(), kCheapCycles);
  }
};

#define TW_REGISTER_BIAS_ADD(T) TW_REGISTER_CPU_KERNEL("BiasAdd", T, BiasAddOp<T>);
TW_FOR_EACH_NUMBER(TW_REGISTER_BIAS_ADD)
#undef TW_REGISTER_BIAS_ADD

// partial[c] += row[c] for c < channels. Floats go through Eigen's packet
// loop: GCC at -O2 leaves a plain loop of unknown length scalar (~9
// instructions per element of an LSTM step's [32, 512] gradient,
// callgrind). Integers wrap, as TensorFlow's do, in the plain loop.
template <typename T>
void AddRowInto(const T* row, int64_t channels, T* partial) {
  if constexpr (std::is_floating_point_v<T>) {
    using Vector = Eigen::Array<T, Eigen::Dynamic, 1>;
    Eigen::Map<Vector>(partial, channels) += Eigen::Map<const Vector>(row, channels);
  } else {
    for (int64_t c = 0; c < channels; ++c) partial[c] = WrappingAdd(partial[c], row[c]);
  }
}

// Viewed as [outer, channels, inner] (inner = 1 for NHWC, outer = 1 for a
// rank-2 NCHW input), the result is the sum over outer and inner of each
// channel.
template <typename T>
class BiasAddGradOp : public BiasOpBase {
 public:
  using BiasOpBase::BiasOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& grad = ctx->input(0);
    OP_REQUIRES(
        ctx, grad.dims() >= 2,
        errors::InvalidArgument("Input tensor must be at least 2D: ", grad.shape().DebugString()));
    const int channel = ChannelDim(grad);
    const int64_t channels = grad.dim_size(channel);
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < channel; ++i) outer *= grad.dim_size(i);
    for (int i = channel + 1; i < grad.dims(); ++i) inner *= grad.dim_size(i);
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({channels}), &output));
    if (channels == 0) return;
    if (grad.NumElements() == 0) {
      std::fill(output->data<T>(), output->data<T>() + channels, T(0));
      return;
    }
    const T* in = grad.data<T>();
    ChunkedSum<T>(
        ctx, outer, channels, static_cast<double>(channels) * inner,
        [&](int64_t begin, int64_t end, T* partial) {
          for (int64_t o = begin; o < end; ++o) {
            const T* block = in + o * channels * inner;
            if (inner == 1) {
              AddRowInto(block, channels, partial);
            } else {
              for (int64_t c = 0; c < channels; ++c) {
                T sum = 0;
                for (int64_t i = 0; i < inner; ++i) sum = WrappingAdd(sum, block[c * inner + i]);
                partial[c] = WrappingAdd(partial[c], sum);
              }
            }
          }
        },
        output->data<T>());
  }
};

#define TW_REGISTER_BIAS_ADD_GRAD(T) TW_REGISTER_CPU_KERNEL("BiasAddGrad", T, BiasAddGradOp<T>);
TW_FOR_EACH_NUMBER(TW_REGISTER_BIAS_ADD_GRAD)
#undef TW_REGISTER_BIAS_ADD_GRAD

}  // namespace
}  // namespace tensorweave
