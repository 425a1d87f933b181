// Kernels that only describe a tensor or give its buffer a new shape:
// Reshape, ExpandDims and Squeeze (share the input buffer), Shape, ShapeN,
// Size, Rank, StopGradient and IdentityN (pass their inputs through),
// Snapshot (copies) and InvertPermutation.
#include <limits>
#include <vector>

#include "runtime/kernels/kernel_util.h"
#include "runtime/ops/index_vector.h"

namespace tensorweave {
namespace {

// Resolves the requested sizes (at most one -1) against `count` elements.
Status ResolveReshape(const std::vector<int64_t>& sizes, int64_t count, TensorShape* shape) {
  std::vector<int64_t> dims = sizes;
  int infer_at = -1;
  int64_t known_product = 1;
  for (int i = 0; i < static_cast<int>(dims.size()); ++i) {
    if (dims[i] == -1) {
      if (infer_at >= 0) {
        return errors::InvalidArgument("Only one input size may be -1, not both ", infer_at,
                                       " and ", i);
      }
      infer_at = i;
    } else if (dims[i] < 0) {
      return errors::InvalidArgument("Size ", i, " must be non-negative, not ", dims[i]);
    } else if (!MultiplyWithoutOverflow(known_product, dims[i], &known_product)) {
      return errors::InvalidArgument("Requested shape [", StrJoin(sizes, ","),
                                     "] has too many elements");
    }
  }
  if (infer_at >= 0) {
    if (known_product == 0) {
      return errors::InvalidArgument(
          "Reshape cannot infer the missing input size for an empty tensor unless all "
          "specified input sizes are non-zero");
    }
    if (count % known_product != 0) {
      return errors::InvalidArgument("Input to reshape is a tensor with ", count,
                                     " values, but the requested shape requires a multiple of ",
                                     known_product);
    }
    dims[infer_at] = count / known_product;
  }
  TW_RETURN_IF_ERROR(TensorShape::Build(dims, shape));
  if (shape->num_elements() != count) {
    return errors::InvalidArgument("Input to reshape is a tensor with ", count,
                                   " values, but the requested shape has ", shape->num_elements());
  }
  return Status::OK();
}

class ReshapeOp : public CheapKernel {
 public:
  using CheapKernel::CheapKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const Tensor& sizes = ctx->input(1);
    OP_REQUIRES(
        ctx, sizes.dims() == 1,
        errors::InvalidArgument("sizes input must be 1-D, not ", sizes.shape().DebugString()));
    std::vector<int64_t> requested;
    OP_REQUIRES_OK(ctx, ReadIndexVector(sizes, "shape", &requested));
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ResolveReshape(requested, input.NumElements(), &shape));
    Tensor output;
    OP_REQUIRES(ctx, output.CopyFrom(input, shape),
                errors::Internal("Reshape could not share the input buffer"));
    ctx->set_output(0, std::move(output));
  }
};

// Writes the shape of input i into output i as Index values.
template <typename Index>
Status WriteShape(OpKernelContext* ctx, int i, DataType out_type) {
  const TensorShape& shape = ctx->input(i).shape();
  Tensor* out = nullptr;
  TW_RETURN_IF_ERROR(ctx->allocate_output(i, TensorShape({shape.dims()}), &out));
  for (int d = 0; d < shape.dims(); ++d) {
    const int64_t size = shape.dim_size(d);
    if (size > std::numeric_limits<Index>::max()) {
      return errors::InvalidArgument("Shape output type is ", DataTypeString(out_type),
                                     " but dimension ", d, " of input ", i, " is ", size);
    }
    out->data<Index>()[d] = static_cast<Index>(size);
  }
  return Status::OK();
}

// Shape (one input) and ShapeN (N inputs, one output each).
template <typename Index>
class ShapeOp : public CheapKernel {
 public:
  using CheapKernel::CheapKernel;
  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i)
      OP_REQUIRES_OK(ctx, WriteShape<Index>(ctx, i, output_type(i)));
  }
};

class IdentityNOp : public CheapKernel {
 public:
  using CheapKernel::CheapKernel;
  void Compute(OpKernelContext* ctx) override {
    for (int i = 0; i < ctx->num_inputs(); ++i) ctx->set_output(i, ctx->input(i));
  }
};

class SnapshotOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0).DeepCopy()); }
};

// Gives output 0 the input's buffer under `shape`.
void ShareWithShape(OpKernelContext* ctx, const TensorShape& shape) {
  Tensor output;
  OP_REQUIRES(ctx, output.CopyFrom(ctx->input(0), shape),
              errors::Internal("could not share the input buffer"));
  ctx->set_output(0, std::move(output));
}

class ExpandDimsOp : public CheapKernel {
 public:
  using CheapKernel::CheapKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    std::vector<int64_t> dim;
    OP_REQUIRES_OK(ctx, ReadIndexVector(ctx->input(1), "dim", &dim));
    OP_REQUIRES(ctx, dim.size() == 1,
                errors::InvalidArgument("'dim' must be a tensor with a single value, got ",
                                        dim.size(), " values"));
    const int rank = input.dims();
    int64_t at = dim[0];
    OP_REQUIRES(ctx, at >= -1 - rank && at <= rank,
                errors::InvalidArgument("Tried to expand dim index ", at, " for tensor with ", rank,
                                        " dimensions."));
    if (at < 0) at += rank + 1;
    TensorShape shape = input.shape();
    OP_REQUIRES_OK(ctx, shape.InsertDim(static_cast<int>(at), 1));
    ShareWithShape(ctx, shape);
  }
};

