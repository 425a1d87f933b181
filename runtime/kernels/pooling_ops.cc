// MaxPool, MaxPoolV2, AvgPool and their gradients (MaxPoolGrad,
// MaxPoolGradV2, MaxPoolGradGrad, MaxPoolGradGradV2, AvgPoolGrad), and
// MaxPoolWithArgmax with MaxPoolGradWithArgmax, over NHWC or NCHW tensors
// with windows and strides on the two spatial dimensions
// (conv_geometry.h). NCHW tensors are transposed to NHWC around the loops
// (channels_last.h).
//
// Straight loops: for each output position the window's rows and columns
// are clipped to the input (padding, SAME or EXPLICIT, is never read), and
// the innermost loop runs over the contiguous channels. MaxPool's ties go
// to the first maximum in row-major window order, and the max-pool
// gradients route to that same element. AvgPool divides by the number of
// input elements in the window (padding does not count). The gradients
// parallelize over images, since windows within an image overlap.
#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "runtime/framework/conv_geometry.h"
#include "runtime/kernels/channels_last.h"
#include "runtime/kernels/kernel_util.h"

namespace tensorweave {
namespace {

// In NHWC terms whatever the node's data_format.
struct PoolGeometry {
  int64_t batch, in_rows, in_cols, depth, out_rows, out_cols, pad_rows, pad_cols;
  WindowAttrs attrs;

  int64_t in_image_size() const { return in_rows * in_cols * depth; }
  int64_t out_image_size() const { return out_rows * out_cols * depth; }

  // Calls fn(position, rows, cols) for each output position of one image in
  // row-major order, with the input rows [rows.first, rows.second) and
  // columns of its window clipped to the input.
  template <typename Fn>
  void ForEachWindow(Fn&& fn) const {
    for (int64_t r = 0; r < out_rows; ++r) {
      const Range rows = Clip(r * attrs.stride_rows - pad_rows, attrs.ksize_rows, in_rows);
      for (int64_t c = 0; c < out_cols; ++c) {
        const Range cols = Clip(c * attrs.stride_cols - pad_cols, attrs.ksize_cols, in_cols);
        fn(r * out_cols + c, rows, cols);
      }
    }
  }

  // Calls fn(position, best) for each output position of one image, with
  // best[d] the offset in the image (NHWC) of channel d's first maximum in
  // the window, or -1 for a window with no input element.
  //
  // The window's first element starts as every channel's maximum and only a
  // strictly greater one replaces it, so ties keep the first and a NaN met
  // first stays.
  template <typename T, typename Fn>
  void ForEachArgmax(const T* image, Fn&& fn) const {
    if (in_rows * in_cols <= std::numeric_limits<int32_t>::max()) {
      ForEachArgmaxOfPixelType<int32_t>(image, fn);
    } else {
      ForEachArgmaxOfPixelType<int64_t>(image, fn);
    }
  }

 private:
  using Range = std::pair<int64_t, int64_t>;

  // Channels are taken kArgmaxLanes at a time with the running maxima and
  // their pixel numbers in local arrays: the loop over them is then a
  // compare and masks on same-width lanes, which GCC vectorizes at -O2. A
  // plain loop over all channels stayed scalar with a branch per element,
  // ~20x slower than TensorFlow at the tutorial CNN's shapes.
  static constexpr int kArgmaxLanes = 16;

  template <typename Pixel, typename T, typename Fn>
  void ForEachArgmaxOfPixelType(const T* image, Fn& fn) const {
    std::vector<int64_t> best(depth);
    ForEachWindow([&](int64_t position, const Range& rows, const Range& cols) {
      if (rows.first >= rows.second || cols.first >= cols.second) {
        std::fill(best.begin(), best.end(), int64_t{-1});
      } else {
        int64_t d = 0;
        for (; d + kArgmaxLanes <= depth; d += kArgmaxLanes) {
          WindowArgmax<kArgmaxLanes, Pixel>(image, rows, cols, d, best.data());
        }
        for (; d < depth; ++d) WindowArgmax<1, Pixel>(image, rows, cols, d, best.data());
      }
      fn(position, best);
    });
  }

