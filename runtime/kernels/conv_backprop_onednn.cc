// Conv2D's backprops through oneDNN (see conv_backprop_onednn.h).
//
// Both backprops need the forward convolution's description as a hint for
// the primitive; the problems are cached as the forward's are
// (conv_onednn_common.h), each with the reorder between the HWIO filter and
// the blocked layout its primitive chose.
#include "runtime/kernels/conv_backprop_onednn.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/kernels/conv_onednn_common.h"
#include "runtime/kernels/gemm.h"

// For the pool's thread count and parallelFor.
#include <unsupported/Eigen/CXX11/Tensor>

namespace tensorweave {
namespace {

using dnnl::memory;
using onednn_conv::AlignedBuffer;
using onednn_conv::ConvProblem;
using onednn_conv::Engine;

dnnl::convolution_forward::primitive_desc ForwardHint(const ConvProblem& p) {
  const dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, p.SrcDesc(),
      p.WeightsDesc(memory::format_tag::any), p.DstDesc(), p.Strides(), p.Dilations(),
      p.PadBefore(), p.PadAfter());
  return dnnl::convolution_forward::primitive_desc(desc, Engine());
}

// The scratchpad of each call is its own (see conv_onednn.cc).
dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

struct BackwardDataPrimitive {
  dnnl::convolution_backward_data::primitive_desc descriptor;
  dnnl::convolution_backward_data primitive;
  dnnl::reorder weights_reorder;  // HWIO -> the primitive's layout
};

std::unique_ptr<BackwardDataPrimitive> CreateBackwardData(const ConvProblem& p) {
  const dnnl::convolution_backward_data::desc desc(
      dnnl::algorithm::convolution_direct, p.SrcDesc(), p.WeightsDesc(memory::format_tag::any),
      p.DstDesc(), p.Strides(), p.Dilations(), p.PadBefore(), p.PadAfter());
  dnnl::convolution_backward_data::primitive_desc descriptor(desc, UserScratchpad(), Engine(),
                                                             ForwardHint(p));
  const dnnl::reorder::primitive_desc reorder(Engine(), p.WeightsDesc(memory::format_tag::hwio),
                                              Engine(), descriptor.weights_desc());
  return std::unique_ptr<BackwardDataPrimitive>(new BackwardDataPrimitive{
      descriptor, dnnl::convolution_backward_data(descriptor), dnnl::reorder(reorder)});
}

struct BackwardWeightsPrimitive {
  dnnl::convolution_backward_weights::primitive_desc descriptor;
  dnnl::convolution_backward_weights primitive;
  dnnl::reorder weights_reorder;  // the primitive's layout -> HWIO
};

std::unique_ptr<BackwardWeightsPrimitive> CreateBackwardWeights(const ConvProblem& p) {
  const dnnl::convolution_backward_weights::desc desc(
      dnnl::algorithm::convolution_direct, p.SrcDesc(), p.WeightsDesc(memory::format_tag::any),
      p.DstDesc(), p.Strides(), p.Dilations(), p.PadBefore(), p.PadAfter());
  dnnl::convolution_backward_weights::primitive_desc descriptor(desc, UserScratchpad(), Engine(),
                                                                ForwardHint(p));
  const dnnl::reorder::primitive_desc reorder(Engine(), descriptor.diff_weights_desc(), Engine(),
                                              p.WeightsDesc(memory::format_tag::hwio));
  return std::unique_ptr<BackwardWeightsPrimitive>(new BackwardWeightsPrimitive{
      descriptor, dnnl::convolution_backward_weights(descriptor), dnnl::reorder(reorder)});
}

onednn_conv::PrimitiveCache<BackwardDataPrimitive>& DataCache() {
  static auto* cache = new onednn_conv::PrimitiveCache<BackwardDataPrimitive>(CreateBackwardData);
  return *cache;
}

onednn_conv::PrimitiveCache<BackwardWeightsPrimitive>& WeightsCache() {
  static auto* cache =
      new onednn_conv::PrimitiveCache<BackwardWeightsPrimitive>(CreateBackwardWeights);
  return *cache;
}

// Images [first, first + problem.batch) of the batch.
struct ImageBlock {
  ConvProblem problem;
  int64_t first;
};

// Threads worth using: one unless the pool exists and the work is large.
int64_t UsefulThreads(const OpKernelContext* ctx, const ConvGeometry& g) {
  const Eigen::ThreadPoolDevice* pool = IntraOpPool(ctx);
  const double work = static_cast<double>(g.batch) * g.out_rows * g.out_cols * g.filter_rows *
                      g.filter_cols * g.in_depth * g.out_depth;
  return (pool == nullptr || work < kInlineWorkCycles * 8) ? 1 : pool->numThreads();
}

// Whole images per block, at most one block per thread.
std::vector<ImageBlock> PlanImageBlocks(const OpKernelContext* ctx, const ConvGeometry& g) {
  const int64_t blocks = std::max<int64_t>(1, std::min(UsefulThreads(ctx, g), g.batch));
  std::vector<ImageBlock> plan;
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t first = g.batch * b / blocks, last = g.batch * (b + 1) / blocks;
    plan.push_back(ImageBlock{onednn_conv::WholeImages(g, last - first), first});
  }
  return plan;
}

