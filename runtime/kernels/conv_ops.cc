// Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter on NHWC or NCHW
// inputs and [rows, cols, in_depth, out_depth] filters, as matrix products
// (gemm.h) over im2col patch matrices. The products run in NHWC: NCHW
// tensors are transposed in and out around them. EXPLICIT padding is the
// same walk as SAME's, with the attr's padding before each dimension.
//
// Row r of the patch matrix is output position r (image, out_row, out_col)
// in NHWC order; its columns are the window's input values in
// (filter_row, filter_col, in_depth) order, zero where the window hangs
// over the padding. With the filter viewed as a [K, out_depth] matrix
// (K = rows * cols * in_depth, the same order):
//   output        = patches x filter                    [M, out_depth]
//   d patches     = d output x filter^T, then each patch row added back
//                   into the input positions it came from (col2im)
//   d filter      = patches^T x d output
// A 1x1 filter with stride 1 reads each input pixel once: its patch matrix
// is the input itself and is not copied. Conv2D also takes an input depth
// that is a multiple of the filter's (a grouped convolution, forward only,
// as TensorFlow's CPU kernels): one ordinary convolution per group.
//
// Float convolutions and both backprops first ask oneDNN's primitives
// (conv_onednn.h, conv_backprop_onednn.h), which take the shapes where they
// were measured faster.
//
// Work is split across the intra-op pool by whole images (so col2im's
// overlapping windows never meet across threads); a batch smaller than the
// pool instead splits each product across it. Patch matrices are built a
// bounded number of rows at a time.
#include "runtime/kernels/conv_ops.h"

#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

#include "runtime/framework/conv_geometry.h"
#include "runtime/kernels/channels_last.h"
#include "runtime/kernels/conv_backprop_onednn.h"
#include "runtime/kernels/conv_onednn.h"
#include "runtime/kernels/gemm.h"

// For the pool's thread count and parallelFor (no Eigen expressions here).
#include <unsupported/Eigen/CXX11/Tensor>

