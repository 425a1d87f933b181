// Pieces shared by the oneDNN convolution kernels (conv_onednn.cc forward,
// conv_backprop_onednn.cc backprops, fused_conv_ops.cc): the CPU engine, a
// convolution problem in oneDNN's terms, per-thread buffers, the HWIO filter
// reorder and a bounded primitive cache.
//
//   onednn_conv::ConvProblem p = onednn_conv::WholeImages(g, g.batch);
//   static onednn_conv::PrimitiveCache<MyPrimitive> cache(CreateMyPrimitive);
//   std::shared_ptr<const MyPrimitive> primitive = cache.Get(p);  // null: refused
#ifndef TENSORWEAVE_KERNELS_CONV_ONEDNN_COMMON_H_
#define TENSORWEAVE_KERNELS_CONV_ONEDNN_COMMON_H_

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <tuple>

#include "runtime/framework/conv_geometry.h"

namespace tensorweave {
namespace onednn_conv {

const dnnl::engine& Engine();

// An activation applied to a convolution's output (with its bias) by the
// forward primitive itself (_FusedConv2D's fused_ops).
enum class Activation { kNone, kRelu, kRelu6, kElu, kLeakyRelu };

// The convolution of one block of work, in NHWC terms, with its epilogue.
struct ConvProblem {
  int64_t batch, in_rows, in_cols, in_depth;
  int64_t out_rows, out_cols, out_depth;
  int64_t filter_rows, filter_cols;
  int64_t stride_rows, stride_cols, dilation_rows, dilation_cols;
  int64_t pad_top, pad_bottom, pad_left, pad_right;
  bool with_bias = false;
  // A sum post-op: the destination holds an addend on entry, added to the
  // convolution and bias before the activation (residual blocks).
  bool with_sum = false;
  Activation activation = Activation::kNone;
  float alpha = 0;  // LeakyRelu's slope

  auto Tie() const {
    return std::tie(batch, in_rows, in_cols, in_depth, out_rows, out_cols, out_depth, filter_rows,
                    filter_cols, stride_rows, stride_cols, dilation_rows, dilation_cols, pad_top,
                    pad_bottom, pad_left, pad_right, with_bias, with_sum, activation, alpha);
  }
  bool operator<(const ConvProblem& other) const { return Tie() < other.Tie(); }

  // oneDNN's descriptions of the problem's tensors (filter as HWIO, or
  // `any` layout for the primitive to choose).
  dnnl::memory::desc SrcDesc() const;
  dnnl::memory::desc DstDesc() const;
  dnnl::memory::desc WeightsDesc(dnnl::memory::format_tag tag) const;
  dnnl::memory::dims Strides() const { return {stride_rows, stride_cols}; }
  // oneDNN counts dilation from 0 (no gap); TensorFlow from 1.
  dnnl::memory::dims Dilations() const { return {dilation_rows - 1, dilation_cols - 1}; }
  dnnl::memory::dims PadBefore() const { return {pad_top, pad_left}; }
  dnnl::memory::dims PadAfter() const { return {pad_bottom, pad_right}; }
};

// The padding after the input (bottom or right) that a window of `window`
// taps at `dilation` and `stride`, with `pad_before` before, needs for
// `output` positions over `input` values; at least 0.
int64_t PaddingAfter(int64_t input, int64_t output, int64_t window, int64_t dilation,
                     int64_t stride, int64_t pad_before);

// The whole geometry over `images` images, for any geometry with
// ConvGeometry's fields (ConvGeometry, DepthwiseGeometry).
template <typename Geometry>
ConvProblem WholeImages(const Geometry& g, int64_t images) {
  const auto& a = g.attrs;
  return ConvProblem{images,
                     g.in_rows,
                     g.in_cols,
                     g.in_depth,
                     g.out_rows,
                     g.out_cols,
                     g.out_depth,
                     g.filter_rows,
                     g.filter_cols,
                     a.stride_rows,
                     a.stride_cols,
                     a.dilation_rows,
                     a.dilation_cols,
                     g.pad_rows,
                     PaddingAfter(g.in_rows, g.out_rows, g.filter_rows, a.dilation_rows,
                                  a.stride_rows, g.pad_rows),
                     g.pad_cols,
                     PaddingAfter(g.in_cols, g.out_cols, g.filter_cols, a.dilation_cols,
                                  a.stride_cols, g.pad_cols)};
}

// The problem's epilogue as oneDNN post-ops: the sum with the destination's
// prior contents (with_sum), then the activation as an eltwise post-op (the
// bias is the primitive's own input).
dnnl::post_ops EpiloguePostOps(const ConvProblem& p);

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<char, FreeDeleter>;
AlignedBuffer AllocateAligned(size_t bytes);

// A 64-byte aligned buffer of at least `bytes` kept by the calling thread
// for its next calls, one per slot (kFilterSlot .. kSlots - 1): the
// reordered filter is up to 9 MB (ResNet50), and a fresh allocation of that
// size is a fresh mapping whose page faults cost more than the reorder.
enum BufferSlot { kFilterSlot = 0, kScratchpadSlot = 1, kSlots = 2 };
char* ThreadBuffer(BufferSlot slot, size_t bytes);

// Writes an HWIO filter into `layout` (a blocked layout oneDNN's AVX2
// kernels choose) with plain loops; false when `layout` is not one of the
// two it knows (the caller then uses oneDNN's reorder).
bool ReorderHwioFilter(const ConvProblem& p, const float* filter, const dnnl::memory::desc& layout,
                       float* out);

// Primitives by problem, created on first use; a problem oneDNN refused
// maps to null. Bounded: a program with ever new shapes starts over rather
// than growing.
template <typename Primitive>
class PrimitiveCache {
 public:
  using Create = std::function<std::unique_ptr<Primitive>(const ConvProblem&)>;
  explicit PrimitiveCache(Create create) : create_(std::move(create)) {}

  std::shared_ptr<const Primitive> Get(const ConvProblem& problem) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = primitives_.find(problem);
      if (it != primitives_.end()) return it->second;
    }
    std::shared_ptr<const Primitive> created;
    try {
      created = create_(problem);
    } catch (const dnnl::error&) {
      created = nullptr;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (primitives_.size() >= kMaxEntries) primitives_.clear();
    primitives_.emplace(problem, created);
    return created;
  }

 private:
  static constexpr size_t kMaxEntries = 512;
  Create create_;
  std::mutex mu_;
  std::map<ConvProblem, std::shared_ptr<const Primitive>> primitives_;
};

}  // namespace onednn_conv
}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_CONV_ONEDNN_COMMON_H_