  // Sets best[first_channel + k] for k < kCount from one non-empty window.
  template <int kCount, typename Pixel, typename T>
  void WindowArgmax(const T* image, const Range& rows, const Range& cols, int64_t first_channel,
                    int64_t* best) const {
    T value[kCount];
    Pixel pixel[kCount];
    const Pixel first = static_cast<Pixel>(rows.first * in_cols + cols.first);
    const T* start = image + first * depth + first_channel;
    for (int k = 0; k < kCount; ++k) {
      value[k] = start[k];
      pixel[k] = first;
    }
    for (int64_t i = rows.first; i < rows.second; ++i) {
      for (int64_t j = cols.first; j < cols.second; ++j) {
        const Pixel p = static_cast<Pixel>(i * in_cols + j);
        const T* src = image + p * depth + first_channel;
        for (int k = 0; k < kCount; ++k) {
          // All ones where src is strictly greater. Spelled as a mask (not
          // a select) so that GCC does not turn it into a branch.
          const Pixel greater = -static_cast<Pixel>(src[k] > value[k]);
          pixel[k] = (p & greater) | (pixel[k] & ~greater);
          value[k] = value[k] < src[k] ? src[k] : value[k];
        }
      }
    }
    for (int k = 0; k < kCount; ++k) {
      best[first_channel + k] = static_cast<int64_t>(pixel[k]) * depth + first_channel + k;
    }
  }

  static Range Clip(int64_t start, int64_t size, int64_t limit) {
    return {std::max<int64_t>(start, 0), std::min(start + size, limit)};
  }
};

// `input` is in the data_format of `attrs`, and so is `output`.
Status ComputePoolGeometry(const TensorShape& input, const WindowAttrs& attrs, PoolGeometry* g,
                           TensorShape* output) {
  if (input.dims() != 4) {
    return errors::InvalidArgument("input must be 4-dimensional (", attrs.nchw ? "NCHW" : "NHWC",
                                   "), got ", input.DebugString());
  }
  TW_RETURN_IF_ERROR(CheckPoolPaddingSize(attrs));
  g->attrs = attrs;
  g->batch = input.dim_size(0);
  g->in_rows = input.dim_size(attrs.rows_dim());
  g->in_cols = input.dim_size(attrs.cols_dim());
  g->depth = input.dim_size(attrs.depth_dim());
  TW_RETURN_IF_ERROR(
      SpatialOutputSize(attrs, true, g->in_rows, attrs.ksize_rows, 1, &g->out_rows, &g->pad_rows));
  TW_RETURN_IF_ERROR(
      SpatialOutputSize(attrs, false, g->in_cols, attrs.ksize_cols, 1, &g->out_cols, &g->pad_cols));
  return ShapeInDataFormat(attrs, g->batch, g->out_rows, g->out_cols, g->depth, output);
}

// Reads an int32 vector input (ksize, strides of the V2 ops).
Status VectorInput(const Tensor& tensor, const char* name, std::vector<int64_t>* values) {
  if (tensor.dims() != 1) {
    return errors::InvalidArgument(name, " must be a vector, got shape ",
                                   tensor.shape().DebugString());
  }
  values->assign(tensor.data<int32_t>(), tensor.data<int32_t>() + tensor.NumElements());
  return Status::OK();
}

class PoolOpBase : public OpKernel {
 public:
  // `window_inputs`: ksize and strides are the last two inputs (the V2
  // ops), not attrs.
  PoolOpBase(OpKernelConstruction* c, bool window_inputs) : OpKernel(c) {
    window_inputs_ = window_inputs;
    if (window_inputs) {
      OP_REQUIRES_OK(c, ParseWindowLayoutAttrs(c->def(), &attrs_));
    } else {
      OP_REQUIRES_OK(c, ParseWindowAttrs(c->def(), true, &attrs_));
    }
  }

 protected:
  // The attrs of this run: with the V2 ops' ksize and strides inputs read.
  Status Attrs(OpKernelContext* ctx, WindowAttrs* attrs) const {
    *attrs = attrs_;
    if (!window_inputs_) return Status::OK();
    std::vector<int64_t> ksize, strides;
    TW_RETURN_IF_ERROR(VectorInput(ctx->input(ctx->num_inputs() - 2), "ksize", &ksize));
    TW_RETURN_IF_ERROR(VectorInput(ctx->input(ctx->num_inputs() - 1), "strides", &strides));
    return SetPoolWindow(ksize, strides, attrs);
  }

