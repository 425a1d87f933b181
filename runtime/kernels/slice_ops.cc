// Kernels that read or write a strided region: Slice, StridedSlice,
// StridedSliceGrad, Tile, BroadcastTo, Pad and PadV2. Each computes the
// region's dims and strides and lets StridedCopy move the elements.
#include <vector>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/strided_copy.h"
#include "runtime/ops/checked_count.h"
#include "runtime/ops/index_vector.h"
#include "runtime/ops/strided_slice_spec.h"

namespace tensorweave {
namespace {

Status ReadVector(const Tensor& tensor, const char* what, std::vector<int64_t>* values) {
  if (tensor.dims() != 1) {
    return errors::InvalidArgument(what, " must be a vector, got shape ",
                                   tensor.shape().DebugString());
  }
  return ReadIndexVector(tensor, what, values);
}

// The view of `input` that starts at `begin` and steps by `step` per dim.
StridedView RegionOf(const TensorShape& shape, const std::vector<int64_t>& begin,
                     const std::vector<int64_t>& step) {
  StridedView view;
  view.strides = DenseStrides(shape);
  for (size_t d = 0; d < view.strides.size(); ++d) {
    view.offset += begin[d] * view.strides[d];
    view.strides[d] *= step[d];
  }
  return view;
}

// The row-major view of a dense tensor of `dims`.
StridedView Dense(const std::vector<int64_t>& dims) {
  StridedView view;
  view.strides.resize(dims.size());
  int64_t stride = 1;
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    view.strides[d] = stride;
    stride *= dims[d];
  }
  return view;
}

class SliceOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    std::vector<int64_t> begin, size;
    OP_REQUIRES_OK(ctx, ReadVector(ctx->input(1), "begin", &begin));
    OP_REQUIRES_OK(ctx, ReadVector(ctx->input(2), "size", &size));
    const int rank = input.dims();
    OP_REQUIRES(ctx,
                static_cast<int>(begin.size()) == rank && static_cast<int>(size.size()) == rank,
                errors::InvalidArgument("Expected begin and size arguments to be 1-D tensors of "
                                        "size ",
                                        rank, ", but got shapes [", begin.size(), "] and [",
                                        size.size(), "] instead."));
    TensorShape shape;
    for (int d = 0; d < rank; ++d) {
      const int64_t dim = input.dim_size(d);
      // begin is in [0, dim] before dim - begin is computed, so it cannot wrap.
      const bool begin_fits = begin[d] >= 0 && begin[d] <= dim;
      if (begin_fits && size[d] == -1) size[d] = dim - begin[d];
      OP_REQUIRES(ctx, begin_fits && size[d] >= 0 && size[d] <= dim - begin[d],
                  errors::InvalidArgument("Expected begin[", d, "] in [0, ", dim, "] and size[", d,
                                          "] in [0, ", dim, " - begin], but got ", begin[d],
                                          " and ", size[d]));
      OP_REQUIRES_OK(ctx, shape.AddDim(size[d]));
    }
    if (shape == input.shape()) {
      ctx->set_output(0, input);
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    StridedCopy(ctx, size, input, RegionOf(input.shape(), begin, std::vector<int64_t>(rank, 1)),
                out, Dense(size));
  }
};

// Reads StridedSlice's masks from the node.
class StridedSliceBase : public OpKernel {
 public:
  explicit StridedSliceBase(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("begin_mask", &masks_.begin));
    OP_REQUIRES_OK(c, c->GetAttr("end_mask", &masks_.end));
    OP_REQUIRES_OK(c, c->GetAttr("ellipsis_mask", &masks_.ellipsis));
    OP_REQUIRES_OK(c, c->GetAttr("new_axis_mask", &masks_.new_axis));
    OP_REQUIRES_OK(c, c->GetAttr("shrink_axis_mask", &masks_.shrink_axis));
  }

 protected:
  // The dense spec of inputs first..first+2 (begin, end, strides) over `shape`.
  Status Spec(OpKernelContext* ctx, int first, const TensorShape& shape,
              StridedSliceDense* dense) const {
    std::vector<int64_t> begin, end, strides;
    TW_RETURN_IF_ERROR(ReadVector(ctx->input(first), "begin", &begin));
    TW_RETURN_IF_ERROR(ReadVector(ctx->input(first + 1), "end", &end));
    TW_RETURN_IF_ERROR(ReadVector(ctx->input(first + 2), "strides", &strides));
    return ComputeStridedSlice(shape.dim_sizes(), begin, end, strides, masks_, dense);
  }

  StridedSliceMasks masks_;
};

