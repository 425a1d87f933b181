// SpaceToBatchND and BatchToSpaceND. With block shape [b_1..b_M], the
// "batch side" tensor [B*prod(b), i_1..i_M, rest...] and the "space side"
// tensor [B, s_1..s_M, rest...] pair up as
//   batch side (o*B + n, i_1, .., i_M)  <->  space side (n, i_k*b_k + o_k - start_k)
// where o = (o_1..o_M) is the block offset in row-major order and start_k
// the leading padding (SpaceToBatchND: batch side is the output, positions
// in the padding are zero) or crop (BatchToSpaceND: batch side is the
// input, positions cropped away are dropped).
#include <cstring>
#include <vector>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/strided_copy.h"
#include "runtime/ops/checked_count.h"
#include "runtime/ops/index_vector.h"

namespace tensorweave {
namespace {

struct BlockGeometry {
  int64_t space_batch = 0;           // B
  std::vector<int64_t> block;        // b_k
  std::vector<int64_t> start;        // padding or crop before, per block dim
  std::vector<int64_t> space_sizes;  // s_k
  std::vector<int64_t> batch_sizes;  // i_k ranges
  int64_t inner = 1;                 // elements of the remaining dims
};

// Reads block_shape [M] and the [M, 2] paddings or crops, all checked.
Status ReadBlocks(const Tensor& input, const Tensor& block_tensor, const Tensor& pads_tensor,
                  const char* pads_name, std::vector<int64_t>* block, std::vector<int64_t>* pads) {
  if (block_tensor.dims() != 1) {
    return errors::InvalidArgument("block_shape must be one-dimensional, got shape ",
                                   block_tensor.shape().DebugString());
  }
  const int64_t m = block_tensor.dim_size(0);
  if (pads_tensor.dims() != 2 || pads_tensor.dim_size(0) != m || pads_tensor.dim_size(1) != 2) {
    return errors::InvalidArgument(pads_name, " should have shape [", m, ", 2] instead of ",
                                   pads_tensor.shape().DebugString());
  }
  if (input.dims() < 1 + m) {
    return errors::InvalidArgument("input rank should be >= ", 1 + m, " instead of ", input.dims());
  }
  TW_RETURN_IF_ERROR(ReadIndexVector(block_tensor, "block_shape", block));
  Tensor flat;
  if (!flat.CopyFrom(pads_tensor, TensorShape({pads_tensor.NumElements()}))) {
    return errors::Internal("could not read ", pads_name);
  }
  TW_RETURN_IF_ERROR(ReadIndexVector(flat, pads_name, pads));
  for (int64_t k = 0; k < m; ++k) {
    if ((*block)[k] < 1) {
      return errors::InvalidArgument("All values in block_shape must be positive, got value, ",
                                     (*block)[k], " at index ", k);
    }
    if ((*pads)[2 * k] < 0 || (*pads)[2 * k + 1] < 0) {
      return errors::InvalidArgument("All values in ", pads_name, " must be non-negative, got ",
                                     (*pads)[2 * k], ", ", (*pads)[2 * k + 1], " for dim ", k);
    }
  }
  return Status::OK();
}

// Calls visit(batch_pixel, space_pixel) for every batch-side pixel whose
// space-side position lies inside the space tensor (pixels count `inner`
// elements).
template <typename Visit>
void ForEachPair(const BlockGeometry& g, Visit&& visit) {
  const int m = static_cast<int>(g.block.size());
  int64_t block_count = 1, positions = 1;
  for (int k = 0; k < m; ++k) {
    block_count *= g.block[k];
    positions *= g.batch_sizes[k];
  }
  const int64_t total = g.space_batch * block_count * positions;
  std::vector<int64_t> coordinate(m);
  for (int64_t q = 0; q < total; ++q) {
    int64_t rest = q;
    for (int k = m - 1; k >= 0; --k) {
      coordinate[k] = rest % g.batch_sizes[k];
      rest /= g.batch_sizes[k];
    }
    const int64_t n = rest % g.space_batch;
    int64_t offset = rest / g.space_batch;
    bool inside = true;
    for (int k = m - 1; k >= 0; --k) {
      coordinate[k] = coordinate[k] * g.block[k] + offset % g.block[k] - g.start[k];
      offset /= g.block[k];
      inside = inside && coordinate[k] >= 0 && coordinate[k] < g.space_sizes[k];
    }
    if (!inside) continue;
    int64_t space = n;
    for (int k = 0; k < m; ++k) space = space * g.space_sizes[k] + coordinate[k];
    visit(q, space);
  }
}

int64_t InnerSize(const Tensor& tensor, int from_dim) {
  int64_t inner = 1;
  for (int d = from_dim; d < tensor.dims(); ++d) inner *= tensor.dim_size(d);
  return inner;
}

class SpaceToBatchOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    BlockGeometry g;
    std::vector<int64_t> pads;
    OP_REQUIRES_OK(ctx,
                   ReadBlocks(input, ctx->input(1), ctx->input(2), "paddings", &g.block, &pads));
    const int m = static_cast<int>(g.block.size());
    g.space_batch = input.dim_size(0);
    std::vector<int64_t> dims = {g.space_batch};
    for (int k = 0; k < m; ++k) {
      int64_t padded = 0;
      OP_REQUIRES(ctx,
                  AddWithoutOverflow(input.dim_size(k + 1), pads[2 * k], &padded) &&
                      AddWithoutOverflow(padded, pads[2 * k + 1], &padded),
                  errors::InvalidArgument("padded_shape[", k, "] overflows"));
      OP_REQUIRES(
          ctx, padded % g.block[k] == 0,
          errors::InvalidArgument("padded_shape[", k, "]=", padded,
                                  " is not divisible by block_shape[", k, "]=", g.block[k]));
      OP_REQUIRES(ctx, MultiplyWithoutOverflow(dims[0], g.block[k], &dims[0]),
                  errors::InvalidArgument("the output batch overflows"));
      g.start.push_back(pads[2 * k]);
      g.space_sizes.push_back(input.dim_size(k + 1));
      g.batch_sizes.push_back(padded / g.block[k]);
      dims.push_back(padded / g.block[k]);
    }
    for (int d = m + 1; d < input.dims(); ++d) dims.push_back(input.dim_size(d));
    g.inner = InnerSize(input, m + 1);
    TensorShape shape;
    OP_REQUIRES_OK(ctx, TensorShape::Build(dims, &shape));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (out->NumElements() == 0) return;
    FillWithZeros(out);
    const size_t run = g.inner * DataTypeSize(input.dtype());
    const char* from = static_cast<const char*>(input.raw_data());
    char* to = static_cast<char*>(out->raw_data());
    ForEachPair(g, [&](int64_t batch_pixel, int64_t space_pixel) {
      std::memcpy(to + batch_pixel * run, from + space_pixel * run, run);
    });
  }
};

class BatchToSpaceOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    BlockGeometry g;
    std::vector<int64_t> crops;
    OP_REQUIRES_OK(ctx, ReadBlocks(input, ctx->input(1), ctx->input(2), "crops", &g.block, &crops));
    const int m = static_cast<int>(g.block.size());
    int64_t block_count = 1;
    for (int k = 0; k < m; ++k) {
      OP_REQUIRES(ctx, MultiplyWithoutOverflow(block_count, g.block[k], &block_count),
                  errors::InvalidArgument("the product of block_shape overflows"));
    }
    OP_REQUIRES(ctx, input.dim_size(0) % block_count == 0,
                errors::InvalidArgument("Input batch dimension (", input.dim_size(0),
                                        ") is not divisible by product of block sizes (",
                                        block_count, ")"));
    g.space_batch = input.dim_size(0) / block_count;
    std::vector<int64_t> dims = {g.space_batch};
    for (int k = 0; k < m; ++k) {
      int64_t full;
      OP_REQUIRES(ctx, MultiplyWithoutOverflow(input.dim_size(k + 1), g.block[k], &full),
                  errors::InvalidArgument("spatial dim ", k, " overflows"));
      // Both crops are non-negative: compare before subtracting (no overflow).
      OP_REQUIRES(
          ctx, crops[2 * k] <= full && crops[2 * k + 1] <= full - crops[2 * k],
          errors::InvalidArgument("cropped_shape[", k, "] must be non-negative: crops ",
                                  crops[2 * k], ", ", crops[2 * k + 1], " exceed the size ", full));
      const int64_t cropped = full - crops[2 * k] - crops[2 * k + 1];
      g.start.push_back(crops[2 * k]);
      g.space_sizes.push_back(cropped);
      g.batch_sizes.push_back(input.dim_size(k + 1));
      dims.push_back(cropped);
    }
    for (int d = m + 1; d < input.dims(); ++d) dims.push_back(input.dim_size(d));
    g.inner = InnerSize(input, m + 1);
    TensorShape shape;
    OP_REQUIRES_OK(ctx, TensorShape::Build(dims, &shape));
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    if (out->NumElements() == 0) return;
    const size_t run = g.inner * DataTypeSize(input.dtype());
    const char* from = static_cast<const char*>(input.raw_data());
    char* to = static_cast<char*>(out->raw_data());
    ForEachPair(g, [&](int64_t batch_pixel, int64_t space_pixel) {
      std::memcpy(to + space_pixel * run, from + batch_pixel * run, run);
    });
  }
};

#define TW_REGISTER_SPACE_BATCH(T)                             \
  TW_REGISTER_CPU_KERNEL("SpaceToBatchND", T, SpaceToBatchOp); \
  TW_REGISTER_CPU_KERNEL("BatchToSpaceND", T, BatchToSpaceOp);
TW_FOR_EACH_POD(TW_REGISTER_SPACE_BATCH)
#undef TW_REGISTER_SPACE_BATCH

}  // namespace
}  // namespace tensorweave