class SqueezeOp : public CheapKernel {
 public:
  explicit SqueezeOp(OpKernelConstruction* c) : CheapKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("squeeze_dims", &squeeze_dims_));
  }
  void Compute(OpKernelContext* ctx) override {
    const TensorShape& input = ctx->input(0).shape();
    const int rank = input.dims();
    std::vector<bool> drop(rank, squeeze_dims_.empty());
    if (!squeeze_dims_.empty()) {
      for (int64_t axis : squeeze_dims_) {
        OP_REQUIRES(ctx, axis >= -rank && axis < rank,
                    errors::InvalidArgument("Tried to squeeze dim index ", axis,
                                            " for tensor with ", rank, " dimensions."));
        const int at = static_cast<int>(axis < 0 ? axis + rank : axis);
        OP_REQUIRES(
            ctx, input.dim_size(at) == 1,
            errors::InvalidArgument("Can not squeeze dim[", at,
                                    "], expected a dimension of 1, got ", input.dim_size(at)));
        drop[at] = true;
      }
    }
    std::vector<int64_t> dims;
    for (int i = 0; i < rank; ++i) {
      if (!(drop[i] && input.dim_size(i) == 1)) dims.push_back(input.dim_size(i));
    }
    TensorShape shape;
    OP_REQUIRES_OK(ctx, TensorShape::Build(dims, &shape));
    ShareWithShape(ctx, shape);
  }

 private:
  std::vector<int64_t> squeeze_dims_;
};

template <typename Index>
class SizeOp : public CheapKernel {
 public:
  using CheapKernel::CheapKernel;
  void Compute(OpKernelContext* ctx) override {
    const int64_t count = ctx->input(0).NumElements();
    OP_REQUIRES(ctx, count <= std::numeric_limits<Index>::max(),
                errors::InvalidArgument("Number of elements ", count, " does not fit in ",
                                        DataTypeString(output_type(0))));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    out->data<Index>()[0] = static_cast<Index>(count);
  }
};

class RankOp : public CheapKernel {
 public:
  using CheapKernel::CheapKernel;
  void Compute(OpKernelContext* ctx) override {
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, TensorShape(), &out));
    out->data<int32_t>()[0] = ctx->input(0).dims();
  }
};

class StopGradientOp : public CheapKernel {
 public:
  using CheapKernel::CheapKernel;
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};

template <typename T>
class InvertPermutationOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    OP_REQUIRES(ctx, x.dims() == 1,
                errors::InvalidArgument("invert_permutation expects a 1D vector, got shape ",
                                        x.shape().DebugString()));
    const int64_t n = x.NumElements();
    OP_REQUIRES(ctx, n <= std::numeric_limits<T>::max(),
                errors::InvalidArgument("permutation of ", n, " elements is too large"));
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    const T* in = x.data<T>();
    T* out = y->data<T>();
    std::vector<bool> seen(n, false);
    for (int64_t i = 0; i < n; ++i) {
      const T p = in[i];
      OP_REQUIRES(ctx, p >= 0 && p < n, errors::InvalidArgument(p, " is not between 0 and ", n));
      OP_REQUIRES(ctx, !seen[p], errors::InvalidArgument(p, " is duplicated in the input."));
      seen[p] = true;
      out[p] = static_cast<T>(i);
    }
  }
};

REGISTER_KERNEL_BUILDER(Name("Reshape").Device(DEVICE_CPU), ReshapeOp);
REGISTER_KERNEL_BUILDER(Name("ExpandDims").Device(DEVICE_CPU), ExpandDimsOp);
REGISTER_KERNEL_BUILDER(Name("Squeeze").Device(DEVICE_CPU), SqueezeOp);
REGISTER_KERNEL_BUILDER(Name("Rank").Device(DEVICE_CPU), RankOp);
REGISTER_KERNEL_BUILDER(Name("StopGradient").Device(DEVICE_CPU), StopGradientOp);
REGISTER_KERNEL_BUILDER(Name("Size").Device(DEVICE_CPU).TypeConstraint<int32_t>("out_type"),
                        SizeOp<int32_t>);
REGISTER_KERNEL_BUILDER(Name("Size").Device(DEVICE_CPU).TypeConstraint<int64_t>("out_type"),
                        SizeOp<int64_t>);
TW_REGISTER_CPU_KERNEL("InvertPermutation", int32_t, InvertPermutationOp<int32_t>);
TW_REGISTER_CPU_KERNEL("InvertPermutation", int64_t, InvertPermutationOp<int64_t>);
REGISTER_KERNEL_BUILDER(Name("Shape").Device(DEVICE_CPU).TypeConstraint<int32_t>("out_type"),
                        ShapeOp<int32_t>);
REGISTER_KERNEL_BUILDER(Name("Shape").Device(DEVICE_CPU).TypeConstraint<int64_t>("out_type"),
                        ShapeOp<int64_t>);
REGISTER_KERNEL_BUILDER(Name("ShapeN").Device(DEVICE_CPU).TypeConstraint<int32_t>("out_type"),
                        ShapeOp<int32_t>);
REGISTER_KERNEL_BUILDER(Name("ShapeN").Device(DEVICE_CPU).TypeConstraint<int64_t>("out_type"),
                        ShapeOp<int64_t>);
REGISTER_KERNEL_BUILDER(Name("IdentityN").Device(DEVICE_CPU), IdentityNOp);
REGISTER_KERNEL_BUILDER(Name("Snapshot").Device(DEVICE_CPU), SnapshotOp);

}  // namespace
}  // namespace tensorweave