namespace tensorweave {
namespace {

// Patch rows are built this many bytes at a time (one row at least).
constexpr int64_t kPatchChunkBytes = 4 << 20;

// Walks patch rows [row_begin, row_end) and, within each, the window's
// (filter_row, filter_col) cells: calls visit(patch, input_offset, length)
// for each run of `length` elements of patch row storage that maps to the
// contiguous input elements starting at `input_offset`, and
// visit(patch, -1, length) for runs in the padding. Positions advance by
// increments (no divisions per row), and with dilation 1 a window row whose
// columns are all inside the input is a single run.
template <typename Visit>
void ForEachPatchRun(const ConvGeometry& g, int64_t row_begin, int64_t row_end, Visit&& visit) {
  const int64_t depth = g.in_depth;
  const int64_t row_size = g.filter_rows * g.filter_cols * depth;
  const int64_t positions = g.out_rows * g.out_cols;
  const int64_t image_size = g.in_rows * g.in_cols * depth;
  const bool dense_cols = g.attrs.dilation_cols == 1;
  int64_t image = row_begin / positions;
  int64_t out_row = (row_begin % positions) / g.out_cols;
  int64_t out_col = row_begin % g.out_cols;
  for (int64_t r = row_begin; r < row_end; ++r) {
    int64_t patch = (r - row_begin) * row_size;
    const int64_t col_start = out_col * g.attrs.stride_cols - g.pad_cols;
    const bool cols_inside =
        col_start >= 0 && col_start + (g.filter_cols - 1) * g.attrs.dilation_cols < g.in_cols;
    for (int64_t fr = 0; fr < g.filter_rows; ++fr) {
      const int64_t in_row =
          out_row * g.attrs.stride_rows - g.pad_rows + fr * g.attrs.dilation_rows;
      if (in_row < 0 || in_row >= g.in_rows) {
        visit(patch, int64_t{-1}, g.filter_cols * depth);
        patch += g.filter_cols * depth;
        continue;
      }
      const int64_t row_offset = image * image_size + in_row * g.in_cols * depth;
      if (cols_inside && dense_cols) {
        visit(patch, row_offset + col_start * depth, g.filter_cols * depth);
        patch += g.filter_cols * depth;
        continue;
      }
      for (int64_t fc = 0; fc < g.filter_cols; ++fc, patch += depth) {
        const int64_t in_col = col_start + fc * g.attrs.dilation_cols;
        const bool inside = in_col >= 0 && in_col < g.in_cols;
        visit(patch, inside ? row_offset + in_col * depth : int64_t{-1}, depth);
      }
    }
    if (++out_col == g.out_cols) {
      out_col = 0;
      if (++out_row == g.out_rows) {
        out_row = 0;
        ++image;
      }
    }
  }
}

// Copies patch rows [row_begin, row_end) of the input into `patches`.
// (Runs are short, often 1 to 3 elements: plain loops beat memcpy calls.)
template <typename T>
void Im2Col(const ConvGeometry& g, const T* input, int64_t row_begin, int64_t row_end, T* patches) {
  ForEachPatchRun(g, row_begin, row_end, [&](int64_t patch, int64_t offset, int64_t length) {
    T* dst = patches + patch;
    if (offset < 0) {
      for (int64_t i = 0; i < length; ++i) dst[i] = T(0);
    } else {
      const T* src = input + offset;
      for (int64_t i = 0; i < length; ++i) dst[i] = src[i];
    }
  });
}

// Adds patch rows [row_begin, row_end) back into the input positions they
// were read from (the padding's share is dropped).
template <typename T>
void Col2ImAdd(const ConvGeometry& g, const T* patches, int64_t row_begin, int64_t row_end,
               T* input) {
  ForEachPatchRun(g, row_begin, row_end, [&](int64_t patch, int64_t offset, int64_t length) {
    if (offset < 0) return;
    const T* src = patches + patch;
    T* dst = input + offset;
    for (int64_t i = 0; i < length; ++i) dst[i] += src[i];
  });
}

// True when the patch matrix is the input itself.
bool IsPointwise(const ConvGeometry& g) {
  return g.filter_rows == 1 && g.filter_cols == 1 && g.attrs.stride_rows == 1 &&
         g.attrs.stride_cols == 1 && g.out_rows == g.in_rows && g.out_cols == g.in_cols;
}

// How the images are split: `count` blocks of whole images run in
// parallel, each with single-threaded products, or one block whose
// products use `gemm_pool`.
struct ImageBlocks {
  int64_t count = 1;
  const Eigen::ThreadPoolDevice* gemm_pool = nullptr;
};

ImageBlocks PlanImageBlocks(const OpKernelContext* ctx, const ConvGeometry& g) {
  ImageBlocks blocks;
  const Eigen::ThreadPoolDevice* pool = IntraOpPool(ctx);
  const double work = static_cast<double>(g.batch) * g.out_rows * g.out_cols * g.filter_rows *
                      g.filter_cols * g.in_depth * g.out_depth;
  if (pool == nullptr || work < kInlineWorkCycles * 8) return blocks;
  if (g.batch >= pool->numThreads()) {
    blocks.count = pool->numThreads();
  } else {
    blocks.gemm_pool = pool;
  }
  return blocks;
}

// Calls fn(block, row_begin, row_end) for each block of whole images, in
// parallel when there are several.
template <typename Fn>
void RunImageBlocks(const OpKernelContext* ctx, const ConvGeometry& g, const ImageBlocks& blocks,
                    Fn&& fn) {
  const int64_t positions = g.out_rows * g.out_cols;
  auto run = [&](int64_t block) {
    const int64_t first = g.batch * block / blocks.count;
    const int64_t last = g.batch * (block + 1) / blocks.count;
    fn(block, first * positions, last * positions);
  };
  if (blocks.count == 1) {
    run(0);
    return;
  }
  IntraOpPool(ctx)->parallelFor(blocks.count, Eigen::TensorOpCost(0, 0, 1e9),
                                [&](Eigen::Index begin, Eigen::Index end) {
                                  for (Eigen::Index b = begin; b < end; ++b) run(b);
                                });
}

// Rows of patch matrix built per chunk.
int64_t ChunkRows(const ConvGeometry& g, size_t element_size) {
  const int64_t row_bytes =
      std::max<int64_t>(1, g.filter_rows * g.filter_cols * g.in_depth * element_size);
  return std::max<int64_t>(1, kPatchChunkBytes / row_bytes);
}

// Reads an int32 or int64 sizes vector (input_sizes, filter_sizes) of 4
// values; `spatial_ok` also takes TensorFlow's 2-value form (rows, cols) of
// input_sizes, whose batch and depth come from out_backprop and the filter.
Status SizesVector(const Tensor& sizes, const char* name, bool spatial_ok,
                   std::vector<int64_t>* values) {
  const int64_t n = sizes.NumElements();
  if (sizes.dims() != 1 || (n != 4 && !(spatial_ok && n == 2))) {
    return errors::InvalidArgument(name, " must be a vector of 4 sizes",
                                   spatial_ok ? " (or of 2 spatial ones)" : "", ", got shape ",
                                   sizes.shape().DebugString());
  }
  values->clear();
  for (int64_t i = 0; i < n; ++i) {
    values->push_back(sizes.dtype() == DT_INT64 ? sizes.data<int64_t>()[i]
                                                : sizes.data<int32_t>()[i]);
  }
  return Status::OK();
}

class ConvOpBase : public OpKernel {
 public:
  explicit ConvOpBase(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ParseWindowAttrs(c->def(), false, &attrs_));
  }

