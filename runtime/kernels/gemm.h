// Matrix products of dense row-major buffers, shared by MatMul,
// BatchMatMulV2 and the convolution kernels (which multiply im2col patch
// matrices): c = op(a) * op(b), op = transpose when asked, where op(a) is
// m x k and op(b) is k x n, and c is m x n.
//
// Float products of at least 16^3 multiply-adds go to oneDNN (one OpenMP
// thread per call): its sgemm, or a cached matmul primitive when b is
// transposed; the rest (and other dtypes) to Eigen. See gemm.cc for the
// measurements behind that and behind when a product is split over the pool.
#ifndef TENSORWEAVE_KERNELS_GEMM_H_
#define TENSORWEAVE_KERNELS_GEMM_H_

#include <cstdint>

#include "runtime/kernels/kernel_util.h"

namespace tensorweave {

struct GemmArgs {
  const void* a;
  const void* b;
  void* c;
  int64_t m, k, n;
  bool transpose_a, transpose_b;
};

// Limits the OpenMP team of oneDNN calls made from the calling thread
// (Debian's libdnnl threads with OpenMP) to that thread itself: oneDNN's own
// threads would compete with the intra-op pool. Cheap after the first call
// on a thread; call it before each oneDNN call.
void UseOneOpenMpThread();

// The whole product on the calling thread (k may be 0: c is then zeros).
// For T in float, double, int32_t, int64_t.
template <typename T>
void GemmOnThisThread(const GemmArgs& g);

// The same, split into blocks of rows (or columns) of c across `pool` when
// the product is big enough to gain from it; `pool` may be null.
template <typename T>
void GemmOnPool(const Eigen::ThreadPoolDevice* pool, const GemmArgs& g);

}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_GEMM_H_
