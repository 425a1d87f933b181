// Sums of many values split into a fixed number of chunks that run on the
// intra-op pool, each filling its own partial result, then added in chunk
// order. The fixed split keeps results identical from run to run whatever
// the thread count, and partial sums lose less precision than one long
// running sum.
#ifndef TENSORWEAVE_KERNELS_CHUNKED_SUM_H_
#define TENSORWEAVE_KERNELS_CHUNKED_SUM_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/kernels/kernel_util.h"

namespace tensorweave {

// Calls add_rows(begin, end, partial) for row ranges covering [0, rows),
// where `partial` points at `width` zero-initialized accumulators of that
// chunk, then writes the total of all chunks' partials to `out[0, width)`.
// `cycles_per_row` sizes the work for the pool.
template <typename Acc, typename T, typename AddRows>
void ChunkedSum(const OpKernelContext* ctx, int64_t rows, int64_t width, double cycles_per_row,
                AddRows&& add_rows, T* out) {
  constexpr int64_t kMaxChunks = 16;
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(kMaxChunks, rows));
  std::vector<Acc> partials(static_cast<size_t>(chunks * width), Acc(0));
  ParallelFor(ctx, chunks, 0, cycles_per_row * rows / chunks, [&](int64_t begin, int64_t end) {
    for (int64_t chunk = begin; chunk < end; ++chunk) {
      add_rows(rows * chunk / chunks, rows * (chunk + 1) / chunks, &partials[chunk * width]);
    }
  });
  for (int64_t j = 0; j < width; ++j) {
    Acc total = 0;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      total = WrappingAdd(total, partials[chunk * width + j]);  // integers wrap
    }
    out[j] = static_cast<T>(total);
  }
}

}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_CHUNKED_SUM_H_