  // The geometry for `input`; `pooled` (when given; named `name`) must
  // have the output's shape.
  static Status Geometry(const WindowAttrs& attrs, const TensorShape& input, const Tensor* pooled,
                         PoolGeometry* g, const char* name = "grad") {
    TensorShape output;
    TW_RETURN_IF_ERROR(ComputePoolGeometry(input, attrs, g, &output));
    if (pooled != nullptr && pooled->shape() != output) {
      return errors::InvalidArgument(name, " has shape ", pooled->shape().DebugString(),
                                     " but pooling input ", input.DebugString(),
                                     " gives output shape ", output.DebugString());
    }
    return Status::OK();
  }

  // Calls fn(image) for each image, images spread over the pool.
  template <typename Fn>
  static void ForEachImage(OpKernelContext* ctx, const PoolGeometry& g, Fn&& fn) {
    const double cycles = static_cast<double>(g.out_rows) * g.out_cols * g.depth *
                          g.attrs.ksize_rows * g.attrs.ksize_cols;
    ParallelFor(ctx, g.batch, 0, cycles, [&](int64_t begin, int64_t end) {
      for (int64_t image = begin; image < end; ++image) fn(image);
    });
  }

  WindowAttrs attrs_;
  bool window_inputs_ = false;
};

// Channels taken this many at a time in local arrays, which GCC vectorizes
// at -O2 (a loop over all of them stays scalar).
constexpr int kLanes = 16;

// dst[k] = the maximum of channel first_channel + k over one window, for
// k < kCount; the lowest value for an empty window. A NaN never wins.
template <int kCount, typename T, typename Range>
void WindowMax(const PoolGeometry& g, const T* image, const Range& rows, const Range& cols,
               int64_t first_channel, T* dst) {
  T value[kCount];
  for (int k = 0; k < kCount; ++k) value[k] = std::numeric_limits<T>::lowest();
  for (int64_t i = rows.first; i < rows.second; ++i) {
    for (int64_t j = cols.first; j < cols.second; ++j) {
      const T* src = image + (i * g.in_cols + j) * g.depth + first_channel;
      for (int k = 0; k < kCount; ++k) value[k] = value[k] < src[k] ? src[k] : value[k];
    }
  }
  for (int k = 0; k < kCount; ++k) dst[k] = value[k];
}

template <typename T>
class MaxPoolOp : public PoolOpBase {
 public:
  explicit MaxPoolOp(OpKernelConstruction* c) : PoolOpBase(c, c->def().op() == "MaxPoolV2") {}

  void Compute(OpKernelContext* ctx) override {
    WindowAttrs attrs;
    OP_REQUIRES_OK(ctx, Attrs(ctx, &attrs));
    const Tensor& input = ctx->input(0);
    PoolGeometry g;
    TensorShape output_shape;
    OP_REQUIRES_OK(ctx, ComputePoolGeometry(input.shape(), attrs, &g, &output_shape));
    Tensor in_nhwc, out_nhwc;
    OP_REQUIRES_OK(ctx, AllocateChannelsLastOutput(ctx, 0, output_shape, attrs.nchw, &out_nhwc));
    if (out_nhwc.NumElements() > 0) {
      OP_REQUIRES_OK(ctx, ToChannelsLast(ctx, input, attrs.nchw, &in_nhwc));
      const T* in = in_nhwc.data<T>();
      T* out = out_nhwc.data<T>();
      ForEachImage(ctx, g, [&](int64_t image) {
        const T* image_in = in + image * g.in_image_size();
        T* image_out = out + image * g.out_image_size();
        g.ForEachWindow([&](int64_t position, const auto& rows, const auto& cols) {
          T* dst = image_out + position * g.depth;
          int64_t d = 0;
          for (; d + kLanes <= g.depth; d += kLanes) {
            WindowMax<kLanes>(g, image_in, rows, cols, d, dst + d);
          }
          for (; d < g.depth; ++d) WindowMax<1>(g, image_in, rows, cols, d, dst + d);
        });
      });
    }
    OP_REQUIRES_OK(ctx, FinishChannelsLastOutput(ctx, 0, output_shape, attrs.nchw, out_nhwc));
  }
};

// MaxPoolGrad(V2): routes each window's gradient to its first maximum.
// MaxPoolGradGrad(V2): the gradient of that, linear in its `grad` input
// (shaped like orig_input): each window's output takes grad at the window's
// first maximum.
template <typename T, bool kGradGrad>
class MaxPoolGradOp : public PoolOpBase {
 public:
  explicit MaxPoolGradOp(OpKernelConstruction* c)
      : PoolOpBase(c, c->def().op() == "MaxPoolGradV2" || c->def().op() == "MaxPoolGradGradV2") {}

