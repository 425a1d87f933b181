// DepthwiseConv2dNative forward through oneDNN (see depthwise_onednn.h).
//
// The problem is a ConvProblem (in_depth channels in, in_depth * multiplier
// out) keyed in a primitive cache of its own. The [rows, cols, in_depth,
// multiplier] filter is oneDNN's grouped weights {groups = in_depth,
// multiplier, 1, rows, cols} read through strides, reordered on each call
// into the primitive's layout: it is small (MobileNetV2's largest holds
// 3 x 3 x 336 values), so unlike Conv2D's no cache is needed.
//
// Geometries for which oneDNN only has its reference implementation are
// refused (the loops are faster).
//
// Threads: each primitive runs on one OpenMP thread (gemm.h's
// UseOneOpenMpThread); a batch at least as large as the intra-op pool is
// split into blocks of whole images, a smaller one runs as one block.
//
// Measured (MobileNetV2's depthwise + BiasAdd + Relu6 shapes, AVX-512
// machine, load 9; the loops of depthwise_conv_op.cc on the pool, as a
// step's time minus the same step without the op, against oneDNN's
// primitive on one thread alone, best of 200 and 30 runs):
//   n8 49x49x48 3x3 /2   1.56 ms -> 0.096 ms    n8 24x24x48    0.38 -> 0.084
//   n8 12x12x96          0.22    -> 0.040       n8 6x6x144     0.087 -> 0.015
//   n1 49x49x48 /2       0.091   -> 0.011       n1 12x12x96    0.032 -> 0.005
#include "runtime/kernels/depthwise_onednn.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/kernels/conv_onednn_common.h"
#include "runtime/kernels/gemm.h"

// For the pool's thread count and parallelFor.
#include <unsupported/Eigen/CXX11/Tensor>

