// Kernels of _FusedConv2D, _FusedDepthwiseConv2dNative and _FusedMatMul
// (ops/nn_fused_ops.cc): the convolution or product, then the fused_ops'
// epilogue, without the intermediate tensors of the unfused graph.
//
// The epilogue is per output channel: out = act(out * scale + shift), with
//   BiasAdd          scale 1, shift = bias
//   FusedBatchNorm   scale = gamma / sqrt(variance + epsilon),
//                    shift = beta - mean * scale (inference's batch norm)
// and act one of Relu, Relu6, Elu, LeakyRelu or none; _FusedConv2D's
// [BiasAdd, Add(, act)] adds a tensor of the output's shape (its second
// arg, a residual block's shortcut) before the activation. A float convolution
// that oneDNN computes faster (conv_onednn.h; every shape when the remapper
// marked the filter a Const, _filter_is_const, whose reordered form the
// kernel then keeps) and a float depthwise convolution with multiplier 1
// (depthwise_onednn.h) run the whole epilogue in the primitive as bias and
// eltwise post-ops (a batch norm's scale is multiplied into a copy of the
// filter); otherwise the convolution or product is followed by one pass
// over its output (per output row, for the depthwise loops).
// Float rows go through Eigen array expressions, whose comparisons let
// NaN through as TensorFlow's activations do.
#include <Eigen/Core>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "runtime/framework/conv_geometry.h"
#include "runtime/framework/str_util.h"
#include "runtime/kernels/channels_last.h"
#include "runtime/kernels/conv_onednn.h"
#include "runtime/kernels/conv_ops.h"
#include "runtime/kernels/depthwise_conv.h"
#include "runtime/kernels/depthwise_onednn.h"
#include "runtime/kernels/gemm.h"

