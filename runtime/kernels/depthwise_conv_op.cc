// DepthwiseConv2dNative on CPU, and the helpers of depthwise_conv.h.
//
// Output row (image, out_row) is computed as a whole by one task: for each
// filter row that lands inside the input, each output pixel adds, per
// filter column inside the input, the input pixel's channels times the
// tap's out_depth filter values (a contiguous multiply-add the compiler
// vectorizes). Rows are spread over the intra-op pool by ParallelFor.
#include <algorithm>
#include <vector>

#include "runtime/kernels/depthwise_conv.h"
#include "runtime/kernels/transpose_functor.h"

namespace tensorweave {

TensorShape DepthwiseOpBase::NhwcShape(const TensorShape& shape) const {
  if (!attrs_.nchw) return shape;
  // A permutation of a valid shape is valid: Build cannot fail here.
  TensorShape nhwc;
  const Status built = TensorShape::Build(
      {shape.dim_size(0), shape.dim_size(2), shape.dim_size(3), shape.dim_size(1)}, &nhwc);
  (void)built;
  return nhwc;
}

Status DepthwiseOpBase::ToNhwc(const OpKernelContext* ctx, const Tensor& tensor,
                               Tensor* nhwc) const {
  if (!attrs_.nchw) {
    *nhwc = tensor;
    return Status::OK();
  }
  if (tensor.dims() != 4) {
    return errors::InvalidArgument("NCHW tensors must be 4-dimensional, got ",
                                   tensor.shape().DebugString());
  }
  TW_RETURN_IF_ERROR(Tensor::Allocate(tensor.dtype(), NhwcShape(tensor.shape()), nhwc));
  TransposeTensor(ctx, tensor, {0, 2, 3, 1}, nhwc);
  return Status::OK();
}

Status DepthwiseOpBase::AllocateNhwcOutput(OpKernelContext* ctx, const TensorShape& shape,
                                           Tensor* nhwc) const {
  if (!attrs_.nchw) {
    Tensor* output = nullptr;
    TW_RETURN_IF_ERROR(ctx->allocate_output(0, shape, &output));
    *nhwc = *output;
    return Status::OK();
  }
  return Tensor::Allocate(ctx->expected_output_dtype(0), NhwcShape(shape), nhwc);
}

Status DepthwiseOpBase::FinishNhwcOutput(OpKernelContext* ctx, const Tensor& nhwc) const {
  if (!attrs_.nchw) return Status::OK();
  TensorShape nchw;
  TW_RETURN_IF_ERROR(TensorShape::Build(
      {nhwc.dim_size(0), nhwc.dim_size(3), nhwc.dim_size(1), nhwc.dim_size(2)}, &nchw));
  Tensor* output = nullptr;
  TW_RETURN_IF_ERROR(ctx->allocate_output(0, nchw, &output));
  TransposeTensor(ctx, nhwc, {0, 3, 1, 2}, output);
  return Status::OK();
}

Status DepthwiseShapeFromSizes(const Tensor& sizes, const char* name, TensorShape* shape) {
  if (sizes.dims() != 1 || sizes.NumElements() != 4) {
    return errors::InvalidArgument(name, " must be a vector of 4 sizes, got shape ",
                                   sizes.shape().DebugString());
  }
  std::vector<int64_t> dims(sizes.data<int32_t>(), sizes.data<int32_t>() + 4);
  return TensorShape::Build(dims, shape);
}

double DepthwiseRowCycles(const DepthwiseGeometry& g) {
  return 2.0 * static_cast<double>(g.out_cols) * g.filter_rows * g.filter_cols * g.out_depth;
}

namespace {

// Output rows [row_begin, row_end) of the batch's out_rows x batch rows,
// any multiplier: each tap adds its input channels, broadcast to their
// outputs, into the pixel.
template <typename T>
TW_DEPTHWISE_INLINE void ForwardRowsAnyMultiplier(const DepthwiseGeometry& g, const T* input,
                                                  const T* filter, T* output, int64_t row_begin,
                                                  int64_t row_end) {
  const int64_t depth = g.out_depth;
  const int64_t in_depth = g.in_depth;
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t image = r / g.out_rows;
    const int64_t out_row = r % g.out_rows;
    T* out = output + r * g.out_cols * depth;
    std::fill(out, out + g.out_cols * depth, T(0));
    for (int64_t fr = 0; fr < g.filter_rows; ++fr) {
      const int64_t in_row =
          out_row * g.attrs.stride_rows - g.pad_rows + fr * g.attrs.dilation_rows;
      if (in_row < 0 || in_row >= g.in_rows) continue;
      const T* in = input + (image * g.in_rows + in_row) * g.in_cols * in_depth;
      const T* taps = filter + fr * g.filter_cols * depth;
      for (int64_t out_col = 0; out_col < g.out_cols; ++out_col) {
        const int64_t col_start = out_col * g.attrs.stride_cols - g.pad_cols;
        T* pixel = out + out_col * depth;
        for (int64_t fc = 0; fc < g.filter_cols; ++fc) {
          const int64_t in_col = col_start + fc * g.attrs.dilation_cols;
          if (in_col < 0 || in_col >= g.in_cols) continue;
          MultiplyAccumulateBroadcast(in + in_col * in_depth, taps + fc * depth, pixel, in_depth,
                                      g.multiplier);
        }
      }
    }
  }
}

// The same with multiplier 1 (every MobileNet): per output pixel, the taps
// inside the input are listed, then each block of channels is summed over
// them in registers and stored once.
template <typename T>
TW_DEPTHWISE_INLINE void ForwardRows(const DepthwiseGeometry& g, const T* input, const T* filter,
                                     T* output, int64_t row_begin, int64_t row_end) {
  if (g.multiplier != 1) {
    ForwardRowsAnyMultiplier(g, input, filter, output, row_begin, row_end);
    return;
  }
  const int64_t depth = g.out_depth;
  // A pixel's taps inside the input: distinct rows and columns of it.
  const size_t max_taps =
      static_cast<size_t>(std::min(g.filter_rows, g.in_rows) * std::min(g.filter_cols, g.in_cols));
  std::vector<const T*> inputs(max_taps), taps(max_taps);
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t image = r / g.out_rows;
    const int64_t out_row = r % g.out_rows;
    T* out = output + r * g.out_cols * depth;
    for (int64_t out_col = 0; out_col < g.out_cols; ++out_col) {
      const int64_t col_start = out_col * g.attrs.stride_cols - g.pad_cols;
      int64_t count = 0;
      for (int64_t fr = 0; fr < g.filter_rows; ++fr) {
        const int64_t in_row =
            out_row * g.attrs.stride_rows - g.pad_rows + fr * g.attrs.dilation_rows;
        if (in_row < 0 || in_row >= g.in_rows) continue;
        const T* in = input + (image * g.in_rows + in_row) * g.in_cols * depth;
        for (int64_t fc = 0; fc < g.filter_cols; ++fc) {
          const int64_t in_col = col_start + fc * g.attrs.dilation_cols;
          if (in_col < 0 || in_col >= g.in_cols) continue;
          inputs[count] = in + in_col * depth;
          taps[count] = filter + (fr * g.filter_cols + fc) * depth;
          ++count;
        }
      }
      DotTaps(inputs.data(), taps.data(), count, depth, out + out_col * depth);
    }
  }
}

