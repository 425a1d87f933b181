// The float loops of the hot kernels (elementwise arithmetic and
// transcendentals, row reductions, softmax, ApplyAdam) as one table of
// plain function pointers. The table is built once per instruction set
// (float_kernels_<isa>.cc, all from float_kernels_body.h) and
// cpu_dispatch.h picks the one the CPU can run. This header holds no Eigen
// types on purpose: the per-ISA builds rename Eigen's namespace, and only
// these plain types cross between them and the rest of the library.
#ifndef TENSORWEAVE_KERNELS_FLOAT_KERNEL_TABLE_H_
#define TENSORWEAVE_KERNELS_FLOAT_KERNEL_TABLE_H_

#include <cstdint>

namespace tensorweave {

// One elementwise binary operation's three flat loops (cwise_binary.h);
// z may be x's or y's buffer.
struct FloatBinaryLoops {
  void (*vector_vector)(const float* x, const float* y, float* z, int64_t n);
  void (*vector_scalar)(const float* x, float y, float* z, int64_t n);
  void (*scalar_vector)(float x, const float* y, float* z, int64_t n);
};

// out[i] = f(in[i]); out may be in.
using FloatUnaryLoop = void (*)(const float* in, float* out, int64_t n);

// A reduction of row[0, n) to one value (n >= 1).
using FloatRowReduction = float (*)(const float* row, int64_t n);

// One chunk of an Adam update (training_ops.cc): the old values `in` of
// var, m and v, where their new values go (`out`, equal to `in` when
// updated in place), the gradient, and the bias-corrected learning rate
// lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t).
struct AdamChunk {
  const float* in[3];
  float* out[3];
  const float* grad;
  int64_t length;
  float lr_t, beta1, beta2, epsilon;
  bool use_nesterov;
};

struct FloatKernelTable {
  const char* isa;  // "baseline", "avx2" or "avx512"
  // Maximum and minimum propagate NaN (as TensorFlow's and numpy's do).
  FloatBinaryLoops add, sub, mul, div, maximum, minimum;
  // exp is exact where Eigen's vectorized exp clamps (inputs below -87
  // give std::exp's tiny or zero results); relu propagates NaN.
  FloatUnaryLoop exp, log, tanh, sigmoid, sqrt, rsqrt, relu;
  // max and min propagate NaN.
  FloatRowReduction sum, max, min;
  // One row of `depth` logits to its softmax (or log-softmax), computed
  // from x - max(x); out may be in.
  void (*softmax)(const float* in, float* out, int64_t depth, bool log);
  void (*adam)(const AdamChunk& chunk);
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_FLOAT_KERNEL_TABLE_H_