namespace tensorweave {
namespace {

using onednn_conv::Activation;

// The attr the remapper (common_runtime/conv_fusion.h) sets on a fused
// convolution whose filter input is a Const.
constexpr char kFilterIsConstAttr[] = "_filter_is_const";

// What fused_ops asks after the convolution or product.
struct Epilogue {
  bool batch_norm = false;  // else BiasAdd
  bool add = false;         // BiasAdd then Add: the second arg is added
  Activation activation = Activation::kNone;
  float alpha = 0;    // LeakyRelu's slope
  float epsilon = 0;  // the batch norm's
};

Status ParseActivation(const std::string& name, Activation* activation) {
  if (name == "Relu") {
    *activation = Activation::kRelu;
  } else if (name == "Relu6") {
    *activation = Activation::kRelu6;
  } else if (name == "Elu") {
    *activation = Activation::kElu;
  } else if (name == "LeakyRelu") {
    *activation = Activation::kLeakyRelu;
  } else {
    return errors::Unimplemented("unknown activation ", name);
  }
  return Status::OK();
}

// Reads fused_ops, epsilon and leakyrelu_alpha; `allow_batch_norm` and
// `allow_add` for _FusedConv2D. The combinations are TensorFlow's CPU ones:
// BiasAdd or FusedBatchNorm, or BiasAdd then Add (the remapper's
// contraction + bias + add), then at most one activation; anything else is
// UNIMPLEMENTED, as in TensorFlow ("Fusion is not implemented").
Status ParseEpilogue(OpKernelConstruction* c, bool allow_batch_norm, bool allow_add, int args,
                     Epilogue* out) {
  std::vector<std::string> fused_ops;
  TW_RETURN_IF_ERROR(c->GetAttr("fused_ops", &fused_ops));
  TW_RETURN_IF_ERROR(c->GetAttr("epsilon", &out->epsilon));
  TW_RETURN_IF_ERROR(c->GetAttr("leakyrelu_alpha", &out->alpha));
  const auto unimplemented = [&]() {
    return errors::Unimplemented("Fusion is not implemented: [", StrJoin(fused_ops, ","),
                                 "] (node ", c->def().name(), ")");
  };
  if (fused_ops.empty() || fused_ops.size() > 3) return unimplemented();
  if (fused_ops[0] == "FusedBatchNorm" && allow_batch_norm) {
    out->batch_norm = true;
  } else if (fused_ops[0] != "BiasAdd") {
    return unimplemented();
  }
  size_t next = 1;
  if (next < fused_ops.size() && fused_ops[next] == "Add" && allow_add && !out->batch_norm) {
    out->add = true;
    ++next;
  }
  if (next < fused_ops.size() && !ParseActivation(fused_ops[next++], &out->activation).ok()) {
    return unimplemented();
  }
  if (next != fused_ops.size()) return unimplemented();
  const int wanted = out->batch_norm ? 4 : out->add ? 2 : 1;
  if (args != wanted) {
    return errors::InvalidArgument(fused_ops[0], " takes ", wanted, " argument",
                                   wanted == 1 ? "" : "s", ", got ", args, " (node ",
                                   c->def().name(), ")");
  }
  return Status::OK();
}

// The per-channel scale (empty: 1) and shift of the epilogue from the args
// inputs (first_arg ...), each a vector of `channels` (Add's addend, the
// arg after the bias, is not one of them).
template <typename T>
Status ChannelAffine(OpKernelContext* ctx, const Epilogue& e, int first_arg, int64_t channels,
                     std::vector<T>* scale, std::vector<T>* shift) {
  const int count = e.batch_norm ? 4 : 1;
  static const char* const kBatchNormArgs[] = {"scale", "offset", "mean", "variance"};
  for (int i = 0; i < count; ++i) {
    const Tensor& arg = ctx->input(first_arg + i);
    if (arg.dims() != 1 || arg.dim_size(0) != channels) {
      return errors::InvalidArgument(e.batch_norm ? kBatchNormArgs[i] : "bias",
                                     " must be a vector of the ", channels,
                                     " output channels, got shape ", arg.shape().DebugString());
    }
  }
  const T* first = ctx->input(first_arg).data<T>();
  if (!e.batch_norm) {
    shift->assign(first, first + channels);
    return Status::OK();
  }
  const T* offset = ctx->input(first_arg + 1).data<T>();
  const T* mean = ctx->input(first_arg + 2).data<T>();
  const T* variance = ctx->input(first_arg + 3).data<T>();
  scale->resize(channels);
  shift->resize(channels);
  for (int64_t c = 0; c < channels; ++c) {
    (*scale)[c] = first[c] / std::sqrt(variance[c] + static_cast<T>(e.epsilon));
    (*shift)[c] = offset[c] - mean[c] * (*scale)[c];
  }
  return Status::OK();
}

// act(v) elementwise, for an Eigen array expression v. Every comparison
// is false for NaN, which therefore passes through, as TensorFlow's
// activations pass it (Relu(NaN) is NaN there).
template <Activation kActivation, typename Values>
auto Activated(const Values& v, typename Values::Scalar alpha) {
  using T = typename Values::Scalar;
  if constexpr (kActivation == Activation::kNone) {
    return v;
  } else if constexpr (kActivation == Activation::kRelu) {
    return (v < T(0)).select(T(0), v);
  } else if constexpr (kActivation == Activation::kRelu6) {
    return (v < T(0)).select(T(0), (v > T(6)).select(T(6), v));
  } else if constexpr (kActivation == Activation::kElu) {
    return (v < T(0)).select(v.exp() - T(1), v);
  } else {
    return (v < T(0)).select(v * alpha, v);
  }
}

// out[r, c] = act(out[r, c] * scale[c] + shift[c] (+ addend[r, c])) over
// `rows` rows of `channels` on the calling thread (addend null: none), with
// the activation fixed at compile time so that each loop is straight vector
// code.
template <typename T, Activation kActivation>
void EpilogueRowsWith(const std::vector<T>& scale, const std::vector<T>& shift, T alpha,
                      int64_t rows, int64_t channels, const T* addend, T* out) {
  // Eigen array expressions make each row one packet loop; a plain loop
  // calling the activation per element stayed scalar (~18 instructions per
  // element of an LSTM step's MatMul + BiasAdd, callgrind).
  using Row = Eigen::Array<T, 1, Eigen::Dynamic>;
  const Eigen::Map<const Row> shift_row(shift.data(), channels);
  for (int64_t r = 0; r < rows; ++r) {
    Eigen::Map<Row> row(out + r * channels, channels);
    if (addend != nullptr) {  // BiasAdd + Add: no scale
      const Eigen::Map<const Row> addend_row(addend + r * channels, channels);
      row = Activated<kActivation>(row + shift_row + addend_row, alpha);
    } else if (scale.empty()) {
      row = Activated<kActivation>(row + shift_row, alpha);
    } else {
      const Eigen::Map<const Row> scale_row(scale.data(), channels);
      row = Activated<kActivation>(row * scale_row + shift_row, alpha);
    }
  }
}

template <typename T>
void EpilogueRows(const Epilogue& e, const std::vector<T>& scale, const std::vector<T>& shift,
                  int64_t rows, int64_t channels, const T* addend, T* out) {
  const T alpha = static_cast<T>(e.alpha);
  switch (e.activation) {
    case Activation::kNone:
      return EpilogueRowsWith<T, Activation::kNone>(scale, shift, alpha, rows, channels, addend,
                                                    out);
    case Activation::kRelu:
      return EpilogueRowsWith<T, Activation::kRelu>(scale, shift, alpha, rows, channels, addend,
                                                    out);
    case Activation::kRelu6:
      return EpilogueRowsWith<T, Activation::kRelu6>(scale, shift, alpha, rows, channels, addend,
                                                     out);
    case Activation::kElu:
      return EpilogueRowsWith<T, Activation::kElu>(scale, shift, alpha, rows, channels, addend,
                                                   out);
    case Activation::kLeakyRelu:
      return EpilogueRowsWith<T, Activation::kLeakyRelu>(scale, shift, alpha, rows, channels,
                                                         addend, out);
  }
}

// The same with the rows spread over the pool.
template <typename T>
void ApplyEpilogue(OpKernelContext* ctx, const Epilogue& e, const std::vector<T>& scale,
                   const std::vector<T>& shift, int64_t rows, int64_t channels, const T* addend,
                   T* out) {
  const double cycles = channels * (e.activation == Activation::kElu ? 20.0 : 2.0);
  ParallelFor(ctx, rows, channels * sizeof(T), cycles, [&](int64_t begin, int64_t end) {
    EpilogueRows(e, scale, shift, end - begin, channels,
                 addend != nullptr ? addend + begin * channels : nullptr, out + begin * channels);
  });
}

template <typename T>
class FusedConv2DOp : public OpKernel {
 public:
  explicit FusedConv2DOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ParseWindowAttrs(c->def(), false, &attrs_));
    std::string filter_format = "HWIO";
    if (FindNodeAttr(c->def(), "filter_format") != nullptr) {
      OP_REQUIRES_OK(c, c->GetAttr("filter_format", &filter_format));
    }
    OP_REQUIRES(
        c, filter_format == "HWIO",
        errors::Unimplemented("_FusedConv2D on the CPU takes an HWIO filter, not ", filter_format));
    int64_t num_args = 0;
    OP_REQUIRES_OK(c, c->GetAttr("num_args", &num_args));
    const int args = c->num_inputs() - 2 - HostArgs(c);
    OP_REQUIRES(c, num_args == args,
                errors::InvalidArgument("num_args is ", num_args, " but the node has ", args,
                                        " args inputs"));
    OP_REQUIRES_OK(c, ParseEpilogue(c, true, true, args, &epilogue_));
    // A constant filter (and no batch norm scale, which comes from inputs
    // that may change) is reordered for oneDNN once, not on every call.
    bool filter_is_const = false;
    if (FindNodeAttr(c->def(), kFilterIsConstAttr) != nullptr) {
      OP_REQUIRES_OK(c, c->GetAttr(kFilterIsConstAttr, &filter_is_const));
    }
    if (filter_is_const && !epilogue_.batch_norm) {
      filter_cache_ = std::make_unique<ReorderedFilterCache>();
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    ConvGeometry g;
    TensorShape output_shape;
    OP_REQUIRES_OK(ctx,
                   ComputeConvGeometry(input.shape(), filter.shape(), attrs_, &g, &output_shape));
    std::vector<T> scale, shift;
    OP_REQUIRES_OK(ctx, ChannelAffine<T>(ctx, epilogue_, 2, g.out_depth, &scale, &shift));
    // Add's addend: the output's shape, added as it is (no broadcasting).
    Tensor addend_nhwc;
    if (epilogue_.add) {
      const Tensor& addend = ctx->input(3);
      OP_REQUIRES(
          ctx, addend.shape() == output_shape,
          errors::InvalidArgument("_FusedConv2D's Add operand must have the output's shape ",
                                  output_shape.DebugString(), ", got ",
                                  addend.shape().DebugString(), " (node ", name(), ")"));
      OP_REQUIRES_OK(ctx, ToChannelsLast(ctx, addend, attrs_.nchw, &addend_nhwc));
    }
    const T* added = epilogue_.add ? addend_nhwc.data<T>() : nullptr;
    Tensor input_nhwc, output_nhwc;
    OP_REQUIRES_OK(ctx,
                   AllocateChannelsLastOutput(ctx, 0, output_shape, attrs_.nchw, &output_nhwc));
    if (output_nhwc.NumElements() > 0) {
      OP_REQUIRES_OK(ctx, ToChannelsLast(ctx, input, attrs_.nchw, &input_nhwc));
      const T* in = input_nhwc.data<T>();
      T* out = output_nhwc.data<T>();
      if (!ConvolveWithOneDnnEpilogue(ctx, g, in, filter, scale, shift, added, out)) {
        Conv2DNhwc<T>(ctx, g, in, filter.data<T>(), out);
        ApplyEpilogue<T>(ctx, epilogue_, scale, shift, output_nhwc.NumElements() / g.out_depth,
                         g.out_depth, added, out);
      }
    }
    OP_REQUIRES_OK(ctx, FinishChannelsLastOutput(ctx, 0, output_shape, attrs_.nchw, output_nhwc));
  }

