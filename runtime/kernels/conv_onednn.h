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

#include "runtime/framework/conv_geometry.h"
#include "runtime/kernels/conv_onednn_common.h"
#include "runtime/kernels/kernel_util.h"

namespace tensorweave {

// True when the oneDNN path is the faster one for this geometry (or is
// forced by TW_CONV2D_PATH=onednn).
bool OneDnnConv2DChosen(const ConvGeometry& g);

// What _FusedConv2D adds after the convolution, inside the primitive: a
// bias per output channel (null: none), then an activation.
struct ConvEpilogue {
  const float* bias = nullptr;
  onednn_conv::Activation activation = onednn_conv::Activation::kNone;
  float alpha = 0;  // LeakyRelu's slope
};

// output = Conv2D(input, filter) (then the epilogue, when given) for the
// whole batch, split across the intra-op pool; false when oneDNN has no
// primitive for the geometry (the output may then be partly written: the
// caller computes all of it again).
bool OneDnnConv2DForward(OpKernelContext* ctx, const ConvGeometry& g, const float* input,
                         const float* filter, float* output,
                         const ConvEpilogue* epilogue = nullptr);

}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_CONV_ONEDNN_H_
