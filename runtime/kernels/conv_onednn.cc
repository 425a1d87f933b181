// Conv2D forward through oneDNN convolution primitives (see conv_onednn.h).
//
// Threads: as for the matrix products (gemm.cc), each primitive runs on one
// OpenMP thread and the work is split across our intra-op pool: a batch at
// least as large as the pool by blocks of whole images, a smaller one by
// blocks of output rows of each image. A block of rows is a convolution of
// its own: its input is the rows its windows read (a dense slice of the
// NHWC image) with the padding that falls inside the block. With a cached
// filter whose weights outnumber the input's values (ResNet's deeper layers
// at batch 1), a smaller batch is split by output channels instead: row
// blocks would each read every weight, and reading the weights is then most
// of the work.
//
// Primitives are cached per block problem (shape, strides, dilations,
// padding); the cache holds each primitive's weight reorder too. The
// filter is reordered into the primitive's blocked layout on every call
// unless the caller says it is a constant (ReorderedFilterCache): the
// kernel cannot tell a constant filter from a variable updated in place,
// and caching by address would give stale weights.
#include "runtime/kernels/conv_onednn.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unordered_map>
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

// A primitive ready to run, with the reorder of an HWIO filter into the
// layout it reads.
struct ConvPrimitive {
  dnnl::convolution_forward::primitive_desc descriptor;
  dnnl::convolution_forward convolution;
  dnnl::reorder weights_reorder;
  memory::desc user_weights;
  size_t scratchpad_bytes;
};

std::unique_ptr<ConvPrimitive> CreatePrimitive(const ConvProblem& p) {
  const memory::desc user_weights = p.WeightsDesc(memory::format_tag::hwio);
  const memory::desc bias({p.out_depth}, memory::data_type::f32, memory::format_tag::x);
  const auto kind = dnnl::prop_kind::forward_inference;
  const auto direct = dnnl::algorithm::convolution_direct;
  const memory::desc any_weights = p.WeightsDesc(memory::format_tag::any);
  const dnnl::convolution_forward::desc desc =
      p.with_bias ? dnnl::convolution_forward::desc(kind, direct, p.SrcDesc(), any_weights, bias,
                                                    p.DstDesc(), p.Strides(), p.Dilations(),
                                                    p.PadBefore(), p.PadAfter())
                  : dnnl::convolution_forward::desc(kind, direct, p.SrcDesc(), any_weights,
                                                    p.DstDesc(), p.Strides(), p.Dilations(),
                                                    p.PadBefore(), p.PadAfter());
  dnnl::primitive_attr attr;
  // The library's scratchpad is one global buffer unless oneDNN was built
  // for concurrent execution (Debian's OpenMP build is not): each call
  // brings its own.
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  attr.set_post_ops(onednn_conv::EpiloguePostOps(p));
  dnnl::convolution_forward::primitive_desc descriptor(desc, attr, Engine());
  const dnnl::reorder::primitive_desc reorder(Engine(), user_weights, Engine(),
                                              descriptor.weights_desc());
  return std::unique_ptr<ConvPrimitive>(
      new ConvPrimitive{descriptor, dnnl::convolution_forward(descriptor), dnnl::reorder(reorder),
                        user_weights, descriptor.scratchpad_desc().get_size()});
}

onednn_conv::PrimitiveCache<ConvPrimitive>& Cache() {
  static auto* cache = new onednn_conv::PrimitiveCache<ConvPrimitive>(CreatePrimitive);
  return *cache;
}

// A block of work: images [first_image, first_image + problem.batch) and,
// of each, output rows [first_row, first_row + problem.out_rows), reading
// input from element input_offset and writing from output_offset.
struct Block {
  ConvProblem problem;
  int64_t input_offset, output_offset;
  // A block of output channels [first_channel, first_channel +
  // problem.out_depth) of the whole batch, computed into a dense buffer of
  // its own and then copied into the output's channels.
  bool channel_part = false;
  int64_t first_channel = 0;
};

