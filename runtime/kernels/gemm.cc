// Dense matrix products (see gemm.h).
//
// Where each product is computed, measured on this machine (AMD EPYC, 2
// cores, single-threaded, row-major float; oneDNN 2.6 dnnl_sgemm against an
// Eigen 3.4 product built with our flags, i.e. SSE2 only):
//   m x k x n        Eigen     oneDNN
//   1 x 4 x 2        0.03 us   0.14 us
//   8 x 8 x 8        0.10 us   0.31 us
//   16 x 16 x 16     0.54 us   0.41 us
//   32 x 32 x 32     2.3 us    1.1 us
//   128 x 128 x 128  145 us    48 us
//   512 x 512 x 512  13.1 ms   3.4 ms
// oneDNN has a fixed cost of ~0.3 us per call and wins from about
// m*k*n = 16^3, so float products at least that big go to oneDNN and
// smaller ones (and other dtypes) to Eigen.
//
// Products with b transposed go to a cached oneDNN matmul primitive
// instead of dnnl_sgemm (onednn_matmul.h); best of 100 on one thread
// (bench/gemm_shapes, load 1.1):
//   m x k x n, transposes          dnnl_sgemm  primitive
//   32 x 512 x 256, b^T (LSTM)     116.7 us    83.6 us
//   128 x 256 x 784, b^T (MLP)     475.6 us    458.5 us
//   32 x 512 x 256, a^T b^T        265.0 us    86.7 us
// Products without b transposed gain nothing from it (LSTM forward 72 us
// by sgemm, 84 us by the primitive; 2048^3 156 ms, 169 ms).
//
// Threads: oneDNN's own OpenMP threads would compete with our intra-op pool
// (and stall for milliseconds when a team member is descheduled), so each
// call is single-threaded and large products are split into row (or
// column) blocks across the pool instead.
#include "runtime/kernels/gemm.h"

#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <unsupported/Eigen/CXX11/Tensor>
#include <vector>

#include "runtime/kernels/onednn_matmul.h"

