// A float product block through a oneDNN matmul primitive that is created
// once per shape and layout and then reused (gemm.cc decides when).
//
// Why a primitive rather than dnnl_sgemm: for c = a * b^T with few rows
// (an LSTM's gradient for [x, h], 32 x 512 x 256), dnnl_sgemm repacks b on
// every call and runs at ~70 GFLOP/s, the primitive's brgemm kernel reads
// b's layout as is at ~100 GFLOP/s (bench/gemm_shapes).
#ifndef TENSORWEAVE_KERNELS_ONEDNN_MATMUL_H_
#define TENSORWEAVE_KERNELS_ONEDNN_MATMUL_H_

#include <cstdint>

namespace tensorweave {

// c[rows x cols] = op(a)[rows x k] * op(b)[k x cols], row-major with leading
// dimensions lda, ldb and ldc (of a, b and c as stored, i.e. before the
// transposes), on the calling thread. False when oneDNN has no primitive
// for it (the caller then computes the block another way).
bool OneDnnMatmulBlock(const float* a, const float* b, float* c, int64_t rows, int64_t k,
                       int64_t cols, bool transpose_a, bool transpose_b, int64_t lda, int64_t ldb,
                       int64_t ldc);

}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_ONEDNN_MATMUL_H_