// Output channels per block when splitting them over `threads` pays: the
// filter (read once per block when splitting rows) is larger than the input
// (read once per block when splitting channels), and each part is a whole
// number of 16-channel vectors. 0 otherwise.
int64_t ChannelPart(const ConvGeometry& g, int64_t threads) {
  if (threads < 2 || g.out_depth % (16 * threads) != 0) return 0;
  const int64_t filter = g.filter_rows * g.filter_cols * g.in_depth * g.out_depth;
  const int64_t input = g.batch * g.in_rows * g.in_cols * g.in_depth;
  return filter > input ? g.out_depth / threads : 0;
}

// Output rows [row_begin, row_end) of `image`; false when those windows
// read no input row at all (all padding), which oneDNN cannot express.
bool RowBlock(const ConvGeometry& g, int64_t image, int64_t row_begin, int64_t row_end,
              Block* block) {
  const WindowAttrs& a = g.attrs;
  const int64_t span = (g.filter_rows - 1) * a.dilation_rows + 1;
  const int64_t start = row_begin * a.stride_rows - g.pad_rows;           // may be in the padding
  const int64_t end = (row_end - 1) * a.stride_rows - g.pad_rows + span;  // exclusive
  const int64_t first = std::max<int64_t>(0, start), last = std::min(g.in_rows, end);
  if (last <= first) return false;
  ConvProblem p = onednn_conv::WholeImages(g, 1);
  p.in_rows = last - first;
  p.out_rows = row_end - row_begin;
  p.pad_top = first - start;
  p.pad_bottom = end - last;
  const int64_t image_size = g.in_rows * g.in_cols * g.in_depth;
  block->problem = p;
  block->input_offset = image * image_size + first * g.in_cols * g.in_depth;
  block->output_offset = (image * g.out_rows + row_begin) * g.out_cols * g.out_depth;
  return true;
}

// One block per pool thread: whole images when the batch fills the pool,
// else rows of each image.
bool PlanBlocks(const OpKernelContext* ctx, const ConvGeometry& g, bool filter_cached,
                std::vector<Block>* blocks) {
  const Eigen::ThreadPoolDevice* pool = IntraOpPool(ctx);
  const double work = static_cast<double>(g.batch) * g.out_rows * g.out_cols * g.filter_rows *
                      g.filter_cols * g.in_depth * g.out_depth;
  const int64_t threads =
      (pool == nullptr || work < kInlineWorkCycles * 8) ? 1 : pool->numThreads();
  const int64_t image_output = g.out_rows * g.out_cols * g.out_depth;
  const int64_t image_input = g.in_rows * g.in_cols * g.in_depth;
  if (g.batch >= threads) {
    for (int64_t b = 0; b < threads; ++b) {
      const int64_t first = g.batch * b / threads, last = g.batch * (b + 1) / threads;
      blocks->push_back(Block{onednn_conv::WholeImages(g, last - first), first * image_input,
                              first * image_output});
    }
    return true;
  }
  const int64_t channels = filter_cached ? ChannelPart(g, threads) : 0;
  if (channels > 0) {
    for (int64_t part = 0; part < threads; ++part) {
      Block block{onednn_conv::WholeImages(g, g.batch), 0, 0, true, part * channels};
      block.problem.out_depth = channels;
      blocks->push_back(block);
    }
    return true;
  }
  const int64_t parts = std::min(threads, g.out_rows);
  for (int64_t image = 0; image < g.batch; ++image) {
    for (int64_t part = 0; part < parts; ++part) {
      Block block;
      if (!RowBlock(g, image, g.out_rows * part / parts, g.out_rows * (part + 1) / parts, &block)) {
        return false;
      }
      blocks->push_back(block);
    }
  }
  return true;
}

