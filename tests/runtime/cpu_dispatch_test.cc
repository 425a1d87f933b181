// The float kernel tables of every instruction set this CPU runs
// (cpu_dispatch.h) against scalar references and against the baseline
// table: exact operations bitwise, transcendentals and sums to float
// tolerance. Lengths cover the vector bodies and their tails (1 to 2
// AVX-512 registers and odd remainders), and outputs written over inputs.
#include "runtime/kernels/cpu_dispatch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace tensorweave {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
const int64_t kLengths[] = {1, 3, 8, 15, 16, 17, 31, 33, 64, 100, 1027};

// The instruction sets this CPU runs, widest last.
std::vector<CpuIsa> RunnableIsas() {
  std::vector<CpuIsa> isas;
  for (CpuIsa isa : {CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (isa <= DetectCpuIsa()) isas.push_back(isa);
  }
  return isas;
}

// Uniform values in [lo, hi) with, when `specials`, NaN, infinities,
// zeros of both signs and a subnormal spread through them.
std::vector<float> Values(int64_t n, float lo, float hi, bool specials, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(lo, hi);
  std::vector<float> values(n);
  for (float& v : values) v = uniform(rng);
  if (specials) {
    const float special[] = {kNaN, kInf, -kInf, 0.0f, -0.0f, 1e-40f};
    for (int i = 0; i < 6 && i * 5 < n; ++i) values[i * 5] = special[i];
  }
  return values;
}

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

// NaN matches NaN; otherwise |a - b| <= tolerance * max(1, |b|).
bool Near(float a, float b, float tolerance) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(b)) return a == b;
  return std::fabs(a - b) <= tolerance * std::max(1.0f, std::fabs(b));
}

void ExpectAll(const std::vector<float>& got, const std::vector<float>& want, float tolerance,
               const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const bool ok = tolerance == 0 ? SameBits(got[i], want[i]) : Near(got[i], want[i], tolerance);
    ASSERT_TRUE(ok) << what << " element " << i << " of " << got.size() << ": got " << got[i]
                    << ", want " << want[i];
  }
}