  void Compute(OpKernelContext* ctx) override {
    WindowAttrs attrs;
    OP_REQUIRES_OK(ctx, Attrs(ctx, &attrs));
    const Tensor& orig_input = ctx->input(0);
    const Tensor& orig_output = ctx->input(1);
    const Tensor& grad = ctx->input(2);
    PoolGeometry g;
    OP_REQUIRES_OK(ctx, Geometry(attrs, orig_input.shape(), &orig_output, &g, "orig_output"));
    const Tensor& shaped_like = kGradGrad ? orig_input : orig_output;
    OP_REQUIRES(ctx, grad.shape() == shaped_like.shape(),
                errors::InvalidArgument(
                    "grad has shape ", grad.shape().DebugString(), " but must have the shape of ",
                    kGradGrad ? "orig_input " : "orig_output ", shaped_like.shape().DebugString()));
    const TensorShape& output_shape = kGradGrad ? orig_output.shape() : orig_input.shape();
    Tensor in_nhwc, grad_nhwc, out_nhwc;
    OP_REQUIRES_OK(ctx, AllocateChannelsLastOutput(ctx, 0, output_shape, attrs.nchw, &out_nhwc));
    if (out_nhwc.NumElements() > 0) {
      OP_REQUIRES_OK(ctx, ToChannelsLast(ctx, orig_input, attrs.nchw, &in_nhwc));
      OP_REQUIRES_OK(ctx, ToChannelsLast(ctx, grad, attrs.nchw, &grad_nhwc));
      const T* in = in_nhwc.data<T>();
      const T* dy = grad_nhwc.data<T>();
      T* out = out_nhwc.data<T>();
      // Each image's output is zeroed by the thread that fills it, not all
      // up front on one thread.
      ForEachImage(ctx, g, [&](int64_t image) {
        const T* image_in = in + image * g.in_image_size();
        if (kGradGrad) {
          const T* image_grad = dy + image * g.in_image_size();
          T* image_out = out + image * g.out_image_size();
          std::fill(image_out, image_out + g.out_image_size(), T(0));
          g.ForEachArgmax(image_in, [&](int64_t position, const std::vector<int64_t>& best) {
            T* dst = image_out + position * g.depth;
            for (int64_t d = 0; d < g.depth; ++d) {
              if (best[d] >= 0) dst[d] = image_grad[best[d]];
            }
          });
        } else {
          const T* image_grad = dy + image * g.out_image_size();
          T* image_out = out + image * g.in_image_size();
          std::fill(image_out, image_out + g.in_image_size(), T(0));
          g.ForEachArgmax(image_in, [&](int64_t position, const std::vector<int64_t>& best) {
            const T* src = image_grad + position * g.depth;
            for (int64_t d = 0; d < g.depth; ++d) {
              if (best[d] >= 0) image_out[best[d]] += src[d];
            }
          });
        }
      });
    }
    OP_REQUIRES_OK(ctx, FinishChannelsLastOutput(ctx, 0, output_shape, attrs.nchw, out_nhwc));
  }
};

template <typename T>
class AvgPoolOp : public PoolOpBase {
 public:
  explicit AvgPoolOp(OpKernelConstruction* c) : PoolOpBase(c, false) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    PoolGeometry g;
    TensorShape output_shape;
    OP_REQUIRES_OK(ctx, ComputePoolGeometry(input.shape(), attrs_, &g, &output_shape));
    Tensor in_nhwc, out_nhwc;
    OP_REQUIRES_OK(ctx, AllocateChannelsLastOutput(ctx, 0, output_shape, attrs_.nchw, &out_nhwc));
    if (out_nhwc.NumElements() > 0) {
      OP_REQUIRES_OK(ctx, ToChannelsLast(ctx, input, attrs_.nchw, &in_nhwc));
      const T* in = in_nhwc.data<T>();
      T* out = out_nhwc.data<T>();
      ForEachImage(ctx, g, [&](int64_t image) {
        const T* image_in = in + image * g.in_image_size();
        T* image_out = out + image * g.out_image_size();
        g.ForEachWindow([&](int64_t position, const auto& rows, const auto& cols) {
          T* dst = image_out + position * g.depth;
          std::fill(dst, dst + g.depth, T(0));
          for (int64_t i = rows.first; i < rows.second; ++i) {
            for (int64_t j = cols.first; j < cols.second; ++j) {
              const T* src = image_in + (i * g.in_cols + j) * g.depth;
              for (int64_t d = 0; d < g.depth; ++d) dst[d] += src[d];
            }
          }
          const int64_t count = (rows.second - rows.first) * (cols.second - cols.first);
          if (count > 0) {
            const T scale = T(1) / static_cast<T>(count);
            for (int64_t d = 0; d < g.depth; ++d) dst[d] *= scale;
          }
        });
      });
    }
    OP_REQUIRES_OK(ctx, FinishChannelsLastOutput(ctx, 0, output_shape, attrs_.nchw, out_nhwc));
  }
};

template <typename T>
class AvgPoolGradOp : public PoolOpBase {
 public:
  explicit AvgPoolGradOp(OpKernelConstruction* c) : PoolOpBase(c, false) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& sizes = ctx->input(0);
    const Tensor& grad = ctx->input(1);
    OP_REQUIRES(ctx, sizes.dims() == 1 && sizes.NumElements() == 4,
                errors::InvalidArgument("orig_input_shape must be a vector of 4 sizes, got shape ",
                                        sizes.shape().DebugString()));
    TensorShape input_shape;
    OP_REQUIRES_OK(ctx, TensorShape::Build(
                            std::vector<int64_t>(sizes.data<int32_t>(), sizes.data<int32_t>() + 4),
                            &input_shape));
    // grad must be the pooling of an input of this shape: checked before
    // the output is allocated.
    PoolGeometry g;
    OP_REQUIRES_OK(ctx, Geometry(attrs_, input_shape, &grad, &g));
    Tensor grad_nhwc, out_nhwc;
    OP_REQUIRES_OK(ctx, AllocateChannelsLastOutput(ctx, 0, input_shape, attrs_.nchw, &out_nhwc));
    if (out_nhwc.NumElements() > 0) {
      OP_REQUIRES_OK(ctx, ToChannelsLast(ctx, grad, attrs_.nchw, &grad_nhwc));
      const T* dy = grad_nhwc.data<T>();
      T* dx = out_nhwc.data<T>();
      std::fill(dx, dx + out_nhwc.NumElements(), T(0));
      ForEachImage(ctx, g, [&](int64_t image) {
        T* image_dx = dx + image * g.in_image_size();
        const T* image_grad = dy + image * g.out_image_size();
        g.ForEachWindow([&](int64_t position, const auto& rows, const auto& cols) {
          const int64_t count = (rows.second - rows.first) * (cols.second - cols.first);
          if (count <= 0) return;
          const T scale = T(1) / static_cast<T>(count);
          const T* src_grad = image_grad + position * g.depth;
          for (int64_t i = rows.first; i < rows.second; ++i) {
            for (int64_t j = cols.first; j < cols.second; ++j) {
              T* dst = image_dx + (i * g.in_cols + j) * g.depth;
              for (int64_t d = 0; d < g.depth; ++d) dst[d] += src_grad[d] * scale;
            }
          }
        });
      });
    }
    OP_REQUIRES_OK(ctx, FinishChannelsLastOutput(ctx, 0, input_shape, attrs_.nchw, out_nhwc));
  }
};