 protected:
  // The geometry of input x filter, with out_backprop (when given) checked
  // against the convolution's output. Shapes are in the node's data_format.
  Status Geometry(const TensorShape& input, const TensorShape& filter, const Tensor* out_backprop,
                  ConvGeometry* g) const {
    TensorShape output;
    TW_RETURN_IF_ERROR(ComputeConvGeometry(input, filter, attrs_, g, &output));
    if (out_backprop != nullptr && out_backprop->shape() != output) {
      return errors::InvalidArgument("out_backprop has shape ", out_backprop->shape().DebugString(),
                                     " but the convolution of input ", input.DebugString(),
                                     " with filter ", filter.DebugString(), " has output shape ",
                                     output.DebugString());
    }
    return Status::OK();
  }

  Status ToNhwc(const OpKernelContext* ctx, const Tensor& tensor, Tensor* nhwc) const {
    return ToChannelsLast(ctx, tensor, attrs_.nchw, nhwc);
  }
  Status AllocateNhwcOutput(OpKernelContext* ctx, const TensorShape& shape, Tensor* nhwc) const {
    return AllocateChannelsLastOutput(ctx, 0, shape, attrs_.nchw, nhwc);
  }
  Status FinishNhwcOutput(OpKernelContext* ctx, const TensorShape& shape,
                          const Tensor& nhwc) const {
    return FinishChannelsLastOutput(ctx, 0, shape, attrs_.nchw, nhwc);
  }

  WindowAttrs attrs_;
};

template <typename T>
// A grouped convolution, one group at a time: the group's input channels
// and filter columns are copied out contiguously, convolved as an
// ordinary convolution and the result copied into its output channels.
// (Grouped convolutions are rare in the graphs TensorFlow's CPU runs;
// the copies keep one convolution path.)
void ConvolveGroupsNhwc(OpKernelContext* ctx, const ConvGeometry& g, const T* in, const T* filter,
                        T* out) {
  ConvGeometry group = g;
  group.groups = 1;
  group.in_depth = g.in_depth / g.groups;
  group.out_depth = g.out_depth / g.groups;
  const int64_t pixels = g.batch * g.in_rows * g.in_cols;
  const int64_t taps = g.filter_rows * g.filter_cols * group.in_depth;
  const int64_t outputs = g.batch * g.out_rows * g.out_cols;
  std::vector<T> group_in(pixels * group.in_depth), group_filter(taps * group.out_depth),
      group_out(outputs * group.out_depth);
  for (int64_t k = 0; k < g.groups; ++k) {
    for (int64_t p = 0; p < pixels; ++p) {
      const T* src = in + p * g.in_depth + k * group.in_depth;
      std::copy(src, src + group.in_depth, group_in.data() + p * group.in_depth);
    }
    for (int64_t t = 0; t < taps; ++t) {
      const T* src = filter + t * g.out_depth + k * group.out_depth;
      std::copy(src, src + group.out_depth, group_filter.data() + t * group.out_depth);
    }
    Conv2DNhwc<T>(ctx, group, group_in.data(), group_filter.data(), group_out.data());
    for (int64_t p = 0; p < outputs; ++p) {
      const T* src = group_out.data() + p * group.out_depth;
      std::copy(src, src + group.out_depth, out + p * g.out_depth + k * group.out_depth);
    }
  }
}

}  // namespace