 private:
  static int HostArgs(OpKernelConstruction* c) {
    int64_t host_args = 0;
    if (FindNodeAttr(c->def(), "num_host_args") != nullptr) {
      if (!c->GetAttr("num_host_args", &host_args).ok()) host_args = 0;
    }
    return static_cast<int>(host_args);
  }

  // The whole fused op in oneDNN's primitive, for float geometries it
  // computes faster; false when not taken (nothing useful written).
  bool ConvolveWithOneDnnEpilogue(OpKernelContext* ctx, const ConvGeometry& g, const T* in,
                                  const Tensor& filter, const std::vector<T>& scale,
                                  const std::vector<T>& shift, const T* addend, T* out) const {
    if constexpr (std::is_same<T, float>::value) {
      if (g.groups != 1 || !OneDnnConv2DChosen(g, filter_cache_ != nullptr)) return false;
      const float* weights = filter.data<float>();
      std::vector<float> scaled;
      if (!scale.empty()) {  // the batch norm's scale, per output channel (HWIO's last dim)
        scaled.assign(weights, weights + filter.NumElements());
        for (size_t i = 0; i < scaled.size(); ++i) scaled[i] *= scale[i % g.out_depth];
        weights = scaled.data();
      }
      ConvEpilogue epilogue;
      epilogue.bias = shift.data();
      epilogue.addend = addend;
      epilogue.activation = epilogue_.activation;
      epilogue.alpha = epilogue_.alpha;
      return OneDnnConv2DForward(ctx, g, in, weights, out, &epilogue, filter_cache_.get());
    } else {
      return false;
    }
  }