TW_DEPTHWISE_DISPATCH(RunForwardRows, ForwardRows, float)
TW_DEPTHWISE_DISPATCH(RunForwardRows, ForwardRows, double)

}  // namespace

void DepthwiseForwardRows(const DepthwiseGeometry& g, const float* input, const float* filter,
                          float* output, int64_t row_begin, int64_t row_end) {
  RunForwardRows(g, input, filter, output, row_begin, row_end);
}

void DepthwiseForwardRows(const DepthwiseGeometry& g, const double* input, const double* filter,
                          double* output, int64_t row_begin, int64_t row_end) {
  RunForwardRows(g, input, filter, output, row_begin, row_end);
}

namespace {

template <typename T>
class DepthwiseConv2dNativeOp : public DepthwiseOpBase {
 public:
  using DepthwiseOpBase::DepthwiseOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& filter = ctx->input(1);
    DepthwiseGeometry g;
    TensorShape output_shape;
    OP_REQUIRES_OK(ctx, ComputeDepthwiseGeometry(ctx->input(0).shape(), filter.shape(), attrs_, &g,
                                                 &output_shape));
    Tensor input, output;
    OP_REQUIRES_OK(ctx, ToNhwc(ctx, ctx->input(0), &input));
    OP_REQUIRES_OK(ctx, AllocateNhwcOutput(ctx, output_shape, &output));
    if (output.NumElements() > 0) {
      const T* in = input.data<T>();
      const T* taps = filter.data<T>();
      T* out = output.data<T>();
      ForEachRowUntilInterrupted(
          ctx, g.batch * g.out_rows, static_cast<double>(g.out_cols * g.out_depth) * sizeof(T),
          DepthwiseRowCycles(g),
          [&](int64_t row) { DepthwiseForwardRows(g, in, taps, out, row, row + 1); });
      if (!ctx->status().ok()) return;
    }
    OP_REQUIRES_OK(ctx, FinishNhwcOutput(ctx, output));
  }
};

#define TW_REGISTER_DEPTHWISE(T) \
  TW_REGISTER_CPU_KERNEL("DepthwiseConv2dNative", T, DepthwiseConv2dNativeOp<T>);
TW_FOR_EACH_FLOAT(TW_REGISTER_DEPTHWISE)
#undef TW_REGISTER_DEPTHWISE

}  // namespace
}  // namespace tensorweave
