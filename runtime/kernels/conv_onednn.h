// Conv2D forward on float NHWC inputs and HWIO filters through oneDNN's
// convolution primitives (its direct JIT kernels), instead of im2col and a
// matrix product. The Conv2D kernel asks first:
//
//   if (OneDnnConv2DChosen(g) &&
//       OneDnnConv2DForward(ctx, g, input.data<float>(), filter.data<float>(),
//                           output->data<float>())) {
//     return;  // else oneDNN refused the shape: im2col computes it
//   }
//
// Which shapes go to oneDNN is decided by measurement (bench/conv2d.py, the
// figures in conv_onednn.cc). The environment variable TW_CONV2D_PATH =
// "onednn" or "im2col" forces one path for every shape; it is read on each
// call, so a benchmark can compare both in one process.
#ifndef TENSORWEAVE_KERNELS_CONV_ONEDNN_H_
#define TENSORWEAVE_KERNELS_CONV_ONEDNN_H_

#include <functional>
#include <mutex>
#include <vector>

#include "runtime/framework/conv_geometry.h"
#include "runtime/kernels/conv_onednn_common.h"
#include "runtime/kernels/kernel_util.h"

namespace tensorweave {

// True when the oneDNN path is the faster one for this geometry (or is
// forced by TW_CONV2D_PATH=onednn). `filter_cached`: the caller keeps the
// reordered filter (ReorderedFilterCache), which makes oneDNN the faster
// path for every shape the models have (conv_onednn.cc).
bool OneDnnConv2DChosen(const ConvGeometry& g, bool filter_cached = false);

// What _FusedConv2D adds after the convolution, inside the primitive: a
// bias per output channel (null: none), an addend of the output's shape
// (NHWC; null: none), then an activation.
struct ConvEpilogue {
  const float* bias = nullptr;
  const float* addend = nullptr;
  onednn_conv::Activation activation = onednn_conv::Activation::kNone;
  float alpha = 0;  // LeakyRelu's slope
};

// A kernel's filter kept in the blocked layouts oneDNN's primitives read,
// for a kernel whose filter never changes (a Const input: the remapper marks
// such _FusedConv2D nodes with the attr _filter_is_const). The reorder, a
// pass over every weight that costs as much memory traffic as the
// convolution of a small image, then runs once per layout instead of on
// every call. Shared by the steps running the kernel at once.
class ReorderedFilterCache {
 public:
  // The filter's output channels from `first_channel` on (as many as
  // `layout` has) in `layout`, written into a buffer of layout.get_size()
  // bytes by fill(buffer) on the first call for that layout and channel.
  const char* Get(const dnnl::memory::desc& layout, int64_t first_channel,
                  const std::function<void(char*)>& fill);

 private:
  struct Entry {
    dnnl::memory::desc layout;
    int64_t first_channel;
    onednn_conv::AlignedBuffer buffer;
  };
  std::mutex mu_;
  std::vector<Entry> entries_;
};

// output = Conv2D(input, filter) (then the epilogue, when given) for the
// whole batch, split across the intra-op pool; false when oneDNN has no
// primitive for the geometry (the output may then be partly written: the
// caller computes all of it again). With `filter_cache`, `filter` is the
// same constant on every call and its reordered forms are kept there.
bool OneDnnConv2DForward(OpKernelContext* ctx, const ConvGeometry& g, const float* input,
                         const float* filter, float* output, const ConvEpilogue* epilogue = nullptr,
                         ReorderedFilterCache* filter_cache = nullptr);

}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_CONV_ONEDNN_H_