// Which shapes oneDNN computes faster, from bench/conv2d.py on this
// machine (2 cores, AVX2; best of 15 interleaved runs, load 9-10 from other
// processes; ms im2col -> oneDNN at batch 1 / batch 8):
//   96x96x3 3x3->16 /2 (MobileNetV2 stem)  0.25 -> 0.10 / 1.26 -> 0.42
//   70x70x3 7x7->64 /2 (ResNet50 stem)     0.44 -> 0.21 / 1.55 -> 1.01
//   16x16x64 3x3->64                       0.37 -> 0.23 / 2.26 -> 1.12
//   8x8x128 3x3->128                       0.35 -> 0.45 / 1.31 -> 1.80
//   2x2x512 3x3->512                       0.77 -> 5.4  / 3.15 -> 11.9
//   1x1 filters, any size                  1.0-1.3x slower, up to 10x
// A 1x1 filter with stride 1 is a plain matrix product without im2col's
// copy; the filter reorder, a pass over all the weights on each call, pays
// only when each weight is used at many output positions, and im2col's
// patch matrix is at its least efficient for a window over few channels.
// Windows of 5x5 and more win on smaller images too (CPU ms of one op,
// best of 10 interleaved runs, load 8-10; im2col -> oneDNN at batch 1 / 8 /
// 128):
//   14x14x32 5x5->64  (tutorial CNN)  0.38 -> 0.30 / 2.75 -> 1.84 / 44.8 -> 28.1
//   7x7x64 5x5->64                    0.41 -> 0.39 / 1.63 -> 1.58 / 17.9 -> 13.9
// while 3x3 windows over 64 to 196 positions are a toss-up:
//   8x8x128 3x3->128                  0.42 -> 0.59 / 2.13 -> 2.49 / 33.9 -> 36.9
//   14x14x32 3x3->64                  0.25 -> 0.16 / 1.07 -> 1.15 / 14.0 -> 11.5
bool FasterThroughOneDnn(const ConvGeometry& g) {
  const int64_t window = g.filter_rows * g.filter_cols;
  const int64_t positions = g.out_rows * g.out_cols;
  return window > 1 && (positions >= 256 || (window >= 25 && positions >= 49));
}

}  // namespace

// With the filter reordered once (a constant filter, ReorderedFilterCache)
// the reorder's cost above is gone, and oneDNN also runs the bias and
// activation as post-ops instead of a pass over the output. Measured on
// every Conv2D shape of MobileNetV2 and ResNet50 (bench/fused_conv_paths.py,
// Conv2D + BiasAdd + Relu with Const weights, best of 25 alternating runs,
// AVX-512 machine, load 9-10; oneDNN / im2col at batch 1 / batch 8):
//   70x70x3 7x7->64 /2        0.10 / 0.37    2x2x512 3x3->512      0.12 / 0.72
//   16x16x64 3x3->64          0.71 / 0.48    8x8x128 1x1->512      0.86 / 0.31
//   8x8x512 1x1->1024 /2      0.75 / 0.26    4x4x256 3x3->256      0.80 / 0.51
//   48x48x16 1x1->8           1.78 / 0.07    4x4x1024 1x1->2048 /2 1.16 / 0.75
//   6x6x144 1x1->24           1.24 / 1.02    2x2x2048 1x1->512     1.41 / 0.41-1.4
// The losses are a few microseconds of 1x1 products at batch 1 (or within
// the noise of the load), the gains up to 14x at batch 8: every shape goes
// to oneDNN.
bool OneDnnConv2DChosen(const ConvGeometry& g, bool filter_cached) {
  const char* forced = std::getenv("TW_CONV2D_PATH");
  if (forced != nullptr && std::strcmp(forced, "onednn") == 0) return true;
  if (forced != nullptr && std::strcmp(forced, "im2col") == 0) return false;
  return filter_cached || FasterThroughOneDnn(g);
}

