// The float multiply-add peak of this machine's cores, measured rather
// than taken from a data sheet, to judge how near MatMul gets to it
// (bench/gemm_shapes prints MatMul's GFLOP/s).
//
//   make build/bench/fma_peak && build/bench/fma_peak
//
// Twelve independent chains of fused multiply-adds keep the FMA pipes busy
// (their latency is hidden); each is run with 512-bit and with 256-bit
// vectors, on one thread and on two at once. On AMD's Zen 4 a 512-bit FMA
// is issued as two 256-bit halves, so both widths give the same rate: a
// core's peak is 2 pipes x 8 lanes x 2 flops per cycle, not the 2 x 16 x 2
// of a core with two full 512-bit FMA units.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr int kChains = 12;
constexpr long kIterations = 2'000'000;  // ~20 ms: short runs dodge time slicing

// Returns a value depending on every chain so none is optimized away.
__attribute__((target("avx512f"))) float Chains512(long iterations) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(0.001f * i);
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  for (long n = 0; n < iterations; ++n) {
#pragma GCC unroll 12  // the accumulators must stay in registers
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], x, y);
  }
  float lanes[16];
  float sum = 0;
  for (int i = 0; i < kChains; ++i) {
    _mm512_storeu_ps(lanes, acc[i]);
    for (float v : lanes) sum += v;
  }
  return sum;
}

__attribute__((target("avx2,fma"))) float Chains256(long iterations) {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(0.001f * i);
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  for (long n = 0; n < iterations; ++n) {
#pragma GCC unroll 12  // the accumulators must stay in registers
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
  }
  float lanes[8];
  float sum = 0;
  for (int i = 0; i < kChains; ++i) {
    _mm256_storeu_ps(lanes, acc[i]);
    for (float v : lanes) sum += v;
  }
  return sum;
}

// GFLOP/s of `threads` threads each running `chains` (best of 50 short runs).
double Gflops(float (*chains)(long), int lanes, int threads) {
  double best = 0;
  for (int run = 0; run < 50; ++run) {
    std::vector<float> sink(threads);
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] { sink[t] = chains(kIterations); });
    }
    for (std::thread& w : workers) w.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (sink[0] == 12345.0f) std::printf(" ");  // keeps the results alive
    best = std::max(best, 2.0 * lanes * kChains * kIterations * threads / seconds / 1e9);
  }
  return best;
}

}  // namespace

int main() {
  char load[64] = "?\n";
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fgets(load, sizeof(load), f) == nullptr) std::strcpy(load, "?\n");
    std::fclose(f);
  }
  std::printf("load average: %s", load);
  std::printf("%-10s %12s %12s   (GFLOP/s, best of 50)\n", "vectors", "1 thread", "2 threads");
  if (__builtin_cpu_supports("avx512f")) {
    std::printf("%-10s %12.1f %12.1f\n", "512-bit", Gflops(Chains512, 16, 1),
                Gflops(Chains512, 16, 2));
  }
  std::printf("%-10s %12.1f %12.1f\n", "256-bit", Gflops(Chains256, 8, 1), Gflops(Chains256, 8, 2));
  return 0;
}