  WindowAttrs attrs_;
  Epilogue epilogue_;
  std::unique_ptr<ReorderedFilterCache> filter_cache_;  // null: the filter may change
};

// _FusedDepthwiseConv2dNative: float through oneDNN's depthwise primitive
// with the epilogue as its bias and post-op (depthwise_onednn.h); otherwise
// the depthwise loops, each output row followed by the epilogue while the
// row is still in cache (one pass over memory instead of the unfused
// graph's three).
template <typename T>
class FusedDepthwiseConv2dNativeOp : public DepthwiseOpBase {
 public:
  explicit FusedDepthwiseConv2dNativeOp(OpKernelConstruction* c) : DepthwiseOpBase(c) {
    int64_t num_args = 0;
    OP_REQUIRES_OK(c, c->GetAttr("num_args", &num_args));
    const int args = c->num_inputs() - 2;
    OP_REQUIRES(c, num_args == args,
                errors::InvalidArgument("num_args is ", num_args, " but the node has ", args,
                                        " args inputs"));
    OP_REQUIRES_OK(c, ParseEpilogue(c, true, false, args, &epilogue_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& filter = ctx->input(1);
    DepthwiseGeometry g;
    TensorShape output_shape;
    OP_REQUIRES_OK(ctx, ComputeDepthwiseGeometry(ctx->input(0).shape(), filter.shape(), attrs_, &g,
                                                 &output_shape));
    std::vector<T> scale, shift;
    OP_REQUIRES_OK(ctx, ChannelAffine<T>(ctx, epilogue_, 2, g.out_depth, &scale, &shift));
    Tensor input, output;
    OP_REQUIRES_OK(ctx, ToNhwc(ctx, ctx->input(0), &input));
    OP_REQUIRES_OK(ctx, AllocateNhwcOutput(ctx, output_shape, &output));
    if (output.NumElements() > 0 &&
        !ConvolveWithOneDnn(ctx, g, input.data<T>(), filter, scale, shift, output.data<T>())) {
      const T* in = input.data<T>();
      const T* taps = filter.data<T>();
      T* out = output.data<T>();
      const int64_t row_size = g.out_cols * g.out_depth;
      ForEachRowUntilInterrupted(
          ctx, g.batch * g.out_rows, static_cast<double>(row_size) * sizeof(T),
          DepthwiseRowCycles(g) + 2.0 * row_size, [&](int64_t row) {
            DepthwiseForwardRows(g, in, taps, out, row, row + 1);
            EpilogueRows(epilogue_, scale, shift, g.out_cols, g.out_depth,
                         static_cast<const T*>(nullptr), out + row * row_size);
          });
      if (!ctx->status().ok()) return;
    }
    OP_REQUIRES_OK(ctx, FinishNhwcOutput(ctx, output));
  }

 private:
  // The whole fused op in oneDNN's depthwise primitive (float); false when
  // not taken (nothing useful written).
  bool ConvolveWithOneDnn(OpKernelContext* ctx, const DepthwiseGeometry& g, const T* in,
                          const Tensor& filter, const std::vector<T>& scale,
                          const std::vector<T>& shift, T* out) const {
    if constexpr (std::is_same<T, float>::value) {
      const float* weights = filter.data<float>();
      std::vector<float> scaled;
      if (!scale.empty()) {  // the batch norm's scale, per output channel (the last dims)
        scaled.assign(weights, weights + filter.NumElements());
        for (size_t i = 0; i < scaled.size(); ++i) scaled[i] *= scale[i % g.out_depth];
        weights = scaled.data();
      }
      ConvEpilogue epilogue;
      epilogue.bias = shift.data();
      epilogue.activation = epilogue_.activation;
      epilogue.alpha = epilogue_.alpha;
      return OneDnnDepthwiseForward(ctx, g, in, weights, out, &epilogue);
    } else {
      return false;
    }
  }

  Epilogue epilogue_;
};

// _FusedMatMul: a [m, k] x [k, n] product (either transposed), then the
// bias and activation over its rows.
template <typename T>
class FusedMatMulOp : public OpKernel {
 public:
  explicit FusedMatMulOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("transpose_a", &transpose_a_));
    OP_REQUIRES_OK(c, c->GetAttr("transpose_b", &transpose_b_));
    OP_REQUIRES_OK(c, ParseEpilogue(c, false, false, c->num_inputs() - 2, &epilogue_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    OP_REQUIRES(ctx, a.dims() == 2 && b.dims() == 2,
                errors::InvalidArgument("In[0] and In[1] must be matrices, got shapes ",
                                        a.shape().DebugString(), " and ", b.shape().DebugString()));
    const int64_t m = a.dim_size(transpose_a_ ? 1 : 0), k = a.dim_size(transpose_a_ ? 0 : 1);
    const int64_t k_b = b.dim_size(transpose_b_ ? 1 : 0), n = b.dim_size(transpose_b_ ? 0 : 1);
    OP_REQUIRES(
        ctx, k == k_b,
        errors::InvalidArgument("Matrix size-incompatible: In[0]: ", a.shape().DebugString(),
                                ", In[1]: ", b.shape().DebugString()));
    std::vector<T> scale, shift;
    OP_REQUIRES_OK(ctx, ChannelAffine<T>(ctx, epilogue_, 2, n, &scale, &shift));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape({m, n}), &output));
    if (output->NumElements() == 0) return;
    GemmOnPool<T>(IntraOpPool(ctx), GemmArgs{a.data<T>(), b.data<T>(), output->data<T>(), m, k, n,
                                             transpose_a_, transpose_b_});
    ApplyEpilogue<T>(ctx, epilogue_, scale, shift, m, n, static_cast<const T*>(nullptr),
                     output->data<T>());
  }

 private:
  bool transpose_a_ = false, transpose_b_ = false;
  Epilogue epilogue_;
};

#define TW_REGISTER_FUSED_CONV(T) TW_REGISTER_CPU_KERNEL("_FusedConv2D", T, FusedConv2DOp<T>);
TW_FOR_EACH_FLOAT(TW_REGISTER_FUSED_CONV)
#undef TW_REGISTER_FUSED_CONV
TW_REGISTER_CPU_KERNEL("_FusedMatMul", float, FusedMatMulOp<float>);
#define TW_REGISTER_FUSED_DEPTHWISE(T) \
  TW_REGISTER_CPU_KERNEL("_FusedDepthwiseConv2dNative", T, FusedDepthwiseConv2dNativeOp<T>);
TW_FOR_EACH_FLOAT(TW_REGISTER_FUSED_DEPTHWISE)
#undef TW_REGISTER_FUSED_DEPTHWISE

}  // namespace
}  // namespace tensorweave