class StridedSliceOp : public StridedSliceBase {
 public:
  using StridedSliceBase::StridedSliceBase;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    StridedSliceDense dense;
    OP_REQUIRES_OK(ctx, Spec(ctx, 1, input.shape(), &dense));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, TensorShape::Build(dense.final_dims, &shape));
    // A slice taking every element in order (x[:], x[..., None]) is the
    // input's buffer under the final shape.
    bool whole = true;
    for (int d = 0; d < input.dims() && whole; ++d) {
      whole = dense.begin[d] == 0 && dense.stride[d] == 1 && dense.size[d] == input.dim_size(d);
    }
    if (whole) {
      Tensor output;
      OP_REQUIRES(ctx, output.CopyFrom(input, shape),
                  errors::Internal("could not share the input buffer"));
      ctx->set_output(0, std::move(output));
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    StridedCopy(ctx, dense.size, input, RegionOf(input.shape(), dense.begin, dense.stride), out,
                Dense(dense.size));
  }
};

class StridedSliceGradOp : public StridedSliceBase {
 public:
  using StridedSliceBase::StridedSliceBase;
  void Compute(OpKernelContext* ctx) override {
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(ctx, ReadVector(ctx->input(0), "shape", &dims));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, TensorShape::Build(dims, &shape));
    StridedSliceDense dense;
    OP_REQUIRES_OK(ctx, Spec(ctx, 1, shape, &dense));
    const Tensor& dy = ctx->input(4);
    TensorShape expected;
    OP_REQUIRES_OK(ctx, TensorShape::Build(dense.final_dims, &expected));
    OP_REQUIRES(ctx, dy.shape() == expected,
                errors::InvalidArgument("shape of dy was ", dy.shape().DebugString(),
                                        " instead of ", expected.DebugString()));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    FillWithZeros(out);
    StridedCopy(ctx, dense.size, dy, Dense(dense.size), out,
                RegionOf(shape, dense.begin, dense.stride));
  }
};

// Tile views the output [m0*d0, m1*d1, ...] as [m0, d0, m1, d1, ...] and
// reads the input with stride 0 along every repeat dim.
class TileOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    std::vector<int64_t> multiples;
    OP_REQUIRES_OK(ctx, ReadVector(ctx->input(1), "multiples", &multiples));
    const int rank = input.dims();
    OP_REQUIRES(ctx, static_cast<int>(multiples.size()) == rank,
                errors::InvalidArgument("Expected multiples argument to be a vector of length ",
                                        rank, " but got length ", multiples.size()));
    TensorShape shape;
    std::vector<int64_t> dims, strides;
    const std::vector<int64_t> input_strides = DenseStrides(input.shape());
    for (int d = 0; d < rank; ++d) {
      OP_REQUIRES(
          ctx, multiples[d] >= 0,
          errors::InvalidArgument("Expected multiples[", d, "] >= 0, but got ", multiples[d]));
      int64_t size;
      OP_REQUIRES(ctx, MultiplyWithoutOverflow(input.dim_size(d), multiples[d], &size),
                  errors::InvalidArgument("Tiling dimension ", d, " overflows"));
      OP_REQUIRES_OK(ctx, shape.AddDim(size));
      dims.insert(dims.end(), {multiples[d], input.dim_size(d)});
      strides.insert(strides.end(), {0, input_strides[d]});
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    StridedCopy(ctx, dims, input, StridedView{0, strides}, out, Dense(dims));
  }
};