// Declared in conv_ops.h.
template <typename T>
void Conv2DNhwc(OpKernelContext* ctx, const ConvGeometry& g, const T* in, const T* filter, T* out) {
  if (g.groups != 1) {
    ConvolveGroupsNhwc(ctx, g, in, filter, out);
    return;
  }
  if constexpr (std::is_same<T, float>::value) {
    // oneDNN's convolution primitives, where measured faster (conv_onednn.h).
    if (OneDnnConv2DChosen(g) && OneDnnConv2DForward(ctx, g, in, filter, out)) return;
  }
  const int64_t patch_size = g.filter_rows * g.filter_cols * g.in_depth;
  const ImageBlocks blocks = PlanImageBlocks(ctx, g);
  const bool pointwise = IsPointwise(g);
  const int64_t chunk_rows = ChunkRows(g, sizeof(T));
  RunImageBlocks(ctx, g, blocks, [&](int64_t, int64_t row_begin, int64_t row_end) {
    std::unique_ptr<T[]> patches;
    if (!pointwise) patches.reset(new T[std::min(chunk_rows, row_end - row_begin) * patch_size]);
    for (int64_t r = row_begin; r < row_end; r += chunk_rows) {
      const int64_t rows = std::min(chunk_rows, row_end - r);
      const T* a = in + r * patch_size;
      if (!pointwise) {
        Im2Col(g, in, r, r + rows, patches.get());
        a = patches.get();
      }
      GemmOnPool<T>(blocks.gemm_pool, GemmArgs{a, filter, out + r * g.out_depth, rows, patch_size,
                                               g.out_depth, false, false});
    }
  });
}

#define TW_INSTANTIATE_CONV(T)                                                              \
  template void Conv2DNhwc<T>(OpKernelContext * ctx, const ConvGeometry& g, const T* input, \
                              const T* filter, T* output);
TW_FOR_EACH_FLOAT(TW_INSTANTIATE_CONV)
#undef TW_INSTANTIATE_CONV

namespace {

template <typename T>
class Conv2DOp : public ConvOpBase {
 public:
  using ConvOpBase::ConvOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& filter = ctx->input(1);
    ConvGeometry g;
    TensorShape output_shape;
    OP_REQUIRES_OK(ctx, ComputeConvGeometry(input.shape(), filter.shape(), attrs_, &g,
                                            &output_shape, /*allow_groups=*/true));
    Tensor input_nhwc, output_nhwc;
    OP_REQUIRES_OK(ctx, AllocateNhwcOutput(ctx, output_shape, &output_nhwc));
    if (output_nhwc.NumElements() > 0) {
      OP_REQUIRES_OK(ctx, ToNhwc(ctx, input, &input_nhwc));
      Conv2DNhwc<T>(ctx, g, input_nhwc.data<T>(), filter.data<T>(), output_nhwc.data<T>());
    }
    OP_REQUIRES_OK(ctx, FinishNhwcOutput(ctx, output_shape, output_nhwc));
  }
};