const char* ReorderedFilterCache::Get(const dnnl::memory::desc& layout, int64_t first_channel,
                                      const std::function<void(char*)>& fill) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry& entry : entries_) {
    if (entry.layout == layout && entry.first_channel == first_channel) {
      return entry.buffer.get();
    }
  }
  onednn_conv::AlignedBuffer buffer = onednn_conv::AllocateAligned(layout.get_size());
  fill(buffer.get());
  entries_.push_back(Entry{layout, first_channel, std::move(buffer)});
  return entries_.back().buffer.get();
}

bool OneDnnConv2DForward(OpKernelContext* ctx, const ConvGeometry& g, const float* input,
                         const float* filter, float* output, const ConvEpilogue* epilogue,
                         ReorderedFilterCache* filter_cache) {
  UseOneOpenMpThread();
  std::vector<Block> blocks;
  if (!PlanBlocks(ctx, g, filter_cache != nullptr, &blocks)) return false;
  std::vector<std::shared_ptr<const ConvPrimitive>> primitives;
  for (Block& block : blocks) {
    if (epilogue != nullptr) {
      block.problem.with_bias = epilogue->bias != nullptr;
      block.problem.with_sum = epilogue->addend != nullptr;
      block.problem.activation = epilogue->activation;
      block.problem.alpha = epilogue->alpha;
    }
    primitives.push_back(Cache().Get(block.problem));
    if (primitives.back() == nullptr) return false;
  }
  try {
    // The filter in each layout the blocks' primitives read (row blocks of
    // different heights may choose different kernels).
    char* first_layout = nullptr;  // the common case: one layout for all blocks
    std::vector<AlignedBuffer> layouts;
    std::vector<const char*> block_weights;
    dnnl::stream stream(Engine());
    for (size_t b = 0; b < blocks.size(); ++b) {
      const memory::desc wanted = primitives[b]->descriptor.weights_desc();
      size_t same = 0;
      while (same < b && (primitives[same]->descriptor.weights_desc() != wanted ||
                          blocks[same].first_channel != blocks[b].first_channel)) {
        ++same;
      }
      if (same < b) {
        block_weights.push_back(block_weights[same]);
        continue;
      }
      const auto reorder = [&](char* layout_buffer) {
        float* reordered_filter = reinterpret_cast<float*>(layout_buffer);
        if (blocks[b].channel_part) {
          // The block's output channels of the HWIO filter: a strided view.
          const ConvProblem& p = blocks[b].problem;
          const memory::desc slice(
              {p.out_depth, p.in_depth, p.filter_rows, p.filter_cols}, memory::data_type::f32,
              memory::dims{1, g.out_depth, p.filter_cols * p.in_depth * g.out_depth,
                           p.in_depth * g.out_depth});
          memory user(slice, Engine(), const_cast<float*>(filter + blocks[b].first_channel));
          memory reordered(wanted, Engine(), reordered_filter);
          dnnl::reorder(user, reordered).execute(stream, user, reordered);
          stream.wait();
        } else if (!onednn_conv::ReorderHwioFilter(blocks[b].problem, filter, wanted,
                                                   reordered_filter)) {
          memory user(primitives[b]->user_weights, Engine(), const_cast<float*>(filter));
          memory reordered(wanted, Engine(), reordered_filter);
          primitives[b]->weights_reorder.execute(stream, user, reordered);
          stream.wait();
        }
      };
      if (filter_cache != nullptr) {
        block_weights.push_back(filter_cache->Get(wanted, blocks[b].first_channel, reorder));
        continue;
      }
      char* layout_buffer = nullptr;
      if (first_layout == nullptr) {
        first_layout = onednn_conv::ThreadBuffer(onednn_conv::kFilterSlot, wanted.get_size());
        layout_buffer = first_layout;
      } else {
        layouts.push_back(onednn_conv::AllocateAligned(wanted.get_size()));
        layout_buffer = layouts.back().get();
      }
      reorder(layout_buffer);
      block_weights.push_back(layout_buffer);
    }
    // Channel blocks' outputs, copied into the output's channels after.
    std::vector<AlignedBuffer> parts(blocks.size());
    for (size_t b = 0; b < blocks.size(); ++b) {
      if (blocks[b].channel_part) {
        parts[b] = onednn_conv::AllocateAligned(primitives[b]->descriptor.dst_desc().get_size());
      }
    }
    std::atomic<bool> failed{false};
    const float* bias = epilogue != nullptr ? epilogue->bias : nullptr;
    const float* addend = epilogue != nullptr ? epilogue->addend : nullptr;
    // The sum post-op reads the addend from the block's destination: copied
    // there first, by the thread about to convolve it (still in its cache).
    auto prefill = [&](size_t b) {
      const ConvProblem& p = blocks[b].problem;
      if (blocks[b].channel_part) {
        float* part = reinterpret_cast<float*>(parts[b].get());
        const int64_t pixels = g.batch * g.out_rows * g.out_cols;
        for (int64_t pixel = 0; pixel < pixels; ++pixel) {
          std::memcpy(part + pixel * p.out_depth,
                      addend + pixel * g.out_depth + blocks[b].first_channel,
                      p.out_depth * sizeof(float));
        }
      } else if (output != addend) {
        const int64_t count = p.batch * p.out_rows * p.out_cols * p.out_depth;
        std::memcpy(output + blocks[b].output_offset, addend + blocks[b].output_offset,
                    count * sizeof(float));
      }
    };
    auto run = [&](size_t b) {
      UseOneOpenMpThread();
      const ConvPrimitive& primitive = *primitives[b];
      const auto& d = primitive.descriptor;
      char* scratchpad =
          onednn_conv::ThreadBuffer(onednn_conv::kScratchpadSlot, primitive.scratchpad_bytes);
      try {
        if (addend != nullptr) prefill(b);
        dnnl::stream block_stream(Engine());
        std::unordered_map<int, memory> args = {
            {DNNL_ARG_SRC,
             memory(d.src_desc(), Engine(), const_cast<float*>(input + blocks[b].input_offset))},
            {DNNL_ARG_WEIGHTS,
             memory(d.weights_desc(), Engine(), const_cast<char*>(block_weights[b]))},
            {DNNL_ARG_DST, memory(d.dst_desc(), Engine(),
                                  blocks[b].channel_part ? reinterpret_cast<float*>(parts[b].get())
                                                         : output + blocks[b].output_offset)},
            {DNNL_ARG_SCRATCHPAD, memory(d.scratchpad_desc(), Engine(), scratchpad)}};
        if (bias != nullptr) {
          float* block_bias = const_cast<float*>(bias + blocks[b].first_channel);
          args.emplace(DNNL_ARG_BIAS, memory(d.bias_desc(), Engine(), block_bias));
        }
        primitive.convolution.execute(block_stream, args);
        block_stream.wait();
        if (blocks[b].channel_part) {
          const int64_t channels = blocks[b].problem.out_depth;
          const float* part = reinterpret_cast<const float*>(parts[b].get());
          const int64_t pixels = g.batch * g.out_rows * g.out_cols;
          for (int64_t pixel = 0; pixel < pixels; ++pixel) {
            std::memcpy(output + pixel * g.out_depth + blocks[b].first_channel,
                        part + pixel * channels, channels * sizeof(float));
          }
        }
      } catch (const dnnl::error&) {
        failed = true;  // on a pool thread: reported through the flag
      }
    };
    if (blocks.size() == 1) {
      run(0);
    } else {
      IntraOpPool(ctx)->parallelFor(static_cast<Eigen::Index>(blocks.size()),
                                    Eigen::TensorOpCost(0, 0, 1e9),
                                    [&](Eigen::Index begin, Eigen::Index end) {
                                      for (Eigen::Index b = begin; b < end; ++b) run(b);
                                    });
    }
    return !failed;  // when false, the caller computes the whole output again
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace tensorweave
