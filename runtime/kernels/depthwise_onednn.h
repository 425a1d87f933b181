// DepthwiseConv2dNative forward on float NHWC tensors through oneDNN's
// depthwise convolution primitives (a grouped convolution with one input
// channel per group), with _FusedDepthwiseConv2dNative's bias and
// activation as the primitive's bias and post-op:
//
//   if (!OneDnnDepthwiseForward(ctx, g, input, filter, output, &epilogue)) {
//     ...  // oneDNN refused the geometry: the loops of depthwise_conv_op.cc
//   }
//
// Its AVX-512 kernel measured 6-16x faster than those loops on MobileNetV2's
// shapes (see depthwise_onednn.cc).
#ifndef TENSORWEAVE_KERNELS_DEPTHWISE_ONEDNN_H_
#define TENSORWEAVE_KERNELS_DEPTHWISE_ONEDNN_H_

#include "runtime/framework/depthwise_geometry.h"
#include "runtime/kernels/conv_onednn.h"
#include "runtime/kernels/kernel_util.h"

namespace tensorweave {

// output = DepthwiseConv2dNative(input, filter) then the epilogue (null:
// none) over the whole batch, images split across the intra-op pool; false
// when oneDNN has no fast primitive for the geometry (a channel multiplier
// above 1, or only its reference implementation) or fails (the output may
// then be partly written: the caller computes all of it again).
bool OneDnnDepthwiseForward(OpKernelContext* ctx, const DepthwiseGeometry& g, const float* input,
                            const float* filter, float* output, const ConvEpilogue* epilogue);

}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_DEPTHWISE_ONEDNN_H_
