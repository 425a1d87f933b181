// What the DepthwiseConv2dNative kernel (depthwise_conv_op.cc) and its two
// backprop kernels (depthwise_conv_grad_op.cc) share: the attrs parsed once
// per kernel, NCHW tensors moved to and from the NHWC layout the loops
// run on, and the int32 sizes inputs read as shapes.
//
//   class MyDepthwiseOp : public DepthwiseOpBase {
//     void Compute(OpKernelContext* ctx) override {
//       Tensor input;  // NHWC whatever the node's data_format
//       OP_REQUIRES_OK(ctx, ToNhwc(ctx, ctx->input(0), &input));
//       ...
//     }
//   };
//
// The loops themselves walk NHWC rows with the channels innermost, so each
// filter tap is a multiply-add over a contiguous vector of out_depth values
// (channel c * multiplier + m of the output pairs with channel c of the
// input and entry [.., c, m] of the filter).
#ifndef TENSORWEAVE_KERNELS_DEPTHWISE_CONV_H_
#define TENSORWEAVE_KERNELS_DEPTHWISE_CONV_H_

#include <cstdint>

#include "runtime/framework/depthwise_geometry.h"
#include "runtime/framework/op_kernel.h"
#include "runtime/framework/tensor.h"
#include "runtime/kernels/kernel_util.h"

namespace tensorweave {

class DepthwiseOpBase : public OpKernel {
 public:
  explicit DepthwiseOpBase(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, ParseDepthwiseAttrs(c->def(), &attrs_));
  }

 protected:
  // `tensor` itself when the node is NHWC, else an NHWC copy of it.
  Status ToNhwc(const OpKernelContext* ctx, const Tensor& tensor, Tensor* nhwc) const;

  // An NHWC tensor of `shape` (given in the node's data_format) to compute
  // into: the allocated output itself when the node is NHWC, else a
  // temporary that FinishNhwcOutput moves into the output.
  Status AllocateNhwcOutput(OpKernelContext* ctx, const TensorShape& shape, Tensor* nhwc) const;
  Status FinishNhwcOutput(OpKernelContext* ctx, const Tensor& nhwc) const;

  // The NHWC form of a shape given in the node's data_format.
  TensorShape NhwcShape(const TensorShape& shape) const;

  DepthwiseAttrs attrs_;
};

// Reads an int32 sizes input (input_sizes, filter_sizes) as a 4-D shape.
Status DepthwiseShapeFromSizes(const Tensor& sizes, const char* name, TensorShape* shape);

// Cycles of one output row (out_cols pixels x taps x out_depth channels),
// for ParallelFor's block sizes.
double DepthwiseRowCycles(const DepthwiseGeometry& g);

// out[k] += x[k] * f[k] for k < n: the inner loop of the forward pass and
// the filter gradient (multiplier 1, or x already per output channel).
template <typename T>
inline void MultiplyAccumulate(const T* __restrict x, const T* __restrict f, T* __restrict out,
                               int64_t n) {
  for (int64_t k = 0; k < n; ++k) out[k] += x[k] * f[k];
}

// out[c * multiplier + m] += x[c] * f[c * multiplier + m]: one tap of the
// forward pass for one pixel, input channels broadcast to their outputs.
template <typename T>
inline void MultiplyAccumulateBroadcast(const T* __restrict x, const T* __restrict f,
                                        T* __restrict out, int64_t depth, int64_t multiplier) {
  if (multiplier == 1) {
    MultiplyAccumulate(x, f, out, depth);
    return;
  }
  for (int64_t c = 0; c < depth; ++c) {
    const T value = x[c];
    for (int64_t m = 0; m < multiplier; ++m)
      out[c * multiplier + m] += value * f[c * multiplier + m];
  }
}

}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_DEPTHWISE_CONV_H_
