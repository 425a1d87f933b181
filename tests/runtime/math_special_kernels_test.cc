// Tests of the kernels and shape functions of runtime/ops/math_special_ops.cc:
// trigonometric and special functions against the C library (also on
// tensors large enough to run on the thread pool), classifiers, Rint,
// Softsign and its gradient, the C-style and guarded divisions with their
// zero-divisor and MIN / -1 cases, ClipByValue's bounds, PreventGradient
// and Snapshot. Special values are those TensorFlow 2.21 gives.
#include <cmath>
#include <limits>
#include <vector>

#include "tests/runtime/kernel_test_util.h"

namespace tensorweave {
namespace test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

NodeDef Typed(const char* op, DataType dtype) { return NodeBuilder(op).Attr("T", dtype).Build(); }

// op(x) elementwise against `reference` on n doubles spread over [low, high].
template <typename T, typename Reference>
void ExpectUnaryMatches(const char* op, double low, double high, int64_t n, Reference reference,
                        double tolerance) {
  std::vector<T> inputs(n), expected(n);
  for (int64_t i = 0; i < n; ++i) {
    inputs[i] = static_cast<T>(low + (high - low) * i / std::max<int64_t>(n - 1, 1));
    expected[i] = static_cast<T>(reference(static_cast<double>(inputs[i])));
  }
  KernelRunner runner(Typed(op, DataTypeToEnum<T>::value));
  TW_ASSERT_OK(runner.Compute({Vector<T>(inputs)}));
  ExpectNear<T>(runner.output(0), {n}, expected, tolerance);
}

TEST(KernelTrig, MatchTheCLibraryInBothPrecisions) {
  struct Case {
    const char* op;
    double low, high;
    double (*reference)(double);
  };
  const Case cases[] = {
      {"Sin", -10, 10, [](double v) { return std::sin(v); }},
      {"Cos", -10, 10, [](double v) { return std::cos(v); }},
      {"Tan", -1.4, 1.4, [](double v) { return std::tan(v); }},
      {"Asin", -1, 1, [](double v) { return std::asin(v); }},
      {"Acos", -1, 1, [](double v) { return std::acos(v); }},
      {"Atan", -50, 50, [](double v) { return std::atan(v); }},
      {"Sinh", -5, 5, [](double v) { return std::sinh(v); }},
      {"Cosh", -5, 5, [](double v) { return std::cosh(v); }},
      {"Asinh", -50, 50, [](double v) { return std::asinh(v); }},
      {"Acosh", 1, 50, [](double v) { return std::acosh(v); }},
      {"Atanh", -0.99, 0.99, [](double v) { return std::atanh(v); }},
      {"Erf", -5, 5, [](double v) { return std::erf(v); }},
      {"Erfc", -5, 9, [](double v) { return std::erfc(v); }},
      {"Lgamma", 0.01, 40, [](double v) { return std::lgamma(v); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    ExpectUnaryMatches<double>(c.op, c.low, c.high, 101, c.reference, 1e-12);
    ExpectUnaryMatches<float>(c.op, c.low, c.high, 101, c.reference, 2e-6);
  }
}

TEST(KernelTrig, LargeInputsRunOnThePool) {
  // 200k elements at transcendental cost split into blocks on the pool;
  // every block must be written.
  ExpectUnaryMatches<float>(
      "Sin", -100, 100, 200000, [](double v) { return std::sin(v); }, 2e-6);
  // Digamma's asymptotic series, accurate to 1 / (120 v^4) past 5.
  ExpectUnaryMatches<double>(
      "Digamma", 5, 100, 200000, [](double v) { return std::log(v) - 0.5 / v - 1 / (12 * v * v); },
      2e-5);
}

TEST(KernelSpecial, PolesAndDomainsGiveTensorFlowsValues) {
  KernelRunner lgamma(Typed("Lgamma", DT_DOUBLE));
  TW_ASSERT_OK(lgamma.Compute({Vector<double>({0, -1, -2, -kInf, kInf, -0.5})}));
  ExpectNear<double>(lgamma.output(0), {6}, {kInf, kInf, kInf, kInf, kInf, 1.2655121234846454});
  KernelRunner digamma(Typed("Digamma", DT_DOUBLE));
  TW_ASSERT_OK(digamma.Compute({Vector<double>({0, -1, 1, -kInf, kInf})}));
  ExpectNear<double>(digamma.output(0), {5}, {kNaN, kNaN, -0.5772156649015329, kNaN, kInf});
  KernelRunner acosh(Typed("Acosh", DT_FLOAT));
  TW_ASSERT_OK(acosh.Compute({Vector<float>({0.5f, 1})}));
  ExpectNear<float>(acosh.output(0), {2}, {static_cast<float>(kNaN), 0});
}

TEST(KernelSpecial, PolygammaAndZetaBroadcast) {
  const double pi = std::acos(-1.0);
  KernelRunner polygamma(Typed("Polygamma", DT_DOUBLE));
  TW_ASSERT_OK(polygamma.Compute({MakeTensor<double>({3, 1}, {0, 1, 1.5}), Scalar<double>(1)}));
  ExpectNear<double>(polygamma.output(0), {3, 1}, {-0.5772156649015329, pi * pi / 6, kNaN}, 1e-12);
  KernelRunner zeta(Typed("Zeta", DT_FLOAT));
  TW_ASSERT_OK(zeta.Compute({Vector<float>({2, 4, 1}), Scalar<float>(1)}));
  ExpectNear<float>(zeta.output(0), {3},
                    {static_cast<float>(pi * pi / 6), static_cast<float>(pi * pi * pi * pi / 90),
                     static_cast<float>(kInf)});
  ExpectError(zeta.Compute({Vector<float>({2, 4}), Vector<float>({1, 2, 3})}),
              Code::INVALID_ARGUMENT, "Incompatible shapes");
}

TEST(KernelClassify, ProduceBools) {
  const Tensor x = Vector<double>({kNaN, -kInf, kInf, 0, -2.5});
  KernelRunner is_nan(Typed("IsNan", DT_DOUBLE));
  TW_ASSERT_OK(is_nan.Compute({x}));
  ExpectBools(is_nan.output(0), {5}, {1, 0, 0, 0, 0});
  KernelRunner is_inf(Typed("IsInf", DT_DOUBLE));
  TW_ASSERT_OK(is_inf.Compute({x}));
  ExpectBools(is_inf.output(0), {5}, {0, 1, 1, 0, 0});
  KernelRunner is_finite(Typed("IsFinite", DT_FLOAT));
  TW_ASSERT_OK(is_finite.Compute({Vector<float>({static_cast<float>(kNaN), 1, -0.f})}));
  ExpectBools(is_finite.output(0), {3}, {0, 1, 1});
  std::vector<PartialTensorShape> shapes;
  TW_ASSERT_OK(InferShapes(Typed("IsNan", DT_FLOAT), {Partial({2, -1})}, {}, &shapes));
  EXPECT_EQ(shapes[0].DebugString(), Partial({2, -1}).DebugString());
}

TEST(KernelRint, RoundsHalvesToEven) {
  KernelRunner rint(Typed("Rint", DT_FLOAT));
  TW_ASSERT_OK(rint.Compute({Vector<float>({0.5f, 1.5f, 2.5f, -0.5f, -1.7f, 1e20f})}));
  ExpectValues<float>(rint.output(0), {6}, {0, 2, 2, -0.f, -2, 1e20f});
  EXPECT_TRUE(std::signbit(rint.output(0).data<float>()[3]));
}

TEST(KernelSoftsign, ForwardAndGradient) {
  KernelRunner softsign(Typed("Softsign", DT_DOUBLE));
  TW_ASSERT_OK(softsign.Compute({Vector<double>({-2, 0, 3})}));
  ExpectNear<double>(softsign.output(0), {3}, {-2.0 / 3, 0, 0.75}, 1e-15);
  KernelRunner grad(Typed("SoftsignGrad", DT_FLOAT));
  TW_ASSERT_OK(grad.Compute({Vector<float>({1, 2, 1}), Vector<float>({-2, 0, 3})}));
  ExpectNear<float>(grad.output(0), {3}, {1.0f / 9, 2, 0.0625f});
  ExpectError(grad.Compute({Vector<float>({1, 2}), Vector<float>({-2, 0, 3})}),
              Code::INVALID_ARGUMENT, "must have the same shape");
  std::vector<PartialTensorShape> shapes;
  ExpectError(
      InferShapes(Typed("SoftsignGrad", DT_FLOAT), {Partial({2}), Partial({3})}, {}, &shapes),
      Code::INVALID_ARGUMENT, "same shape");
}

TEST(KernelAtan2, QuadrantsSignedZerosAndBroadcasting) {
  KernelRunner atan2(Typed("Atan2", DT_DOUBLE));
  TW_ASSERT_OK(atan2.Compute({Vector<double>({1, -0.0, 0, 1}), Vector<double>({-1, -1, -1, 0})}));
  const double pi = std::acos(-1.0);
  ExpectNear<double>(atan2.output(0), {4}, {3 * pi / 4, -pi, pi, pi / 2}, 1e-15);
  TW_ASSERT_OK(atan2.Compute({MakeTensor<double>({2, 1}, {1, -1}), Vector<double>({1, -1})}));
  ExpectNear<double>(atan2.output(0), {2, 2}, {pi / 4, 3 * pi / 4, -pi / 4, -3 * pi / 4}, 1e-15);
}

TEST(KernelTruncate, DivisionRoundsTowardZero) {
  const int64_t min = std::numeric_limits<int64_t>::min();
  KernelRunner div(Typed("TruncateDiv", DT_INT64));
  TW_ASSERT_OK(div.Compute(
      {Vector<int64_t>({7, -7, 7, -7, min, min}), Vector<int64_t>({2, 2, -2, -2, -1, 1})}));
  ExpectValues<int64_t>(div.output(0), {6}, {3, -3, -3, 3, min, min});
  KernelRunner small(Typed("TruncateDiv", DT_INT8));
  TW_ASSERT_OK(small.Compute({Vector<int8_t>({-128, -7, 127}), Scalar<int8_t>(-1)}));
  ExpectValues<int8_t>(small.output(0), {3}, {-128, 7, -127});
  KernelRunner unsigned_div(Typed("TruncateDiv", DT_UINT64));
  TW_ASSERT_OK(unsigned_div.Compute({Vector<uint64_t>({~uint64_t{0}, 9}), Scalar<uint64_t>(2)}));
  ExpectValues<uint64_t>(unsigned_div.output(0), {2}, {~uint64_t{0} / 2, 4});
  KernelRunner float_div(Typed("TruncateDiv", DT_FLOAT));
  TW_ASSERT_OK(float_div.Compute({Vector<float>({7, -7, 0, 7.5f}), Vector<float>({0, 0, 0, -2})}));
  ExpectNear<float>(
      float_div.output(0), {4},
      {static_cast<float>(kInf), static_cast<float>(-kInf), static_cast<float>(kNaN), -3});
}

TEST(KernelTruncate, RemainderTakesTheSignOfX) {
  for (const char* op : {"TruncateMod", "Mod"}) {
    SCOPED_TRACE(op);
    const int32_t min = std::numeric_limits<int32_t>::min();
    KernelRunner mod(Typed(op, DT_INT32));
    TW_ASSERT_OK(
        mod.Compute({Vector<int32_t>({7, -7, 7, -7, min}), Vector<int32_t>({2, 2, -2, -2, -1})}));
    ExpectValues<int32_t>(mod.output(0), {5}, {1, -1, 1, -1, 0});
    KernelRunner fmod(Typed(op, DT_DOUBLE));
    TW_ASSERT_OK(fmod.Compute({Vector<double>({7.5, -7.5, 1}), Vector<double>({2, 2, 0})}));
    ExpectNear<double>(fmod.output(0), {3}, {1.5, -1.5, kNaN});
  }
}

TEST(KernelTruncate, IntegerZeroDivisorIsInvalidArgument) {
  for (const char* op : {"TruncateDiv", "TruncateMod", "Mod"}) {
    SCOPED_TRACE(op);
    KernelRunner runner(Typed(op, DT_INT32));
    ExpectError(runner.Compute({Vector<int32_t>({1, 2}), Vector<int32_t>({1, 0})}),
                Code::INVALID_ARGUMENT, "Integer division by zero");
    ExpectError(runner.Compute({Vector<int32_t>({1, 2}), Scalar<int32_t>(0)}),
                Code::INVALID_ARGUMENT, "Integer division by zero");
  }
  KernelRunner unsigned_div(Typed("TruncateDiv", DT_UINT8));
  ExpectError(unsigned_div.Compute({Vector<uint8_t>({1}), Vector<uint8_t>({0})}),
              Code::INVALID_ARGUMENT, "Integer division by zero");
}

TEST(KernelGuardedDivision, ZerosWinOverNaN) {
  KernelRunner div_no_nan(Typed("DivNoNan", DT_DOUBLE));
  TW_ASSERT_OK(div_no_nan.Compute({Vector<double>({1, 0, kNaN, kInf, 6}), Scalar<double>(0)}));
  ExpectValues<double>(div_no_nan.output(0), {5}, {0, 0, 0, 0, 0});
  TW_ASSERT_OK(div_no_nan.Compute({Vector<double>({6, 1}), Vector<double>({4, 0})}));
  ExpectValues<double>(div_no_nan.output(0), {2}, {1.5, 0});
  KernelRunner xlogy(Typed("Xlogy", DT_FLOAT));
  TW_ASSERT_OK(xlogy.Compute({Vector<float>({0, 0, 0, 1, 2, static_cast<float>(kNaN)}),
                              Vector<float>({0, -1, static_cast<float>(kNaN), 0, 3, 0})}));
  ExpectNear<float>(
      xlogy.output(0), {6},
      {0, 0, 0, static_cast<float>(-kInf), 2 * std::log(3.0f), static_cast<float>(kNaN)});
  KernelRunner xdivy(Typed("Xdivy", DT_FLOAT));
  TW_ASSERT_OK(xdivy.Compute({Vector<float>({0, 0, 1, 2}), Vector<float>({0, -1, 0, 4})}));
  ExpectNear<float>(xdivy.output(0), {4}, {0, 0, static_cast<float>(kInf), 0.5f});
}

TEST(KernelClipByValue, ScalarAndElementwiseBounds) {
  KernelRunner clip(Typed("ClipByValue", DT_INT16));
  TW_ASSERT_OK(clip.Compute(
      {MakeTensor<int16_t>({2, 2}, {1, 5, 9, -3}), Scalar<int16_t>(2), Scalar<int16_t>(6)}));
  ExpectValues<int16_t>(clip.output(0), {2, 2}, {2, 5, 6, 2});
  TW_ASSERT_OK(clip.Compute({MakeTensor<int16_t>({2, 2}, {1, 5, 9, -3}),
                             MakeTensor<int16_t>({2, 2}, {0, 6, 0, 0}), Scalar<int16_t>(7)}));
  ExpectValues<int16_t>(clip.output(0), {2, 2}, {1, 6, 7, 0});
  // NaN stays, a NaN bound leaves t, crossed bounds give the lower one.
  KernelRunner float_clip(Typed("ClipByValue", DT_FLOAT));
  const float nan = static_cast<float>(kNaN);
  TW_ASSERT_OK(
      float_clip.Compute({Vector<float>({nan, 5, 9}), Scalar<float>(2), Scalar<float>(6)}));
  ExpectNear<float>(float_clip.output(0), {3}, {nan, 5, 6});
  TW_ASSERT_OK(
      float_clip.Compute({Vector<float>({1, 5, 9}), Scalar<float>(nan), Scalar<float>(6)}));
  ExpectNear<float>(float_clip.output(0), {3}, {1, 5, 6});
  TW_ASSERT_OK(float_clip.Compute({Vector<float>({1, 5, 9}), Scalar<float>(7), Scalar<float>(3)}));
  ExpectNear<float>(float_clip.output(0), {3}, {7, 7, 7});
}

TEST(KernelClipByValue, BoundsOfAnotherShapeAreInvalidArgument) {
  KernelRunner clip(Typed("ClipByValue", DT_FLOAT));
  ExpectError(clip.Compute({MakeTensor<float>({1, 3}, {1, 5, 9}), Vector<float>({2, 2, 2}),
                            Scalar<float>(6)}),
              Code::INVALID_ARGUMENT, "must be either of the same shape as input, or a scalar");
  ExpectError(clip.Compute({Vector<float>({1, 5, 9}), Scalar<float>(2), Vector<float>({6, 6})}),
              Code::INVALID_ARGUMENT, "clip_value_max shape: [2]");
  std::vector<PartialTensorShape> shapes;
  TW_ASSERT_OK(InferShapes(Typed("ClipByValue", DT_FLOAT),
                           {Partial({-1, 3}), Partial({}), Partial({2, -1})}, {}, &shapes));
  EXPECT_EQ(shapes[0].DebugString(), Partial({-1, 3}).DebugString());
  ExpectError(InferShapes(Typed("ClipByValue", DT_FLOAT),
                          {Partial({1, 3}), Partial({3}), Unknown()}, {}, &shapes),
              Code::INVALID_ARGUMENT, "clip_value_min shape: [3]");
}

TEST(KernelIdentities, PreventGradientPassesAndSnapshotCopies) {
  const Tensor x = Vector<std::string>({"a", "bc"});
  KernelRunner prevent(
      NodeBuilder("PreventGradient").Attr("T", DT_STRING).Attr("message", "why").Build());
  TW_ASSERT_OK(prevent.Compute({x}));
  EXPECT_TRUE(prevent.output(0).SharesBufferWith(x));
  for (const Tensor& value : {x, Vector<double>({1, -2}), MakeBoolTensor({2}, {1, 0})}) {
    KernelRunner snapshot(Typed("Snapshot", value.dtype()));
    TW_ASSERT_OK(snapshot.Compute({value}));
    EXPECT_FALSE(snapshot.output(0).SharesBufferWith(value));
    EXPECT_EQ(snapshot.output(0).shape(), value.shape());
  }
  KernelRunner snapshot(Typed("Snapshot", DT_STRING));
  TW_ASSERT_OK(snapshot.Compute({x}));
  ExpectValues<std::string>(snapshot.output(0), {2}, {"a", "bc"});
}

}  // namespace
}  // namespace test
}  // namespace tensorweave