// BroadcastTo reads the input with stride 0 along broadcast dims.
class BroadcastToOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    std::vector<int64_t> dims;
    OP_REQUIRES_OK(ctx, ReadVector(ctx->input(1), "shape", &dims));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, TensorShape::Build(dims, &shape));
    const int rank = shape.dims(), lead = rank - input.dims();
    OP_REQUIRES(
        ctx, lead >= 0,
        errors::InvalidArgument("Rank of input (", input.dims(),
                                ") must be no greater than rank of output shape (", rank, ")."));
    const std::vector<int64_t> input_strides = DenseStrides(input.shape());
    std::vector<int64_t> strides(rank, 0);
    for (int d = lead; d < rank; ++d) {
      const int64_t size = input.dim_size(d - lead);
      OP_REQUIRES(ctx, size == dims[d] || size == 1,
                  errors::InvalidArgument("Incompatible shapes: ", input.shape().DebugString(),
                                          " vs. ", shape.DebugString()));
      strides[d] = size == 1 ? 0 : input_strides[d - lead];
    }
    if (shape == input.shape()) {
      ctx->set_output(0, input);
      return;
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    StridedCopy(ctx, dims, input, StridedView{0, strides}, out, Dense(dims));
  }
};

// Pad and PadV2: fill with the constant, then copy the input inside.
class PadOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& paddings = ctx->input(1);
    const int rank = input.dims();
    OP_REQUIRES(ctx,
                paddings.dims() == 2 && paddings.dim_size(0) == rank && paddings.dim_size(1) == 2,
                errors::InvalidArgument("paddings must be a matrix of shape [", rank, ", 2], got ",
                                        paddings.shape().DebugString()));
    Tensor flat;
    OP_REQUIRES(ctx, flat.CopyFrom(paddings, TensorShape({2 * rank})),
                errors::Internal("could not read paddings"));
    std::vector<int64_t> values;
    OP_REQUIRES_OK(ctx, ReadIndexVector(flat, "paddings", &values));
    const bool has_constant = ctx->num_inputs() > 2;
    if (has_constant) {
      OP_REQUIRES(ctx, ctx->input(2).dims() == 0,
                  errors::InvalidArgument("constant_values must be a scalar, got shape ",
                                          ctx->input(2).shape().DebugString()));
    }
    TensorShape shape;
    std::vector<int64_t> before(rank);
    for (int d = 0; d < rank; ++d) {
      before[d] = values[2 * d];
      const int64_t after = values[2 * d + 1];
      OP_REQUIRES(
          ctx, before[d] >= 0 && after >= 0,
          errors::InvalidArgument("Paddings must be non-negative: ", before[d], " ", after));
      int64_t padded;
      OP_REQUIRES(ctx,
                  AddWithoutOverflow(input.dim_size(d), before[d], &padded) &&
                      AddWithoutOverflow(padded, after, &padded),
                  errors::InvalidArgument("Paddings ", before[d], " and ", after, " of dimension ",
                                          d, " (size ", input.dim_size(d), ") make it larger than ",
                                          kMaxElements));
      OP_REQUIRES_OK(ctx, shape.AddDim(padded));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (has_constant) {
      FillFromElement(ctx->input(2), 0, out);
    } else {
      FillWithZeros(out);
    }
    StridedCopy(ctx, input.shape().dim_sizes(), input, Dense(input.shape().dim_sizes()), out,
                RegionOf(shape, before, std::vector<int64_t>(rank, 1)));
  }
};

REGISTER_KERNEL_BUILDER(Name("Slice").Device(DEVICE_CPU), SliceOp);
REGISTER_KERNEL_BUILDER(Name("StridedSlice").Device(DEVICE_CPU), StridedSliceOp);
REGISTER_KERNEL_BUILDER(Name("StridedSliceGrad").Device(DEVICE_CPU), StridedSliceGradOp);
REGISTER_KERNEL_BUILDER(Name("Tile").Device(DEVICE_CPU), TileOp);
REGISTER_KERNEL_BUILDER(Name("BroadcastTo").Device(DEVICE_CPU), BroadcastToOp);
REGISTER_KERNEL_BUILDER(Name("Pad").Device(DEVICE_CPU), PadOp);
REGISTER_KERNEL_BUILDER(Name("PadV2").Device(DEVICE_CPU), PadOp);

}  // namespace
}  // namespace tensorweave
