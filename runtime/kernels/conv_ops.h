// Conv2D's forward computation on NHWC buffers, shared by the Conv2D kernel
// and _FusedConv2D's (fused_conv_ops.cc): oneDNN's primitives where they are
// faster (conv_onednn.h), else im2col and matrix products (conv_ops.cc).
//
//   Conv2DNhwc<float>(ctx, g, input_nhwc, filter_hwio, output_nhwc);
#ifndef TENSORWEAVE_KERNELS_CONV_OPS_H_
#define TENSORWEAVE_KERNELS_CONV_OPS_H_

#include "runtime/framework/conv_geometry.h"
#include "runtime/kernels/kernel_util.h"

namespace tensorweave {

// output [N, out_rows, out_cols, out_depth] = input (NHWC) * filter (HWIO),
// grouped or not (g.groups). T is float or double.
template <typename T>
void Conv2DNhwc(OpKernelContext* ctx, const ConvGeometry& g, const T* input, const T* filter,
                T* output);

}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_CONV_OPS_H_