namespace tensorweave {
namespace {

constexpr double kOneDnnMinWork = 16 * 16 * 16;
// A product is split over the pool only when each thread gets at least
// this many multiply-adds (~35 us at the ~115 GFLOP/s one core reaches).
// Handing a block to another thread costs a wake-up, and on this shared
// machine the other core is often busy, when the split half waits for it:
// best of 100 with one core taken by another process (load 1.1), split in
// two against one thread,
//   32 x 256 x 512 (LSTM forward)  80.9 us   72.4 us
//   256 x 32 x 512 (LSTM dW)       86.6 us   78.0 us
//   128^3                          42.2 us   36.5 us
//   2048^3                         160 ms    157 ms
// (another helper saw 118 against 74 us for the LSTM forward at load 3.5),
// while on a quiet machine splitting the LSTM's 4.2M multiply-add products
// gained ~16% (bench/dynamic_rnn.py). Below 4M multiply-adds a block is
// short enough that the wake-up and the wait dominate; above it the split
// loses at most a few percent when the other core is busy and nearly halves
// the time when it is free. End to end (bench/dynamic_rnn.py, best of 7,
// the builds alternated twice at load 3.9), against the 64^3 threshold:
// forward 6.4 -> 5.6 ms, forward+backward 23.5 -> 21.0 ms (with b^T
// products on the cached primitive).
constexpr double kMinBlockWork = 4 * 1024 * 1024;

// Rows [r0, r1) and columns [c0, c1) of the result with oneDNN; false if
// oneDNN refused.
bool OneDnnBlock(const GemmArgs& g, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  UseOneOpenMpThread();
  const float* a = static_cast<const float*>(g.a);
  const float* b = static_cast<const float*>(g.b);
  float* c = static_cast<float*>(g.c);
  // op(a) rows start at row r0 of a, or column r0 when a is transposed;
  // likewise op(b) columns start at column c0 of b, or row c0.
  const float* a_block = g.transpose_a ? a + r0 : a + r0 * g.k;
  const float* b_block = g.transpose_b ? b + c0 * g.k : b + c0;
  const int64_t lda = g.transpose_a ? g.m : g.k;
  const int64_t ldb = g.transpose_b ? g.k : g.n;
  if (g.transpose_b && OneDnnMatmulBlock(a_block, b_block, c + r0 * g.n + c0, r1 - r0, g.k, c1 - c0,
                                         g.transpose_a, true, lda, ldb, g.n)) {
    return true;
  }
  return dnnl_sgemm(g.transpose_a ? 'T' : 'N', g.transpose_b ? 'T' : 'N', r1 - r0, c1 - c0, g.k,
                    1.0f, a_block, lda, b_block, ldb, 0.0f, c + r0 * g.n + c0, g.n) == dnnl_success;
}

// The same block with Eigen. A transposed row-major matrix is the same
// memory read column-major, so the storage orders encode the transposes.
template <typename T, int kOrderA, int kOrderB>
void EigenBlock(const GemmArgs& g, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using MatrixA = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, kOrderA>;
  using MatrixB = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, kOrderB>;
  Eigen::Map<const MatrixA> a(static_cast<const T*>(g.a), g.m, g.k);
  Eigen::Map<const MatrixB> b(static_cast<const T*>(g.b), g.k, g.n);
  Eigen::Map<Matrix> c(static_cast<T*>(g.c), g.m, g.n);
  c.block(r0, c0, r1 - r0, c1 - c0).noalias() =
      a.middleRows(r0, r1 - r0) * b.middleCols(c0, c1 - c0);
}

template <typename T>
void EigenBlockAnyOrder(const GemmArgs& g, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  constexpr int kRow = Eigen::RowMajor, kCol = Eigen::ColMajor;
  if (!g.transpose_a && !g.transpose_b) EigenBlock<T, kRow, kRow>(g, r0, r1, c0, c1);
  if (!g.transpose_a && g.transpose_b) EigenBlock<T, kRow, kCol>(g, r0, r1, c0, c1);
  if (g.transpose_a && !g.transpose_b) EigenBlock<T, kCol, kRow>(g, r0, r1, c0, c1);
  if (g.transpose_a && g.transpose_b) EigenBlock<T, kCol, kCol>(g, r0, r1, c0, c1);
}

// The same block for integers, whose sums of products wrap in two's
// complement as TensorFlow's do: plain loops in unsigned arithmetic, since
// Eigen's integer product overflows signed values (undefined behaviour).
// Each row of c accumulates a[r, p] * b[p, :] over p, so that b's rows are
// read contiguously (unless b is transposed) and the inner loop vectorizes.
template <typename T>
void WrappingIntegerBlock(const GemmArgs& g, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  using Unsigned = WrappingUnsigned<T>;
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  // Element (r, p) of op(a) is a[r * a_row + p * a_step]; (p, col) of op(b)
  // is b[p * b_row + col * b_step].
  const int64_t a_row = g.transpose_a ? 1 : g.k, a_step = g.transpose_a ? g.m : 1;
  const int64_t b_row = g.transpose_b ? 1 : g.n, b_step = g.transpose_b ? g.k : 1;
  std::vector<Unsigned> sums(c1 - c0);
  for (int64_t r = r0; r < r1; ++r) {
    std::fill(sums.begin(), sums.end(), Unsigned{0});
    for (int64_t p = 0; p < g.k; ++p) {
      const Unsigned x = static_cast<Unsigned>(a[r * a_row + p * a_step]);
      const T* y = b + p * b_row + c0 * b_step;
      for (int64_t j = 0; j < c1 - c0; ++j) sums[j] += x * static_cast<Unsigned>(y[j * b_step]);
    }
    for (int64_t j = 0; j < c1 - c0; ++j) c[r * g.n + c0 + j] = static_cast<T>(sums[j]);
  }
}

template <typename T>
void ComputeBlock(const GemmArgs& g, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  if constexpr (std::is_integral<T>::value) {
    WrappingIntegerBlock<T>(g, r0, r1, c0, c1);
  } else {
    if constexpr (std::is_same<T, float>::value) {
      const double work = static_cast<double>(g.m) * g.k * g.n;
      if (work >= kOneDnnMinWork && OneDnnBlock(g, r0, r1, c0, c1)) return;
    }
    EigenBlockAnyOrder<T>(g, r0, r1, c0, c1);
  }
}

}  // namespace

// omp_set_num_threads is per thread, so each thread does this once. Looked
// up at run time because only libdnnl, not this library, links libgomp;
// without OpenMP there is nothing to limit.
void UseOneOpenMpThread() {
  thread_local bool done = false;
  if (done) return;
  done = true;
  using SetNumThreads = void (*)(int);
  static const auto set_num_threads =
      reinterpret_cast<SetNumThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  if (set_num_threads != nullptr) set_num_threads(1);
}

template <typename T>
void GemmOnThisThread(const GemmArgs& g) {
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) {  // an empty sum
    std::fill(static_cast<T*>(g.c), static_cast<T*>(g.c) + g.m * g.n, T{0});
    return;
  }
  ComputeBlock<T>(g, 0, g.m, 0, g.n);
}

template <typename T>
void GemmOnPool(const Eigen::ThreadPoolDevice* pool, const GemmArgs& g) {
  if (g.m == 0 || g.n == 0 || g.k == 0 || pool == nullptr) {
    GemmOnThisThread<T>(g);
    return;
  }
  // Split the larger side of the result into one block per thread when
  // each block stays big enough to run efficiently.
  const double threads = pool->numThreads();
  const double work = static_cast<double>(g.m) * g.k * g.n;  // may exceed int64
  const int64_t blocks =
      static_cast<int64_t>(std::max(1.0, std::min({threads, std::floor(work / kMinBlockWork),
                                                   static_cast<double>(std::max(g.m, g.n))})));
  if (blocks == 1) {
    ComputeBlock<T>(g, 0, g.m, 0, g.n);
    return;
  }
  const bool split_rows = g.m >= g.n;
  const int64_t side = split_rows ? g.m : g.n;
  pool->parallelFor(blocks, Eigen::TensorOpCost(0, 0, 1e9),
                    [&](Eigen::Index begin, Eigen::Index end) {
                      for (Eigen::Index block = begin; block < end; ++block) {
                        const int64_t from = side * block / blocks;
                        const int64_t to = side * (block + 1) / blocks;
                        if (split_rows) {
                          ComputeBlock<T>(g, from, to, 0, g.n);
                        } else {
                          ComputeBlock<T>(g, 0, g.m, from, to);
                        }
                      }
                    });
}

#define TW_INSTANTIATE_GEMM(T)                          \
  template void GemmOnThisThread<T>(const GemmArgs& g); \
  template void GemmOnPool<T>(const Eigen::ThreadPoolDevice* pool, const GemmArgs& g);
TW_FOR_EACH_REAL_NUMBER(TW_INSTANTIATE_GEMM)
#undef TW_INSTANTIATE_GEMM

}  // namespace tensorweave
