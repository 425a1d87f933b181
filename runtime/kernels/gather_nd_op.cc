// GatherNd: output row r is the slice of params that index row r names
// (indices [..., depth] index params' first depth dims; each slice is
// params.shape[depth:]). Every row is range-checked first.
#include <cstring>
#include <string>
#include <vector>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/nd_index.h"
#include "runtime/kernels/strided_copy.h"

namespace tensorweave {
namespace {

class GatherNdOp : public OpKernel {
 public:
  explicit GatherNdOp(OpKernelConstruction* c) : OpKernel(c) {
    std::string policy;
    OP_REQUIRES_OK(c, c->GetAttr("bad_indices_policy", &policy));
    OP_REQUIRES_OK(c, ParseBadIndicesPolicy(policy, &ignore_bad_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& params = ctx->input(0);
    const Tensor& indices = ctx->input(1);
    OP_REQUIRES(ctx, params.dims() >= 1,
                errors::InvalidArgument("params must be at least a vector, got shape ",
                                        params.shape().DebugString()));
    OP_REQUIRES(ctx, indices.dims() >= 1,
                errors::InvalidArgument("indices must be at least a vector, got shape ",
                                        indices.shape().DebugString()));
    const int depth = static_cast<int>(
        std::min<int64_t>(indices.dim_size(indices.dims() - 1), params.dims() + 1));
    OP_REQUIRES(
        ctx, depth <= params.dims(),
        errors::InvalidArgument("index innermost dimension length must be <= params rank; saw: ",
                                indices.dim_size(indices.dims() - 1), " vs. ", params.dims()));
    TensorShape shape;
    for (int d = 0; d + 1 < indices.dims(); ++d) {
      OP_REQUIRES_OK(ctx, shape.AddDim(indices.dim_size(d)));
    }
    int64_t slice_size = 1;
    for (int d = depth; d < params.dims(); ++d) {
      OP_REQUIRES_OK(ctx, shape.AddDim(params.dim_size(d)));
      slice_size *= params.dim_size(d);
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (out->NumElements() == 0) return;
    std::vector<int64_t> slices;
    OP_REQUIRES_OK(ctx,
                   ReadSliceNumbers(indices, params.shape(), "param shape", ignore_bad_, &slices));
    const int64_t rows = static_cast<int64_t>(slices.size());
    if (params.dtype() == DT_STRING) {
      const std::string* from = params.data<std::string>();
      std::string* to = out->data<std::string>();
      for (int64_t r = 0; r < rows; ++r) {
        if (slices[r] < 0) continue;  // an ignored bad row stays empty
        std::copy(from + slices[r] * slice_size, from + (slices[r] + 1) * slice_size,
                  to + r * slice_size);
      }
      return;
    }
    if (ignore_bad_) FillWithZeros(out);
    const size_t slice_bytes = slice_size * DataTypeSize(params.dtype());
    const char* from = static_cast<const char*>(params.raw_data());
    char* to = static_cast<char*>(out->raw_data());
    ParallelFor(ctx, rows, static_cast<double>(slice_bytes), static_cast<double>(slice_size),
                [&](int64_t begin, int64_t end) {
                  for (int64_t r = begin; r < end; ++r) {
                    if (slices[r] < 0) continue;
                    std::memcpy(to + r * slice_bytes, from + slices[r] * slice_bytes, slice_bytes);
                  }
                });
  }

 private:
  bool ignore_bad_ = false;
};

REGISTER_KERNEL_BUILDER(Name("GatherNd").Device(DEVICE_CPU), GatherNdOp);

}  // namespace
}  // namespace tensorweave
