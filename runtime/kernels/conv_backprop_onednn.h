// Conv2DBackpropInput and Conv2DBackpropFilter on float NHWC tensors and
// HWIO filters through oneDNN's convolution_backward_data and
// convolution_backward_weights primitives. The backprop kernels
// (conv_ops.cc) ask first, as Conv2D asks conv_onednn.h:
//
//   if (OneDnnConv2DBackpropChosen(ctx, g, /*input_gradient=*/true) &&
//       OneDnnConv2DBackpropInput(ctx, g, out_backprop, filter, in_backprop)) {
//     return;  // else oneDNN refused the shape: im2col computes it
//   }
//
// The batch is split across the intra-op pool by whole images (each block
// a primitive on one OpenMP thread); the filter gradient sums the blocks'
// partial gradients in block order, so results do not depend on timing.
// TW_CONV2D_PATH = "onednn" or "im2col" forces one path, as for Conv2D.
#ifndef TENSORWEAVE_KERNELS_CONV_BACKPROP_ONEDNN_H_
#define TENSORWEAVE_KERNELS_CONV_BACKPROP_ONEDNN_H_

#include "runtime/framework/conv_geometry.h"
#include "runtime/kernels/kernel_util.h"

namespace tensorweave {

// True when oneDNN's input (`input_gradient`) or filter backprop is the
// faster path for this geometry (or is forced by TW_CONV2D_PATH=onednn).
bool OneDnnConv2DBackpropChosen(const OpKernelContext* ctx, const ConvGeometry& g,
                                bool input_gradient);

// in_backprop (the input's shape, NHWC) = d loss / d input; false when
// oneDNN has no primitive for the geometry (the caller then computes all of
// in_backprop itself).
bool OneDnnConv2DBackpropInput(OpKernelContext* ctx, const ConvGeometry& g,
                               const float* out_backprop, const float* filter, float* in_backprop);

// filter_backprop (HWIO) = d loss / d filter; false as above.
bool OneDnnConv2DBackpropFilter(OpKernelContext* ctx, const ConvGeometry& g, const float* input,
                                const float* out_backprop, float* filter_backprop);

}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_CONV_BACKPROP_ONEDNN_H_