// Runs fn(b) for each block, on the pool when there are several; false
// when any call threw.
template <typename Fn>
bool RunBlocks(OpKernelContext* ctx, size_t count, Fn&& fn) {
  std::atomic<bool> failed{false};
  auto run = [&](size_t b) {
    UseOneOpenMpThread();
    try {
      fn(b);
    } catch (const dnnl::error&) {
      failed = true;  // on a pool thread: reported through the flag
    }
  };
  if (count == 1) {
    run(0);
  } else {
    IntraOpPool(ctx)->parallelFor(static_cast<Eigen::Index>(count), Eigen::TensorOpCost(0, 0, 1e9),
                                  [&](Eigen::Index begin, Eigen::Index end) {
                                    for (Eigen::Index b = begin; b < end; ++b) run(b);
                                  });
  }
  return !failed;
}

// Which shapes the oneDNN backprops compute faster, measured on this
// machine (2 cores, AVX2 — oneDNN 2.6.3 dispatches jit:avx2) with the load
// of other processes at 11: CPU ms of one op, best of 10 interleaved runs,
// im2col -> oneDNN, at batch 8 / batch 32:
//   input  16x16x64 3x3->64     2.98 -> 2.18 / 10.62 ->  8.68
//   input  8x8x128 3x3->128     2.46 -> 1.92 /  8.45 ->  6.90
//   input  14x14x32 5x5->64     2.45 -> 1.68 / 11.15 ->  6.87
//   input  32x32x32 3x3->64     5.23 -> 4.83 / 18.34 -> 18.27
//   input  28x28x1 5x5->32      0.48 -> 1.39 /  1.79 ->  5.55 (one input channel)
//   filter 16x16x64 3x3->64     2.59 -> 2.34 /  9.68 ->  9.29
//   filter 14x14x32 5x5->64     2.87 -> 2.16 / 10.65 ->  8.55
//   filter 28x28x1 5x5->32      0.66 -> 0.35 /  1.25 ->  0.72
//   filter 32x32x32 3x3->64     4.72 -> 4.89 / 18.95 -> 20.42
// and at batch 128 (wall ms, bench/conv2d.py --shapes tutorial): input
// 14x14x32 5x5->64 120.7 -> 77.9, filter 129.7 -> 85.0, filter 28x28x1
// 5x5->32 20.8 -> 8.4. So: windows over more than one pixel with enough
// output positions per image (1x1 filters are plain matrix products for
// im2col too); the input gradient also wants input channels to fill
// oneDNN's block of 8; the batch must fill the pool, since a block is whole
// images. `input_gradient` says which backprop asks.
bool FasterThroughOneDnn(const OpKernelContext* ctx, const ConvGeometry& g, bool input_gradient) {
  const int64_t window = g.filter_rows * g.filter_cols;
  if (input_gradient && g.in_depth < 8) return false;
  return window > 1 && g.out_rows * g.out_cols >= 64 && g.batch >= UsefulThreads(ctx, g);
}

}  // namespace

bool OneDnnConv2DBackpropChosen(const OpKernelContext* ctx, const ConvGeometry& g,
                                bool input_gradient) {
  const char* forced = std::getenv("TW_CONV2D_PATH");
  if (forced != nullptr && std::strcmp(forced, "onednn") == 0) return true;
  if (forced != nullptr && std::strcmp(forced, "im2col") == 0) return false;
  return FasterThroughOneDnn(ctx, g, input_gradient);
}