// MaxPoolWithArgmax (NHWC only, as TensorFlow's op): the maxima and the
// flat index of each, ((b * rows + y) * cols + x) * depth + c with the batch
// term only when include_batch_in_index.
template <typename T>
class MaxPoolWithArgmaxOp : public PoolOpBase {
 public:
  explicit MaxPoolWithArgmaxOp(OpKernelConstruction* c) : PoolOpBase(c, false) {
    if (FindNodeAttr(c->def(), "include_batch_in_index") != nullptr) {
      OP_REQUIRES_OK(c, c->GetAttr("include_batch_in_index", &include_batch_));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    PoolGeometry g;
    TensorShape output_shape;
    OP_REQUIRES_OK(ctx, ComputePoolGeometry(input.shape(), attrs_, &g, &output_shape));
    Tensor* output = nullptr;
    Tensor* argmax = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, output_shape, &output));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, output_shape, &argmax));
    if (output->NumElements() == 0) return;
    const bool int64_index = argmax->dtype() == DT_INT64;
    const T* in = input.data<T>();
    T* out = output->data<T>();
    ForEachImage(ctx, g, [&](int64_t image) {
      const T* image_in = in + image * g.in_image_size();
      const int64_t out_base = image * g.out_image_size();
      const int64_t index_base = include_batch_ ? image * g.in_image_size() : 0;
      g.ForEachArgmax(image_in, [&](int64_t position, const std::vector<int64_t>& best) {
        for (int64_t d = 0; d < g.depth; ++d) {
          const int64_t o = out_base + position * g.depth + d;
          // TensorFlow's padding guarantees a non-empty window here.
          out[o] = best[d] >= 0 ? image_in[best[d]] : std::numeric_limits<T>::lowest();
          const int64_t index = best[d] >= 0 ? index_base + best[d] : -1;
          if (int64_index) {
            argmax->data<int64_t>()[o] = index;
          } else {
            argmax->data<int32_t>()[o] = static_cast<int32_t>(index);
          }
        }
      });
    });
  }

 private:
  bool include_batch_ = false;
};

