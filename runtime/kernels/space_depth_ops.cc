// SpaceToDepth and DepthToSpace in NHWC (TensorFlow's CPU kernels support
// only NHWC too). With block b and C input channels, SpaceToDepth's output
// (n, h, w) holds the b x b input block at (h*b, w*b) as b*b runs of C
// channels, (row, column) in row-major order; DepthToSpace undoes it.
#include <cstring>
#include <string>

#include "runtime/kernels/kernel_util.h"

namespace tensorweave {
namespace {

template <bool kToDepth>
class SpaceDepthOp : public OpKernel {
 public:
  explicit SpaceDepthOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("block_size", &block_));
    OP_REQUIRES(c, block_ >= 2,
                errors::InvalidArgument("Block size should be > 1, but was: ", block_));
    std::string format;
    OP_REQUIRES_OK(c, c->GetAttr("data_format", &format));
    OP_REQUIRES(c, format == "NHWC",
                errors::InvalidArgument("Only NHWC data_format supported on CPU. Got ", format));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    OP_REQUIRES(ctx, input.dims() == 4,
                errors::InvalidArgument("Input rank should be: 4 instead of: ", input.dims()));
    const int64_t batch = input.dim_size(0), height = input.dim_size(1);
    const int64_t width = input.dim_size(2), depth = input.dim_size(3);
    const int64_t b = block_;
    // The space side (large H, W; few channels) and the depth side.
    int64_t space_h, space_w, channels;
    TensorShape shape;
    if (kToDepth) {
      OP_REQUIRES(ctx, height % b == 0 && width % b == 0,
                  errors::InvalidArgument("Image width ", width, " and height ", height,
                                          " should be divisible by block_size: ", b));
      space_h = height, space_w = width, channels = depth;
      OP_REQUIRES_OK(ctx,
                     TensorShape::Build({batch, height / b, width / b, depth * b * b}, &shape));
    } else {
      OP_REQUIRES(ctx, depth % (b * b) == 0,
                  errors::InvalidArgument("Input depth dimension ", depth,
                                          " should be divisible by: ", b * b));
      space_h = height * b, space_w = width * b, channels = depth / (b * b);
      OP_REQUIRES_OK(ctx, TensorShape::Build({batch, space_h, space_w, channels}, &shape));
    }
    Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &out));
    const size_t run = channels * DataTypeSize(input.dtype());
    const char* from = static_cast<const char*>(input.raw_data());
    char* to = static_cast<char*>(out->raw_data());
    const int64_t small_h = space_h / b, small_w = space_w / b;
    const int64_t pixels = batch * space_h * space_w;
    // Space pixel p = (n, h, w) holds one run of `channels` values; on the
    // depth side it is run (h % b, w % b) of pixel (n, h / b, w / b).
    ParallelFor(ctx, pixels, static_cast<double>(run), static_cast<double>(channels),
                [&](int64_t begin, int64_t end) {
                  for (int64_t p = begin; p < end; ++p) {
                    const int64_t w = p % space_w, h = p / space_w % space_h;
                    const int64_t n = p / (space_w * space_h);
                    const int64_t pixel = (n * small_h + h / b) * small_w + w / b;
                    const int64_t depth_run = pixel * b * b + (h % b) * b + w % b;
                    if (kToDepth) {
                      std::memcpy(to + depth_run * run, from + p * run, run);
                    } else {
                      std::memcpy(to + p * run, from + depth_run * run, run);
                    }
                  }
                });
  }

 private:
  int64_t block_ = 0;
};

#define TW_REGISTER_SPACE_DEPTH(T)                               \
  TW_REGISTER_CPU_KERNEL("SpaceToDepth", T, SpaceDepthOp<true>); \
  TW_REGISTER_CPU_KERNEL("DepthToSpace", T, SpaceDepthOp<false>);
TW_FOR_EACH_POD(TW_REGISTER_SPACE_DEPTH)
#undef TW_REGISTER_SPACE_DEPTH

}  // namespace
}  // namespace tensorweave