template <typename T>
class Conv2DBackpropInputOp : public ConvOpBase {
 public:
  using ConvOpBase::ConvOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& filter = ctx->input(1);
    const Tensor& out_backprop = ctx->input(2);
    TensorShape input_shape;
    OP_REQUIRES_OK(ctx, InputShape(ctx->input(0), filter, out_backprop, &input_shape));
    // The convolution of an input of this shape must give out_backprop's
    // shape: checked before the (possibly large) output is allocated.
    ConvGeometry g;
    OP_REQUIRES_OK(ctx, Geometry(input_shape, filter.shape(), &out_backprop, &g));
    Tensor grad_nhwc, output_nhwc;
    OP_REQUIRES_OK(ctx, AllocateNhwcOutput(ctx, input_shape, &output_nhwc));
    if (output_nhwc.NumElements() > 0) {
      OP_REQUIRES_OK(ctx, ToNhwc(ctx, out_backprop, &grad_nhwc));
      BackpropNhwc(ctx, g, grad_nhwc.data<T>(), filter.data<T>(), output_nhwc.data<T>());
    }
    OP_REQUIRES_OK(ctx, FinishNhwcOutput(ctx, input_shape, output_nhwc));
  }

 private:
  // input_sizes as a shape in the data_format: 4 sizes, or TensorFlow's 2
  // spatial sizes with out_backprop's batch and the filter's in_depth.
  Status InputShape(const Tensor& sizes, const Tensor& filter, const Tensor& out_backprop,
                    TensorShape* shape) const {
    std::vector<int64_t> values;
    TW_RETURN_IF_ERROR(SizesVector(sizes, "input_sizes", true, &values));
    if (values.size() == 4) return TensorShape::Build(values, shape);
    if (filter.dims() != 4 || out_backprop.dims() != 4) {
      return errors::InvalidArgument(
          "filter and out_backprop must be 4-dimensional with 2 input_sizes, got ",
          filter.shape().DebugString(), " and ", out_backprop.shape().DebugString());
    }
    return ShapeInDataFormat(attrs_, out_backprop.dim_size(0), values[0], values[1],
                             filter.dim_size(2), shape);
  }

  static void BackpropNhwc(OpKernelContext* ctx, const ConvGeometry& g, const T* grad,
                           const T* filter, T* out) {
    if constexpr (std::is_same<T, float>::value) {
      // oneDNN's backward-data primitives, where measured faster.
      if (g.out_rows * g.out_cols > 0 && OneDnnConv2DBackpropChosen(ctx, g, true) &&
          OneDnnConv2DBackpropInput(ctx, g, grad, filter, out)) {
        return;
      }
    }
    const int64_t patch_size = g.filter_rows * g.filter_cols * g.in_depth;
    const int64_t image_size = g.in_rows * g.in_cols * g.in_depth;
    const int64_t positions = g.out_rows * g.out_cols;
    const ImageBlocks blocks = PlanImageBlocks(ctx, g);
    const bool pointwise = IsPointwise(g);
    const int64_t chunk_rows = ChunkRows(g, sizeof(T));
    if (positions == 0) {  // no window: the gradient is all zero
      std::fill(out, out + g.batch * image_size, T(0));
      return;
    }
    RunImageBlocks(ctx, g, blocks, [&](int64_t, int64_t row_begin, int64_t row_end) {
      if (pointwise) {  // the patch gradient is the input gradient
        GemmOnPool<T>(blocks.gemm_pool,
                      GemmArgs{grad + row_begin * g.out_depth, filter, out + row_begin * patch_size,
                               row_end - row_begin, g.out_depth, patch_size, false, true});
        return;
      }
      const int64_t first_image = row_begin / positions, last_image = row_end / positions;
      std::fill(out + first_image * image_size, out + last_image * image_size, T(0));
      std::unique_ptr<T[]> patches(new T[std::min(chunk_rows, row_end - row_begin) * patch_size]);
      for (int64_t r = row_begin; r < row_end; r += chunk_rows) {
        const int64_t rows = std::min(chunk_rows, row_end - r);
        GemmOnPool<T>(blocks.gemm_pool, GemmArgs{grad + r * g.out_depth, filter, patches.get(),
                                                 rows, g.out_depth, patch_size, false, true});
        Col2ImAdd(g, patches.get(), r, r + rows, out);
      }
    });
  }
};