// MaxPoolGradWithArgmax: adds each grad element at its argmax (an index
// into the whole input when include_batch_in_index, else into its image).
template <typename T>
class MaxPoolGradWithArgmaxOp : public PoolOpBase {
 public:
  explicit MaxPoolGradWithArgmaxOp(OpKernelConstruction* c) : PoolOpBase(c, false) {
    if (FindNodeAttr(c->def(), "include_batch_in_index") != nullptr) {
      OP_REQUIRES_OK(c, c->GetAttr("include_batch_in_index", &include_batch_));
    }
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& grad = ctx->input(1);
    const Tensor& argmax = ctx->input(2);
    PoolGeometry g;
    OP_REQUIRES_OK(ctx, Geometry(attrs_, input.shape(), &grad, &g));
    OP_REQUIRES(ctx, argmax.shape() == grad.shape(),
                errors::InvalidArgument("argmax has shape ", argmax.shape().DebugString(),
                                        " but grad has shape ", grad.shape().DebugString()));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.shape(), &output));
    T* dx = output->data<T>();
    std::fill(dx, dx + output->NumElements(), T(0));
    const T* dy = grad.data<T>();
    const int64_t image_out = g.out_image_size(), image_in = g.in_image_size();
    for (int64_t o = 0; o < grad.NumElements(); ++o) {
      const int64_t index =
          argmax.dtype() == DT_INT64 ? argmax.data<int64_t>()[o] : argmax.data<int32_t>()[o];
      const int64_t base = include_batch_ ? 0 : (o / image_out) * image_in;
      const int64_t limit = include_batch_ ? output->NumElements() : image_in;
      OP_REQUIRES(ctx, index >= 0 && index < limit,
                  errors::InvalidArgument("argmax value ", index, " at ", o,
                                          " is outside the input (", limit, " elements)"));
      dx[base + index] += dy[o];
    }
  }

 private:
  bool include_batch_ = false;
};

#define TW_REGISTER_MAX_POOL(T)                                             \
  TW_REGISTER_CPU_KERNEL("MaxPool", T, MaxPoolOp<T>);                       \
  TW_REGISTER_CPU_KERNEL("MaxPoolV2", T, MaxPoolOp<T>);                     \
  TW_REGISTER_CPU_KERNEL("MaxPoolGrad", T, (MaxPoolGradOp<T, false>));      \
  TW_REGISTER_CPU_KERNEL("MaxPoolGradV2", T, (MaxPoolGradOp<T, false>));    \
  TW_REGISTER_CPU_KERNEL("MaxPoolGradGrad", T, (MaxPoolGradOp<T, true>));   \
  TW_REGISTER_CPU_KERNEL("MaxPoolGradGradV2", T, (MaxPoolGradOp<T, true>)); \
  TW_REGISTER_CPU_KERNEL("MaxPoolWithArgmax", T, MaxPoolWithArgmaxOp<T>);   \
  TW_REGISTER_CPU_KERNEL("MaxPoolGradWithArgmax", T, MaxPoolGradWithArgmaxOp<T>);
#define TW_REGISTER_AVG_POOL(T)                       \
  TW_REGISTER_CPU_KERNEL("AvgPool", T, AvgPoolOp<T>); \
  TW_REGISTER_CPU_KERNEL("AvgPoolGrad", T, AvgPoolGradOp<T>);
TW_FOR_EACH_REAL_NUMBER(TW_REGISTER_MAX_POOL)
TW_FOR_EACH_FLOAT(TW_REGISTER_AVG_POOL)
#undef TW_REGISTER_AVG_POOL
#undef TW_REGISTER_MAX_POOL

}  // namespace
}  // namespace tensorweave
