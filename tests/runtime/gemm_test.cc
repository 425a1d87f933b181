// The float product paths of runtime/kernels/gemm.cc against a plain
// double-precision reference: dnnl_sgemm, the cached oneDNN matmul primitive
// (b transposed), Eigen for small products, and the split over the pool,
// at odd sizes and every transpose combination.
#include "runtime/kernels/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <thread>
#include <unsupported/Eigen/CXX11/Tensor>
#include <vector>

namespace tensorweave {
namespace {

struct Operands {
  std::vector<float> a, b;
};

Operands RandomOperands(int64_t m, int64_t k, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-2, 2);
  Operands o{std::vector<float>(m * k), std::vector<float>(k * n)};
  for (float& x : o.a) x = uniform(rng);
  for (float& x : o.b) x = uniform(rng);
  return o;
}

// c = op(a) * op(b) summed in double, with a stored [k, m] when transposed
// and b stored [n, k] when transposed.
std::vector<double> Reference(const Operands& o, int64_t m, int64_t k, int64_t n, bool ta,
                              bool tb) {
  std::vector<double> c(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) {
      const double x = ta ? o.a[p * m + i] : o.a[i * k + p];
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += x * (tb ? o.b[j * k + p] : o.b[p * n + j]);
    }
  }
  return c;
}

// Float sums of k products of values in [-2, 2] stay within this of the
// double sums (oneDNN and Eigen order the additions differently).
void ExpectClose(const std::vector<float>& got, const std::vector<double>& want, int64_t k,
                 const char* what) {
  ASSERT_EQ(got.size(), want.size());
  const double tolerance = 1e-5 * 4.0 * k + 1e-6;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tolerance) << what << " at " << i;
  }
}

class GemmTest : public ::testing::Test {
 protected:
  GemmTest() : pool_(2), device_(&pool_, 2) {}
  Eigen::ThreadPool pool_;
  Eigen::ThreadPoolDevice device_;
};

// Each size is run through GemmOnThisThread and GemmOnPool with all four
// transpose combinations. The sizes reach Eigen (below 16^3 multiply-adds),
// oneDNN on one thread, and splits by rows (m >= n) and by columns, whose
// blocks start at odd offsets into a and b.
TEST_F(GemmTest, EveryTransposeAndPathMatchesReference) {
  struct Size {
    int64_t m, k, n;
  };
  const Size sizes[] = {{3, 5, 7},      {1, 300, 1},     {17, 33, 65},
                        {32, 512, 256}, {301, 131, 217}, {33, 257, 1001}};
  for (const Size& s : sizes) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        const Operands o = RandomOperands(s.m, s.k, s.n, static_cast<uint32_t>(s.m + s.k + s.n));
        const std::vector<double> want = Reference(o, s.m, s.k, s.n, ta, tb);
        std::vector<float> c(s.m * s.n, std::nanf(""));
        const GemmArgs g{o.a.data(), o.b.data(), c.data(), s.m, s.k, s.n, ta, tb};
        GemmOnThisThread<float>(g);
        ExpectClose(c, want, s.k, "one thread");
        std::fill(c.begin(), c.end(), std::nanf(""));
        GemmOnPool<float>(&device_, g);
        ExpectClose(c, want, s.k, "pool");
      }
    }
  }
}

// A cached primitive is reused with new data each call, not with the data
// it was created for.
TEST_F(GemmTest, CachedPrimitiveReadsEachCallsData) {
  const int64_t m = 24, k = 40, n = 56;
  for (uint32_t seed : {1u, 2u, 3u}) {
    const Operands o = RandomOperands(m, k, n, seed);
    std::vector<float> c(m * n);
    GemmOnThisThread<float>(GemmArgs{o.a.data(), o.b.data(), c.data(), m, k, n, false, true});
    ExpectClose(c, Reference(o, m, k, n, false, true), k, "reuse");
  }
}

// More shapes than a thread's cache holds (it is cleared and refilled), each
// checked after the others were made.
TEST_F(GemmTest, ManyShapesThroughTheCache) {
  for (int64_t n = 16; n < 16 + 80; ++n) {
    const int64_t m = 20, k = 30;
    const Operands o = RandomOperands(m, k, n, static_cast<uint32_t>(n));
    std::vector<float> c(m * n);
    GemmOnThisThread<float>(GemmArgs{o.a.data(), o.b.data(), c.data(), m, k, n, n % 2 == 0, true});
    ExpectClose(c, Reference(o, m, k, n, n % 2 == 0, true), k, "many shapes");
  }
}

// Threads multiplying the same shape at once each use their own primitive.
TEST_F(GemmTest, ConcurrentCallsOfOneShape) {
  const int64_t m = 32, k = 64, n = 48;
  std::vector<Operands> operands;
  for (uint32_t t = 0; t < 4; ++t) operands.push_back(RandomOperands(m, k, n, 100 + t));
  std::vector<std::vector<float>> results(4, std::vector<float>(m * n));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int repeat = 0; repeat < 20; ++repeat) {
        GemmOnThisThread<float>(GemmArgs{operands[t].a.data(), operands[t].b.data(),
                                         results[t].data(), m, k, n, false, true});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) {
    ExpectClose(results[t], Reference(operands[t], m, k, n, false, true), k, "concurrent");
  }
}

}  // namespace
}  // namespace tensorweave