namespace tensorweave {
namespace {

using dnnl::memory;
using onednn_conv::ConvProblem;
using onednn_conv::Engine;

struct DepthwisePrimitive {
  dnnl::convolution_forward::primitive_desc descriptor;
  dnnl::convolution_forward convolution;
  dnnl::reorder weights_reorder;
  memory::desc user_weights;
  size_t scratchpad_bytes;
};

// The filter as oneDNN's grouped weights, in the [rows, cols, in_depth,
// multiplier] order it is stored in (element (g, m, 0, h, w) at
// ((h * cols + w) * in_depth + g) * multiplier + m), or `any` layout.
memory::desc DepthwiseWeights(const ConvProblem& p, bool any) {
  const int64_t multiplier = p.out_depth / p.in_depth;
  const memory::dims dims = {p.in_depth, multiplier, 1, p.filter_rows, p.filter_cols};
  if (any) return memory::desc(dims, memory::data_type::f32, memory::format_tag::any);
  return memory::desc(dims, memory::data_type::f32,
                      memory::dims{multiplier, 1, 1, p.filter_cols * p.out_depth, p.out_depth});
}

std::unique_ptr<DepthwisePrimitive> CreateDepthwisePrimitive(const ConvProblem& p) {
  const memory::desc bias({p.out_depth}, memory::data_type::f32, memory::format_tag::x);
  const auto kind = dnnl::prop_kind::forward_inference;
  const auto direct = dnnl::algorithm::convolution_direct;
  const memory::desc weights = DepthwiseWeights(p, true);
  const dnnl::convolution_forward::desc desc =
      p.with_bias
          ? dnnl::convolution_forward::desc(kind, direct, p.SrcDesc(), weights, bias, p.DstDesc(),
                                            p.Strides(), p.Dilations(), p.PadBefore(), p.PadAfter())
          : dnnl::convolution_forward::desc(kind, direct, p.SrcDesc(), weights, p.DstDesc(),
                                            p.Strides(), p.Dilations(), p.PadBefore(),
                                            p.PadAfter());
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // as conv_onednn.cc: one per call
  attr.set_post_ops(onednn_conv::EpiloguePostOps(p));
  dnnl::convolution_forward::primitive_desc descriptor(desc, attr, Engine());
  // oneDNN's reference implementation (what it falls back to for, e.g., a
  // channel multiplier of 2) is slower than our loops: refuse it.
  if (std::string(descriptor.impl_info_str()).rfind("ref", 0) == 0) return nullptr;
  const memory::desc user_weights = DepthwiseWeights(p, false);
  const dnnl::reorder::primitive_desc reorder(Engine(), user_weights, Engine(),
                                              descriptor.weights_desc());
  return std::unique_ptr<DepthwisePrimitive>(new DepthwisePrimitive{
      descriptor, dnnl::convolution_forward(descriptor), dnnl::reorder(reorder), user_weights,
      descriptor.scratchpad_desc().get_size()});
}

onednn_conv::PrimitiveCache<DepthwisePrimitive>& Cache() {
  static auto* cache =
      new onednn_conv::PrimitiveCache<DepthwisePrimitive>(CreateDepthwisePrimitive);
  return *cache;
}

// Padding after the last element so that oneDNN's output size (a floor
// division) is TensorFlow's.
ConvProblem ImagesProblem(const DepthwiseGeometry& g, int64_t images, const ConvEpilogue* e) {
  ConvProblem p = onednn_conv::WholeImages(g, images);
  if (e != nullptr) {
    p.with_bias = e->bias != nullptr;
    p.activation = e->activation;
    p.alpha = e->alpha;
  }
  return p;
}

}  // namespace

bool OneDnnDepthwiseForward(OpKernelContext* ctx, const DepthwiseGeometry& g, const float* input,
                            const float* filter, float* output, const ConvEpilogue* epilogue) {
  // A channel multiplier above 1 is a general grouped convolution to oneDNN
  // (its "jit" kernel, 1.05 ms on n8 24x24x48 x2 where the depthwise one
  // takes 0.083 ms at x1): measured no faster than the loops, left to them.
  if (g.multiplier != 1) return false;
  UseOneOpenMpThread();
  const Eigen::ThreadPoolDevice* pool = IntraOpPool(ctx);
  const double work = static_cast<double>(g.batch) * g.out_rows * g.out_cols * g.out_depth *
                      g.filter_rows * g.filter_cols;
  const int64_t threads =
      (pool == nullptr || work < kInlineWorkCycles * 8) ? 1 : pool->numThreads();
  const int64_t blocks = g.batch >= threads ? threads : 1;
  // Block b holds images [first[b], first[b + 1]).
  std::vector<int64_t> first(blocks + 1);
  for (int64_t b = 0; b <= blocks; ++b) first[b] = g.batch * b / blocks;
  std::vector<std::shared_ptr<const DepthwisePrimitive>> primitives;
  for (int64_t b = 0; b < blocks; ++b) {
    primitives.push_back(Cache().Get(ImagesProblem(g, first[b + 1] - first[b], epilogue)));
    if (primitives.back() == nullptr) return false;
  }
  try {
    // The filter in each block's layout (blocks of different sizes may
    // choose different kernels).
    std::vector<onednn_conv::AlignedBuffer> weights;
    dnnl::stream stream(Engine());
    for (int64_t b = 0; b < blocks; ++b) {
      const memory::desc wanted = primitives[b]->descriptor.weights_desc();
      weights.push_back(onednn_conv::AllocateAligned(wanted.get_size()));
      memory user(primitives[b]->user_weights, Engine(), const_cast<float*>(filter));
      memory reordered(wanted, Engine(), weights.back().get());
      primitives[b]->weights_reorder.execute(stream, user, reordered);
    }
    stream.wait();
    const int64_t image_input = g.in_rows * g.in_cols * g.in_depth;
    const int64_t image_output = g.out_rows * g.out_cols * g.out_depth;
    const float* bias = epilogue != nullptr ? epilogue->bias : nullptr;
    std::atomic<bool> failed{false};
    auto run = [&](int64_t b) {
      UseOneOpenMpThread();
      const DepthwisePrimitive& primitive = *primitives[b];
      const auto& d = primitive.descriptor;
      char* scratchpad =
          onednn_conv::ThreadBuffer(onednn_conv::kScratchpadSlot, primitive.scratchpad_bytes);
      try {
        dnnl::stream block_stream(Engine());
        std::unordered_map<int, memory> args = {
            {DNNL_ARG_SRC,
             memory(d.src_desc(), Engine(), const_cast<float*>(input + first[b] * image_input))},
            {DNNL_ARG_WEIGHTS, memory(d.weights_desc(), Engine(), weights[b].get())},
            {DNNL_ARG_DST, memory(d.dst_desc(), Engine(), output + first[b] * image_output)},
            {DNNL_ARG_SCRATCHPAD, memory(d.scratchpad_desc(), Engine(), scratchpad)}};
        if (bias != nullptr) {
          args.emplace(DNNL_ARG_BIAS, memory(d.bias_desc(), Engine(), const_cast<float*>(bias)));
        }
        primitive.convolution.execute(block_stream, args);
        block_stream.wait();
      } catch (const dnnl::error&) {
        failed = true;  // on a pool thread: reported through the flag
      }
    };
    if (blocks == 1) {
      run(0);
    } else {
      pool->parallelFor(static_cast<Eigen::Index>(blocks), Eigen::TensorOpCost(0, 0, 1e9),
                        [&](Eigen::Index begin, Eigen::Index end) {
                          for (Eigen::Index b = begin; b < end; ++b) run(b);
                        });
    }
    return !failed;
  } catch (const dnnl::error&) {
    return false;
  }
}

}  // namespace tensorweave