TEST(CpuDispatchTest, ParsesIsaNames) {
  CpuIsa isa = CpuIsa::kBaseline;
  EXPECT_TRUE(ParseCpuIsa("avx512", &isa));
  EXPECT_EQ(isa, CpuIsa::kAvx512);
  EXPECT_TRUE(ParseCpuIsa("avx2", &isa));
  EXPECT_EQ(isa, CpuIsa::kAvx2);
  EXPECT_TRUE(ParseCpuIsa("baseline", &isa));
  EXPECT_EQ(isa, CpuIsa::kBaseline);
  EXPECT_FALSE(ParseCpuIsa("sse4", &isa));
  EXPECT_FALSE(ParseCpuIsa("AVX2", &isa));
  EXPECT_EQ(isa, CpuIsa::kBaseline);
  for (CpuIsa each : {CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    ASSERT_TRUE(ParseCpuIsa(CpuIsaName(each), &isa));
    EXPECT_EQ(isa, each);
  }
}

TEST(CpuDispatchTest, CapNeverRaisesTheDetectedIsa) {
  bool unknown = true;
  EXPECT_EQ(ChooseCpuIsa(CpuIsa::kAvx512, nullptr, &unknown), CpuIsa::kAvx512);
  EXPECT_FALSE(unknown);
  EXPECT_EQ(ChooseCpuIsa(CpuIsa::kAvx512, "", &unknown), CpuIsa::kAvx512);
  EXPECT_EQ(ChooseCpuIsa(CpuIsa::kAvx512, "avx2", &unknown), CpuIsa::kAvx2);
  EXPECT_EQ(ChooseCpuIsa(CpuIsa::kAvx512, "baseline", &unknown), CpuIsa::kBaseline);
  EXPECT_EQ(ChooseCpuIsa(CpuIsa::kAvx2, "avx512", &unknown), CpuIsa::kAvx2);
  EXPECT_EQ(ChooseCpuIsa(CpuIsa::kBaseline, "avx2", &unknown), CpuIsa::kBaseline);
  EXPECT_FALSE(unknown);
  EXPECT_EQ(ChooseCpuIsa(CpuIsa::kAvx2, "avx1024", &unknown), CpuIsa::kAvx2);
  EXPECT_TRUE(unknown);
}

TEST(CpuDispatchTest, ActiveTableIsOneTheCpuRuns) {
  EXPECT_LE(ActiveCpuIsa(), DetectCpuIsa());
  EXPECT_STREQ(ActiveFloatKernels().isa, CpuIsaName(ActiveCpuIsa()));
  for (CpuIsa isa : RunnableIsas()) EXPECT_STREQ(FloatKernelsFor(isa).isa, CpuIsaName(isa));
}

struct BinaryCase {
  const char* name;
  FloatBinaryLoops FloatKernelTable::*loops;
  std::function<float(float, float)> reference;
};

// The exact operations: bitwise equal to the scalar result on every ISA,
// in all three loop shapes, also when z is x's buffer.
TEST(CpuDispatchTest, BinaryLoopsAreExactOnEveryIsa) {
  auto max_nan = [](float a, float b) { return a != a ? a : b != b ? b : std::max(a, b); };
  auto min_nan = [](float a, float b) { return a != a ? a : b != b ? b : std::min(a, b); };
  const BinaryCase cases[] = {
      {"add", &FloatKernelTable::add, [](float a, float b) { return a + b; }},
      {"sub", &FloatKernelTable::sub, [](float a, float b) { return a - b; }},
      {"mul", &FloatKernelTable::mul, [](float a, float b) { return a * b; }},
      {"div", &FloatKernelTable::div, [](float a, float b) { return a / b; }},
      {"maximum", &FloatKernelTable::maximum, max_nan},
      {"minimum", &FloatKernelTable::minimum, min_nan},
  };
  for (CpuIsa isa : RunnableIsas()) {
    const FloatKernelTable& table = FloatKernelsFor(isa);
    for (const BinaryCase& c : cases) {
      const FloatBinaryLoops& loops = table.*c.loops;
      for (int64_t n : kLengths) {
        const std::vector<float> x = Values(n, -4, 4, true, 1), y = Values(n, -4, 4, true, 2);
        const std::string what = std::string(table.isa) + " " + c.name;
        std::vector<float> want(n), got(n);
        for (int64_t i = 0; i < n; ++i) want[i] = c.reference(x[i], y[i]);
        loops.vector_vector(x.data(), y.data(), got.data(), n);
        ExpectAll(got, want, 0, what + " vector-vector");
        got = x;  // in place
        loops.vector_vector(got.data(), y.data(), got.data(), n);
        ExpectAll(got, want, 0, what + " vector-vector in place");
        for (float scalar : {1.5f, kNaN}) {
          for (int64_t i = 0; i < n; ++i) want[i] = c.reference(x[i], scalar);
          loops.vector_scalar(x.data(), scalar, got.data(), n);
          ExpectAll(got, want, 0, what + " vector-scalar");
          for (int64_t i = 0; i < n; ++i) want[i] = c.reference(scalar, y[i]);
          loops.scalar_vector(scalar, y.data(), got.data(), n);
          ExpectAll(got, want, 0, what + " scalar-vector");
        }
      }
    }
  }
}

struct UnaryCase {
  const char* name;
  FloatUnaryLoop FloatKernelTable::*loop;
  double (*reference)(double);
  float lo, hi;
  float tolerance;  // against the double reference; 0: bitwise
};

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double Rsqrt(double x) { return 1 / std::sqrt(x); }
double Relu(double x) { return x != x ? x : x > 0 ? x : 0; }
double Exp(double x) { return std::exp(x); }
double Log(double x) { return std::log(x); }
double Tanh(double x) { return std::tanh(x); }
double Sqrt(double x) { return std::sqrt(x); }

// Each unary loop against double-precision references (exp also far below
// Eigen's clamp), and each ISA against the baseline: sqrt and relu
// bitwise, the polynomial approximations to a few float ulps.
TEST(CpuDispatchTest, UnaryLoopsMatchReferencesOnEveryIsa) {
  const UnaryCase cases[] = {
      {"exp", &FloatKernelTable::exp, Exp, -120, 80, 2e-6f},
      {"log", &FloatKernelTable::log, Log, 0, 100, 2e-6f},
      {"tanh", &FloatKernelTable::tanh, Tanh, -10, 10, 2e-6f},
      {"sigmoid", &FloatKernelTable::sigmoid, Sigmoid, -20, 20, 2e-6f},
      {"sqrt", &FloatKernelTable::sqrt, Sqrt, 0, 100, 0},
      {"rsqrt", &FloatKernelTable::rsqrt, Rsqrt, 0.01f, 100, 2e-6f},
      {"relu", &FloatKernelTable::relu, Relu, -5, 5, 0},
  };
  const FloatKernelTable& baseline = FloatKernelsFor(CpuIsa::kBaseline);
  for (CpuIsa isa : RunnableIsas()) {
    const FloatKernelTable& table = FloatKernelsFor(isa);
    for (const UnaryCase& c : cases) {
      for (int64_t n : kLengths) {
        const std::string what = std::string(table.isa) + " " + c.name;
        const std::vector<float> x = Values(n, c.lo, c.hi, false, 3);
        std::vector<float> want(n), got(n), base(n);
        for (int64_t i = 0; i < n; ++i) want[i] = static_cast<float>(c.reference(x[i]));
        (table.*c.loop)(x.data(), got.data(), n);
        ExpectAll(got, want, c.tolerance, what);
        (baseline.*c.loop)(x.data(), base.data(), n);
        // A few float ulps (the ISAs' polynomials round differently).
        const float ulps = c.tolerance == 0 ? 0 : 1.6e-6f;
        ExpectAll(got, base, ulps, what + " against baseline");
        got = x;
        (table.*c.loop)(got.data(), got.data(), n);
        ExpectAll(got, base, ulps, what + " in place");
      }
    }
  }
}

TEST(CpuDispatchTest, ExpIsExactBelowEigensClamp) {
  for (CpuIsa isa : RunnableIsas()) {
    const FloatKernelTable& table = FloatKernelsFor(isa);
    std::vector<float> x(40, 1.0f), y(40);
    x[3] = -kInf;
    x[17] = -100.0f;  // exp is subnormal: 3.7e-44
    x[30] = kNaN;
    table.exp(x.data(), y.data(), 40);
    EXPECT_EQ(y[3], 0.0f) << table.isa;
    EXPECT_EQ(y[17], std::exp(-100.0f)) << table.isa;
    EXPECT_TRUE(std::isnan(y[30])) << table.isa;
    EXPECT_EQ(y[0], std::exp(1.0f)) << table.isa;
  }
}

TEST(CpuDispatchTest, RowReductionsMatchReferencesOnEveryIsa) {
  for (CpuIsa isa : RunnableIsas()) {
    const FloatKernelTable& table = FloatKernelsFor(isa);
    for (int64_t n : kLengths) {
      const std::vector<float> x = Values(n, -3, 3, false, 4);
      double sum = 0;
      float max = -kInf, min = kInf;
      for (float v : x) {
        sum += v;
        max = std::max(max, v);
        min = std::min(min, v);
      }
      // float partial sums of n terms of magnitude <= 3
      EXPECT_NEAR(table.sum(x.data(), n), sum, 3 * n * 1.2e-7) << table.isa << " n=" << n;
      EXPECT_TRUE(SameBits(table.max(x.data(), n), max)) << table.isa << " n=" << n;
      EXPECT_TRUE(SameBits(table.min(x.data(), n), min)) << table.isa << " n=" << n;
      std::vector<float> with_nan = x;
      with_nan[n / 2] = kNaN;
      EXPECT_TRUE(std::isnan(table.max(with_nan.data(), n))) << table.isa << " n=" << n;
      EXPECT_TRUE(std::isnan(table.min(with_nan.data(), n))) << table.isa << " n=" << n;
      EXPECT_TRUE(std::isnan(table.sum(with_nan.data(), n))) << table.isa << " n=" << n;
    }
  }
}

TEST(CpuDispatchTest, SoftmaxMatchesReferenceOnEveryIsa) {
  for (CpuIsa isa : RunnableIsas()) {
    const FloatKernelTable& table = FloatKernelsFor(isa);
    for (int64_t depth : kLengths) {
      for (bool log : {false, true}) {
        // Large logits: a softmax computed without subtracting the max
        // would overflow.
        const std::vector<float> x = Values(depth, 50, 110, false, 5);
        double max = x[0], sum = 0;
        for (float v : x) max = std::max<double>(max, v);
        for (float v : x) sum += std::exp(v - max);
        std::vector<float> want(depth), got(depth);
        for (int64_t i = 0; i < depth; ++i) {
          want[i] =
              static_cast<float>(log ? x[i] - max - std::log(sum) : std::exp(x[i] - max) / sum);
        }
        table.softmax(x.data(), got.data(), depth, log);
        ExpectAll(got, want, 1e-5f, std::string(table.isa) + (log ? " log_softmax" : " softmax"));
        got = x;
        table.softmax(got.data(), got.data(), depth, log);
        ExpectAll(got, want, 1e-5f, std::string(table.isa) + " softmax in place");
      }
    }
  }
}

// Adam's update multiplies and divides in a fixed order without fused
// multiply-adds, so every ISA gives the baseline's bits; the baseline is
// checked against the formula in double.
TEST(CpuDispatchTest, AdamIsBitwiseTheSameOnEveryIsa) {
  const FloatKernelTable& baseline = FloatKernelsFor(CpuIsa::kBaseline);
  for (bool nesterov : {false, true}) {
    for (int64_t n : kLengths) {
      const std::vector<float> var = Values(n, -1, 1, false, 6),
                               m = Values(n, -0.1f, 0.1f, false, 7);
      std::vector<float> v = Values(n, 0, 0.01f, false, 8);
      const std::vector<float> grad = Values(n, -1, 1, false, 9);
      const float lr_t = 0.001f * std::sqrt(1 - 0.999f) / (1 - 0.9f);
      std::vector<float> base_var(n), base_m(n), base_v(n);
      AdamChunk chunk{{var.data(), m.data(), v.data()},
                      {base_var.data(), base_m.data(), base_v.data()},
                      grad.data(),
                      n,
                      lr_t,
                      0.9f,
                      0.999f,
                      1e-7f,
                      nesterov};
      baseline.adam(chunk);
      for (int64_t i = 0; i < n; ++i) {
        const double new_m = m[i] + (grad[i] - double(m[i])) * (1 - 0.9);
        const double new_v = v[i] + (double(grad[i]) * grad[i] - v[i]) * (1 - 0.999);
        const double step_m = nesterov ? new_m * 0.9 + grad[i] * (1 - 0.9) : new_m;
        const double new_var = var[i] - step_m * lr_t / (std::sqrt(new_v) + 1e-7);
        ASSERT_NEAR(base_m[i], new_m, 1e-6) << i;
        ASSERT_NEAR(base_v[i], new_v, 1e-6) << i;
        ASSERT_NEAR(base_var[i], new_var, 1e-5) << i;
      }
      for (CpuIsa isa : RunnableIsas()) {
        const FloatKernelTable& table = FloatKernelsFor(isa);
        // In place: the outputs are the inputs' buffers.
        std::vector<float> new_var = var, new_m = m, new_v = v;
        AdamChunk in_place = chunk;
        in_place.in[0] = in_place.out[0] = new_var.data();
        in_place.in[1] = in_place.out[1] = new_m.data();
        in_place.in[2] = in_place.out[2] = new_v.data();
        table.adam(in_place);
        const std::string what = std::string(table.isa) + (nesterov ? " nadam" : " adam");
        ExpectAll(new_m, base_m, 0, what + " m");
        ExpectAll(new_v, base_v, 0, what + " v");
        ExpectAll(new_var, base_var, 0, what + " var");
      }
    }
  }
}

}  // namespace
}  // namespace tensorweave