template <typename T>
class Conv2DBackpropFilterOp : public ConvOpBase {
 public:
  using ConvOpBase::ConvOpBase;

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& out_backprop = ctx->input(2);
    std::vector<int64_t> sizes;
    OP_REQUIRES_OK(ctx, SizesVector(ctx->input(1), "filter_sizes", false, &sizes));
    TensorShape filter_shape;
    OP_REQUIRES_OK(ctx, TensorShape::Build(sizes, &filter_shape));
    ConvGeometry g;
    OP_REQUIRES_OK(ctx, Geometry(input.shape(), filter_shape, &out_backprop, &g));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, filter_shape, &output));
    const int64_t filter_size = output->NumElements();
    if (filter_size == 0) return;
    T* out = output->data<T>();
    std::fill(out, out + filter_size, T(0));
    if (out_backprop.NumElements() == 0) return;
    Tensor input_nhwc, grad_nhwc;
    OP_REQUIRES_OK(ctx, ToNhwc(ctx, input, &input_nhwc));
    OP_REQUIRES_OK(ctx, ToNhwc(ctx, out_backprop, &grad_nhwc));
    const int64_t patch_size = g.filter_rows * g.filter_cols * g.in_depth;
    const T* in = input_nhwc.data<T>();
    const T* grad = grad_nhwc.data<T>();
    if constexpr (std::is_same<T, float>::value) {
      // oneDNN's backward-weights primitives, where measured faster.
      if (OneDnnConv2DBackpropChosen(ctx, g, false) &&
          OneDnnConv2DBackpropFilter(ctx, g, in, grad, out)) {
        return;
      }
      std::fill(out, out + filter_size, T(0));  // oneDNN may have written part of it
    }
    const ImageBlocks blocks = PlanImageBlocks(ctx, g);
    const bool pointwise = IsPointwise(g);
    const int64_t chunk_rows = ChunkRows(g, sizeof(T));
    // Each block sums its chunks' products into its own accumulator; the
    // accumulators are added in block order, so results do not depend on
    // thread timing.
    std::vector<T> sums(static_cast<size_t>(blocks.count * filter_size), T(0));
    RunImageBlocks(ctx, g, blocks, [&](int64_t block, int64_t row_begin, int64_t row_end) {
      std::unique_ptr<T[]> patches;
      if (!pointwise) patches.reset(new T[std::min(chunk_rows, row_end - row_begin) * patch_size]);
      std::unique_ptr<T[]> product(new T[filter_size]);
      T* sum = sums.data() + block * filter_size;
      for (int64_t r = row_begin; r < row_end; r += chunk_rows) {
        const int64_t rows = std::min(chunk_rows, row_end - r);
        const T* a = in + r * patch_size;
        if (!pointwise) {
          Im2Col(g, in, r, r + rows, patches.get());
          a = patches.get();
        }
        GemmOnPool<T>(blocks.gemm_pool, GemmArgs{a, grad + r * g.out_depth, product.get(),
                                                 patch_size, rows, g.out_depth, true, false});
        for (int64_t i = 0; i < filter_size; ++i) sum[i] += product[i];
      }
    });
    for (int64_t block = 0; block < blocks.count; ++block) {
      const T* sum = sums.data() + block * filter_size;
      for (int64_t i = 0; i < filter_size; ++i) out[i] += sum[i];
    }
  }
};

#define TW_REGISTER_CONV(T)                                                   \
  TW_REGISTER_CPU_KERNEL("Conv2D", T, Conv2DOp<T>);                           \
  TW_REGISTER_CPU_KERNEL("Conv2DBackpropInput", T, Conv2DBackpropInputOp<T>); \
  TW_REGISTER_CPU_KERNEL("Conv2DBackpropFilter", T, Conv2DBackpropFilterOp<T>);
TW_FOR_EACH_FLOAT(TW_REGISTER_CONV)
#undef TW_REGISTER_CONV

}  // namespace
}  // namespace tensorweave