bool OneDnnConv2DBackpropInput(OpKernelContext* ctx, const ConvGeometry& g,
                               const float* out_backprop, const float* filter, float* in_backprop) {
  UseOneOpenMpThread();
  const std::vector<ImageBlock> blocks = PlanImageBlocks(ctx, g);
  std::vector<std::shared_ptr<const BackwardDataPrimitive>> primitives;
  for (const ImageBlock& block : blocks) {
    primitives.push_back(DataCache().Get(block.problem));
    if (primitives.back() == nullptr) return false;
  }
  try {
    // The filter in the layout each block's primitive reads (blocks of
    // different sizes may choose different layouts).
    std::vector<AlignedBuffer> layouts;
    std::vector<const char*> block_weights;
    dnnl::stream stream(Engine());
    for (size_t b = 0; b < blocks.size(); ++b) {
      const memory::desc wanted = primitives[b]->descriptor.weights_desc();
      size_t same = 0;
      while (same < b && primitives[same]->descriptor.weights_desc() != wanted) ++same;
      if (same < b) {
        block_weights.push_back(block_weights[same]);
        continue;
      }
      char* buffer = b == 0 ? onednn_conv::ThreadBuffer(onednn_conv::kFilterSlot, wanted.get_size())
                            : (layouts.push_back(onednn_conv::AllocateAligned(wanted.get_size())),
                               layouts.back().get());
      if (!onednn_conv::ReorderHwioFilter(blocks[b].problem, filter, wanted,
                                          reinterpret_cast<float*>(buffer))) {
        memory user(blocks[b].problem.WeightsDesc(memory::format_tag::hwio), Engine(),
                    const_cast<float*>(filter));
        memory reordered(wanted, Engine(), buffer);
        primitives[b]->weights_reorder.execute(stream, user, reordered);
      }
      block_weights.push_back(buffer);
    }
    stream.wait();
    const int64_t in_image = g.in_rows * g.in_cols * g.in_depth;
    const int64_t out_image = g.out_rows * g.out_cols * g.out_depth;
    return RunBlocks(ctx, blocks.size(), [&](size_t b) {
      const BackwardDataPrimitive& primitive = *primitives[b];
      const auto& d = primitive.descriptor;
      char* scratchpad =
          onednn_conv::ThreadBuffer(onednn_conv::kScratchpadSlot, d.scratchpad_desc().get_size());
      dnnl::stream block_stream(Engine());
      primitive.primitive.execute(
          block_stream, {{DNNL_ARG_DIFF_DST,
                          memory(d.diff_dst_desc(), Engine(),
                                 const_cast<float*>(out_backprop) + blocks[b].first * out_image)},
                         {DNNL_ARG_WEIGHTS,
                          memory(d.weights_desc(), Engine(), const_cast<char*>(block_weights[b]))},
                         {DNNL_ARG_DIFF_SRC, memory(d.diff_src_desc(), Engine(),
                                                    in_backprop + blocks[b].first * in_image)},
                         {DNNL_ARG_SCRATCHPAD, memory(d.scratchpad_desc(), Engine(), scratchpad)}});
      block_stream.wait();
    });
  } catch (const dnnl::error&) {
    return false;
  }
}

bool OneDnnConv2DBackpropFilter(OpKernelContext* ctx, const ConvGeometry& g, const float* input,
                                const float* out_backprop, float* filter_backprop) {
  UseOneOpenMpThread();
  const std::vector<ImageBlock> blocks = PlanImageBlocks(ctx, g);
  std::vector<std::shared_ptr<const BackwardWeightsPrimitive>> primitives;
  for (const ImageBlock& block : blocks) {
    primitives.push_back(WeightsCache().Get(block.problem));
    if (primitives.back() == nullptr) return false;
  }
  const int64_t filter_size = g.filter_rows * g.filter_cols * g.in_depth * g.out_depth;
  const int64_t in_image = g.in_rows * g.in_cols * g.in_depth;
  const int64_t out_image = g.out_rows * g.out_cols * g.out_depth;
  // Block 0 writes the output itself; the others their own HWIO sums,
  // added in block order afterwards.
  std::vector<AlignedBuffer> partial_sums(blocks.size());
  for (size_t b = 1; b < blocks.size(); ++b) {
    partial_sums[b] = onednn_conv::AllocateAligned(filter_size * sizeof(float));
  }
  const bool done = RunBlocks(ctx, blocks.size(), [&](size_t b) {
    const BackwardWeightsPrimitive& primitive = *primitives[b];
    const auto& d = primitive.descriptor;
    char* scratchpad =
        onednn_conv::ThreadBuffer(onednn_conv::kScratchpadSlot, d.scratchpad_desc().get_size());
    AlignedBuffer blocked = onednn_conv::AllocateAligned(d.diff_weights_desc().get_size());
    float* hwio = b == 0 ? filter_backprop : reinterpret_cast<float*>(partial_sums[b].get());
    dnnl::stream block_stream(Engine());
    memory diff_weights(d.diff_weights_desc(), Engine(), blocked.get());
    primitive.primitive.execute(
        block_stream,
        {{DNNL_ARG_SRC,
          memory(d.src_desc(), Engine(), const_cast<float*>(input) + blocks[b].first * in_image)},
         {DNNL_ARG_DIFF_DST,
          memory(d.diff_dst_desc(), Engine(),
                 const_cast<float*>(out_backprop) + blocks[b].first * out_image)},
         {DNNL_ARG_DIFF_WEIGHTS, diff_weights},
         {DNNL_ARG_SCRATCHPAD, memory(d.scratchpad_desc(), Engine(), scratchpad)}});
    memory user(blocks[b].problem.WeightsDesc(memory::format_tag::hwio), Engine(), hwio);
    primitive.weights_reorder.execute(block_stream, diff_weights, user);
    block_stream.wait();
  });
  if (!done) return false;
  for (size_t b = 1; b < blocks.size(); ++b) {
    const float* sum = reinterpret_cast<const float*>(partial_sums[b].get());
    for (int64_t i = 0; i < filter_size; ++i) filter_backprop[i] += sum[i];
  }
  return true;
}

}  // namespace tensorweave
