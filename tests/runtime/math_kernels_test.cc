// Tests of the math kernels against hand-computed values and naive
// reference loops: elementwise ops with numpy broadcasting, comparisons,
// unary functions, reductions, ArgMax, ArgMin, BroadcastGradientArgs, AddN,
// MatMul, BiasAdd and Softmax, with their bad-input errors.
#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "tests/runtime/kernel_test_util.h"

namespace tensorweave {
namespace test {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

NodeDef Binary(const char* op, DataType dtype) { return NodeBuilder(op).Attr("T", dtype).Build(); }

// Row-major multi-index of `linear` in `shape`.
std::vector<int64_t> Unravel(const TensorShape& shape, int64_t linear) {
  std::vector<int64_t> index(shape.dims());
  for (int i = shape.dims() - 1; i >= 0; --i) {
    index[i] = linear % shape.dim_size(i);
    linear /= shape.dim_size(i);
  }
  return index;
}

// The element of `shape` that broadcasts to output position `index`.
int64_t BroadcastSource(const TensorShape& shape, const std::vector<int64_t>& index) {
  int64_t linear = 0;
  const int offset = static_cast<int>(index.size()) - shape.dims();
  for (int i = 0; i < shape.dims(); ++i) {
    const int64_t size = shape.dim_size(i);
    linear = linear * size + (size == 1 ? 0 : index[offset + i]);
  }
  return linear;
}

// numpy broadcasting, one element at a time.
template <typename T, typename Out>
std::vector<Out> BroadcastReference(const Tensor& x, const Tensor& y, const TensorShape& output,
                                    const std::function<Out(T, T)>& f) {
  std::vector<Out> result;
  for (int64_t i = 0; i < output.num_elements(); ++i) {
    const std::vector<int64_t> index = Unravel(output, i);
    result.push_back(f(x.data<T>()[BroadcastSource(x.shape(), index)],
                       y.data<T>()[BroadcastSource(y.shape(), index)]));
  }
  return result;
}

// Uniform values in [low, high); whole numbers when `integral` (so that
// float sums are exact).
template <typename T>
Tensor Random(const TensorShape& shape, std::mt19937* rng, double low = -10, double high = 10,
              bool integral = false) {
  std::uniform_real_distribution<double> dist(low, high);
  Tensor tensor(DataTypeToEnum<T>::value, shape);
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    const double v = dist(*rng);
    tensor.data<T>()[i] = static_cast<T>(integral ? std::floor(v) : v);
  }
  return tensor;
}

// --- Binary arithmetic -------------------------------------------------------

TEST(KernelBinary, SameShapeAndScalarOperands) {
  KernelRunner add(Binary("AddV2", DT_FLOAT));
  TW_ASSERT_OK(add.Compute({MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                            MakeTensor<float>({2, 3}, {10, 20, 30, 40, 50, 60})}));
  ExpectValues<float>(add.output(0), {2, 3}, {11, 22, 33, 44, 55, 66});

  KernelRunner sub(Binary("Sub", DT_INT32));
  TW_ASSERT_OK(sub.Compute({Vector<int32_t>({5, 6, 7}), Scalar<int32_t>(1)}));
  ExpectValues<int32_t>(sub.output(0), {3}, {4, 5, 6});
  TW_ASSERT_OK(sub.Compute({Scalar<int32_t>(1), Vector<int32_t>({5, 6, 7})}));
  ExpectValues<int32_t>(sub.output(0), {3}, {-4, -5, -6});

  // A single-element operand of higher rank still decides the output rank.
  KernelRunner mul(Binary("Mul", DT_DOUBLE));
  TW_ASSERT_OK(mul.Compute({Vector<double>({1.5, -2}), MakeTensor<double>({1, 1}, {2})}));
  ExpectValues<double>(mul.output(0), {1, 2}, {3, -4});
  TW_ASSERT_OK(mul.Compute({Scalar<double>(3), Scalar<double>(4)}));
  ExpectValues<double>(mul.output(0), {}, {12});
}

TEST(KernelBinary, BroadcastsLikeNumpy) {
  KernelRunner mul(Binary("Mul", DT_INT64));
  TW_ASSERT_OK(mul.Compute({MakeTensor<int64_t>({2, 1}, {1, 2}), Vector<int64_t>({10, 20, 30})}));
  ExpectValues<int64_t>(mul.output(0), {2, 3}, {10, 20, 30, 20, 40, 60});

  KernelRunner add(Binary("Add", DT_FLOAT));
  TW_ASSERT_OK(
      add.Compute({MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}), Vector<float>({100, 200, 300})}));
  ExpectValues<float>(add.output(0), {2, 3}, {101, 202, 303, 104, 205, 306});
  // Same element count, different ranks.
  TW_ASSERT_OK(add.Compute({MakeTensor<float>({1, 2}, {1, 2}), Vector<float>({3, 4})}));
  ExpectValues<float>(add.output(0), {1, 2}, {4, 6});
  // Empty dims broadcast against 1 and stay empty.
  TW_ASSERT_OK(add.Compute({MakeTensor<float>({0, 3}, {}), Vector<float>({1, 2, 3})}));
  ExpectValues<float>(add.output(0), {0, 3}, {});
  TW_ASSERT_OK(add.Compute({MakeTensor<float>({2, 1}, {1, 2}), MakeTensor<float>({1, 0}, {})}));
  ExpectValues<float>(add.output(0), {2, 0}, {});
}

// Random shape pairs (with size-1, missing and empty dims) against the
// naive reference, for every arithmetic op, including blocks big enough to
// run on the thread pool.
TEST(KernelBinary, RandomBroadcastsMatchReference) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> rank_dist(0, 5), size_dist(0, 4), one_dist(0, 2);
  struct Case {
    const char* op;
    std::function<float(float, float)> f;
  };
  const Case cases[] = {{"Add", [](float a, float b) { return a + b; }},
                        {"Sub", [](float a, float b) { return a - b; }},
                        {"Mul", [](float a, float b) { return a * b; }},
                        {"RealDiv", [](float a, float b) { return a / b; }}};
  for (const Case& c : cases) {
    KernelRunner run(Binary(c.op, DT_FLOAT));
    for (int trial = 0; trial < 60; ++trial) {
      const int rank = rank_dist(rng);
      std::vector<int64_t> out_dims, x_dims, y_dims;
      for (int i = 0; i < rank; ++i) out_dims.push_back(trial % 10 == 0 ? 40 : 1 + size_dist(rng));
      if (trial % 17 == 3 && rank > 0) out_dims[0] = 0;
      const int x_rank = rank - (rank > 0 ? one_dist(rng) % 2 : 0);
      for (int i = rank - x_rank; i < rank; ++i) x_dims.push_back(one_dist(rng) ? out_dims[i] : 1);
      for (int i = 0; i < rank; ++i) y_dims.push_back(one_dist(rng) ? out_dims[i] : 1);
      TensorShape x_shape, y_shape;
      TW_ASSERT_OK(TensorShape::Build(x_dims, &x_shape));
      TW_ASSERT_OK(TensorShape::Build(y_dims, &y_shape));
      Tensor x = Random<float>(x_shape, &rng), y = Random<float>(y_shape, &rng, 1, 10);
      TW_ASSERT_OK(run.Compute({x, y}));
      std::vector<int64_t> expected_dims(rank);
      for (int i = 0; i < rank; ++i) {
        const int64_t dx = i >= rank - x_rank ? x_dims[i - (rank - x_rank)] : 1;
        expected_dims[i] = dx == 1 ? y_dims[i] : dx;
      }
      TensorShape expected_shape;
      TW_ASSERT_OK(TensorShape::Build(expected_dims, &expected_shape));
      ExpectNear<float>(run.output(0), expected_shape,
                        BroadcastReference<float, float>(x, y, expected_shape, c.f));
    }
  }
}

TEST(KernelBinary, LargeTensorsRunInParallelBlocks) {
  std::mt19937 rng(3);
  Tensor x = Random<float>({300, 1000}, &rng), y = Random<float>({1000}, &rng);
  Tensor column = Random<float>({300, 1}, &rng);
  KernelRunner sub(Binary("Sub", DT_FLOAT));
  TW_ASSERT_OK(sub.Compute({x, y}));
  ExpectNear<float>(
      sub.output(0), {300, 1000},
      BroadcastReference<float, float>(x, y, {300, 1000}, [](float a, float b) { return a - b; }));
  TW_ASSERT_OK(sub.Compute({column, y}));
  ExpectNear<float>(sub.output(0), {300, 1000},
                    BroadcastReference<float, float>(column, y, {300, 1000},
                                                     [](float a, float b) { return a - b; }));
}

TEST(KernelBinary, ReusesAnUnsharedInputBuffer) {
  KernelRunner add(Binary("AddV2", DT_FLOAT));
  std::vector<Tensor> inputs;
  inputs.push_back(Vector<float>({1, 2}));
  inputs.push_back(Scalar<float>(1));
  TW_ASSERT_OK(add.Compute(std::move(inputs)));
  EXPECT_TRUE(add.output(0).SharesBufferWith(add.inputs()[0].tensor));
  ExpectValues<float>(add.output(0), {2}, {2, 3});
  // A buffer someone else holds is never written.
  Tensor held = Vector<float>({1, 2});
  TW_ASSERT_OK(add.Compute({held, Scalar<float>(1)}));
  EXPECT_FALSE(add.output(0).SharesBufferWith(held));
  ExpectValues<float>(held, {2}, {1, 2});
}

TEST(KernelBinary, DivisionFloatAndInteger) {
  KernelRunner div(Binary("RealDiv", DT_FLOAT));
  TW_ASSERT_OK(div.Compute({Vector<float>({1, -1, 0, 3}), Vector<float>({0, 0, 0, 2})}));
  ExpectNear<float>(div.output(0), {4}, {kInf, -kInf, kNaN, 1.5f});

  KernelRunner int_div(Binary("RealDiv", DT_INT32));
  const int32_t min = std::numeric_limits<int32_t>::min();
  TW_ASSERT_OK(
      int_div.Compute({Vector<int32_t>({7, -7, 7, min, 6}), Vector<int32_t>({2, 2, -2, -1, 3})}));
  ExpectValues<int32_t>(int_div.output(0), {5}, {3, -3, -3, min, 2});
  ExpectError(int_div.Compute({Vector<int32_t>({1, 2}), Vector<int32_t>({1, 0})}),
              Code::INVALID_ARGUMENT, "Integer division by zero");
  KernelRunner int64_div(Binary("RealDiv", DT_INT64));
  ExpectError(int64_div.Compute({Vector<int64_t>({1}), Scalar<int64_t>(0)}), Code::INVALID_ARGUMENT,
              "Integer division by zero");
}

TEST(KernelBinary, ErrorsAndUnsupportedDtypes) {
  KernelRunner add(Binary("Add", DT_FLOAT));
  ExpectError(add.Compute({MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}), Vector<float>({1, 2})}),
              Code::INVALID_ARGUMENT, "Incompatible shapes: [2,3] vs. [2]");
  // Types TensorFlow allows but we have no kernel for are not in the OpDef:
  // the node is rejected where it is added, by name.
  KernelRunner half(Binary("Add", DT_HALF));
  ExpectError(half.construction_status(), Code::INVALID_ARGUMENT,
              "Attr 'T' of node 'node' (op Add) is half, not in the allowed list");
  KernelRunner bad(Binary("Add", DT_BOOL));
  ExpectError(bad.construction_status(), Code::INVALID_ARGUMENT, "not in the allowed list");
}

// --- Comparisons ---------------------------------------------------------------

TEST(KernelCompare, OrderingsBroadcastAndHandleNaN) {
  const Tensor x = MakeTensor<float>({2, 2}, {1, 2, 3, kNaN});
  const Tensor y = Vector<float>({2, 2});
  struct Case {
    const char* op;
    std::vector<int> expected;
  };
  const Case cases[] = {{"Greater", {0, 0, 1, 0}}, {"GreaterEqual", {0, 1, 1, 0}},
                        {"Less", {1, 0, 0, 0}},    {"LessEqual", {1, 1, 0, 0}},
                        {"Equal", {0, 1, 0, 0}},   {"NotEqual", {1, 0, 1, 1}}};
  for (const Case& c : cases) {
    KernelRunner run(Binary(c.op, DT_FLOAT));
    TW_ASSERT_OK(run.Compute({x, y}));
    ExpectBools(run.output(0), {2, 2}, c.expected);
  }
  KernelRunner less(Binary("Less", DT_INT64));
  TW_ASSERT_OK(less.Compute({Scalar<int64_t>(2), Vector<int64_t>({1, 2, 3})}));
  ExpectBools(less.output(0), {3}, {0, 0, 1});
  KernelRunner greater(Binary("Greater", DT_DOUBLE));
  TW_ASSERT_OK(
      greater.Compute({MakeTensor<double>({3, 1}, {1, 2, 3}), Vector<double>({1.5, 2.5})}));
  ExpectBools(greater.output(0), {3, 2}, {0, 0, 1, 0, 1, 1});
}

TEST(KernelCompare, EqualityOnBoolsStringsAndIncompatibleShapes) {
  KernelRunner equal(Binary("Equal", DT_BOOL));
  TW_ASSERT_OK(equal.Compute({MakeBoolTensor({3}, {1, 0, 1}), MakeBoolTensor({}, {1})}));
  ExpectBools(equal.output(0), {3}, {1, 0, 1});
  ExpectError(equal.Compute({MakeBoolTensor({3}, {1, 0, 1}), MakeBoolTensor({2}, {1, 0})}),
              Code::INVALID_ARGUMENT, "Incompatible shapes");

  KernelRunner strings(Binary("NotEqual", DT_STRING));
  TW_ASSERT_OK(
      strings.Compute({MakeTensor<std::string>({3}, {"a", "b", ""}), Scalar<std::string>("b")}));
  ExpectBools(strings.output(0), {3}, {1, 0, 1});

  KernelRunner lenient(
      NodeBuilder("Equal").Attr("T", DT_INT32).Attr("incompatible_shape_error", false).Build());
  TW_ASSERT_OK(lenient.Compute({Vector<int32_t>({1, 2, 3}), Vector<int32_t>({1, 2})}));
  ExpectBools(lenient.output(0), {}, {0});
  TW_ASSERT_OK(lenient.Compute({Vector<int32_t>({1, 2}), Vector<int32_t>({1, 3})}));
  ExpectBools(lenient.output(0), {2}, {1, 0});
  KernelRunner not_equal(
      NodeBuilder("NotEqual").Attr("T", DT_INT32).Attr("incompatible_shape_error", false).Build());
  TW_ASSERT_OK(not_equal.Compute({Vector<int32_t>({1, 2, 3}), Vector<int32_t>({1, 2})}));
  ExpectBools(not_equal.output(0), {}, {1});
}

// Equal and NotEqual admit every dtype, so every integer width has kernels.
TEST(KernelCompare, EqualityOnEveryIntegerWidth) {
  KernelRunner int8_equal(Binary("Equal", DT_INT8));
  TW_ASSERT_OK(int8_equal.Compute({Vector<int8_t>({-128, 0, 127}), Scalar<int8_t>(-128)}));
  ExpectBools(int8_equal.output(0), {3}, {1, 0, 0});
  KernelRunner uint16_not_equal(Binary("NotEqual", DT_UINT16));
  TW_ASSERT_OK(uint16_not_equal.Compute(
      {Vector<uint16_t>({65535, 7}), MakeTensor<uint16_t>({2, 1}, {65535, 7})}));
  ExpectBools(uint16_not_equal.output(0), {2, 2}, {0, 1, 1, 0});
  KernelRunner uint64_equal(Binary("Equal", DT_UINT64));
  TW_ASSERT_OK(uint64_equal.Compute({Vector<uint64_t>({~uint64_t{0}, 1}), Scalar<uint64_t>(1)}));
  ExpectBools(uint64_equal.output(0), {2}, {0, 1});
}

// --- Unary -------------------------------------------------------------------

TEST(KernelUnary, ArithmeticOnIntegersAndFloats) {
  KernelRunner neg(Binary("Neg", DT_INT32));
  TW_ASSERT_OK(neg.Compute({Vector<int32_t>({1, -2, 0})}));
  ExpectValues<int32_t>(neg.output(0), {3}, {-1, 2, 0});
  KernelRunner square(Binary("Square", DT_INT64));
  TW_ASSERT_OK(square.Compute({Vector<int64_t>({-3, 4, 3000000000})}));
  ExpectValues<int64_t>(square.output(0), {3}, {9, 16, 9000000000000000000});
  KernelRunner abs(Binary("Abs", DT_FLOAT));
  TW_ASSERT_OK(abs.Compute({MakeTensor<float>({2, 2}, {-1.5f, 2, -0.0f, -kInf})}));
  ExpectValues<float>(abs.output(0), {2, 2}, {1.5f, 2, 0, kInf});
  KernelRunner relu(Binary("Relu", DT_FLOAT));
  TW_ASSERT_OK(relu.Compute({Vector<float>({-1, 0, 2, kNaN})}));
  ExpectNear<float>(relu.output(0), {4}, {0, 0, 2, kNaN});
  KernelRunner int_relu(Binary("Relu", DT_INT64));
  TW_ASSERT_OK(int_relu.Compute({Vector<int64_t>({-5, 5})}));
  ExpectValues<int64_t>(int_relu.output(0), {2}, {0, 5});
}

TEST(KernelUnary, TranscendentalsMatchTheStandardLibrary) {
  std::mt19937 rng(11);
  struct Case {
    const char* op;
    double (*f)(double);
    double low, high;
  };
  const Case cases[] = {{"Sqrt", [](double v) { return std::sqrt(v); }, 0, 100},
                        {"Exp", [](double v) { return std::exp(v); }, -20, 20},
                        {"Log", [](double v) { return std::log(v); }, 1e-3, 1e3},
                        {"Tanh", [](double v) { return std::tanh(v); }, -10, 10},
                        {"Sigmoid", [](double v) { return 1 / (1 + std::exp(-v)); }, -30, 30}};
  for (const Case& c : cases) {
    for (DataType dtype : {DT_FLOAT, DT_DOUBLE}) {
      KernelRunner run(Binary(c.op, dtype));
      // Big enough to be split into parallel blocks.
      const TensorShape shape({5, 20001});
      std::vector<double> inputs;
      Tensor x;
      if (dtype == DT_FLOAT) {
        x = Random<float>(shape, &rng, c.low, c.high);
        for (float v : Values<float>(x)) inputs.push_back(v);
      } else {
        x = Random<double>(shape, &rng, c.low, c.high);
        inputs = Values<double>(x);
      }
      TW_ASSERT_OK(run.Compute({x}));
      std::vector<double> expected;
      for (double v : inputs) expected.push_back(c.f(v));
      if (dtype == DT_FLOAT) {
        std::vector<float> narrowed(expected.begin(), expected.end());
        ExpectNear<float>(run.output(0), shape, narrowed, 2e-6);
      } else {
        ExpectNear<double>(run.output(0), shape, expected, 1e-12);
      }
    }
  }
}

TEST(KernelUnary, EdgeValuesAndMissingKernels) {
  KernelRunner log(Binary("Log", DT_FLOAT));
  TW_ASSERT_OK(log.Compute({Vector<float>({0, -1, 1})}));
  ExpectNear<float>(log.output(0), {3}, {-kInf, kNaN, 0});
  KernelRunner sqrt(Binary("Sqrt", DT_DOUBLE));
  TW_ASSERT_OK(sqrt.Compute({Vector<double>({-1, 4})}));
  ExpectNear<double>(sqrt.output(0), {2}, {std::nan(""), 2});
  KernelRunner sigmoid(Binary("Sigmoid", DT_FLOAT));
  TW_ASSERT_OK(sigmoid.Compute({Vector<float>({-1000, 0, 1000})}));
  ExpectNear<float>(sigmoid.output(0), {3}, {0, 0.5f, 1});
  KernelRunner int_exp(Binary("Exp", DT_INT32));
  ExpectError(int_exp.construction_status(), Code::INVALID_ARGUMENT, "not in the allowed list");
}

// --- Reductions --------------------------------------------------------------

// Reduces with plain loops: the reference for Sum/Mean/Max.
template <typename T>
std::vector<double> ReduceReference(const Tensor& input, const std::vector<bool>& reduced,
                                    const std::string& op, int64_t output_size) {
  std::vector<double> acc(output_size, op == "Max" ? -INFINITY : 0.0);
  std::vector<int64_t> counts(output_size, 0);
  for (int64_t i = 0; i < input.NumElements(); ++i) {
    const std::vector<int64_t> index = Unravel(input.shape(), i);
    int64_t out = 0;
    for (int d = 0; d < input.dims(); ++d) {
      if (!reduced[d]) out = out * input.dim_size(d) + index[d];
    }
    const double v = input.data<T>()[i];
    acc[out] = op == "Max" ? std::max(acc[out], v) : acc[out] + v;
    ++counts[out];
  }
  if (op == "Mean") {
    for (int64_t o = 0; o < output_size; ++o) {
      acc[o] = std::is_integral<T>::value ? std::trunc(acc[o] / counts[o]) : acc[o] / counts[o];
    }
  }
  return acc;
}

template <typename T>
void CheckRandomReductions(DataType dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> rank_dist(0, 4), size_dist(1, 5), coin(0, 1);
  for (const char* op : {"Sum", "Mean", "Max"}) {
    for (bool keep_dims : {false, true}) {
      KernelRunner run(NodeBuilder(op).Attr("T", dtype).Attr("keep_dims", keep_dims).Build());
      for (int trial = 0; trial < 40; ++trial) {
        const int rank = rank_dist(rng);
        std::vector<int64_t> dims;
        for (int i = 0; i < rank; ++i) dims.push_back(trial % 8 == 0 ? 1 : size_dist(rng));
        TensorShape shape;
        TW_ASSERT_OK(TensorShape::Build(dims, &shape));
        const Tensor input = Random<T>(shape, &rng, -100, 100, /*integral=*/true);
        std::vector<int32_t> axes;
        std::vector<bool> reduced(rank, false);
        std::vector<int64_t> out_dims;
        for (int i = 0; i < rank; ++i) {
          if (coin(rng)) {
            axes.push_back(coin(rng) ? i : i - rank);  // negative axes too
            reduced[i] = true;
          }
        }
        int64_t output_size = 1;
        for (int i = 0; i < rank; ++i) {
          if (!reduced[i]) {
            out_dims.push_back(dims[i]);
            output_size *= dims[i];
          } else if (keep_dims) {
            out_dims.push_back(1);
          }
        }
        TW_ASSERT_OK(run.Compute({input, Vector<int32_t>(axes)}));
        TensorShape out_shape;
        TW_ASSERT_OK(TensorShape::Build(out_dims, &out_shape));
        const std::vector<double> expected = ReduceReference<T>(input, reduced, op, output_size);
        ExpectNear<T>(run.output(0), out_shape, std::vector<T>(expected.begin(), expected.end()),
                      1e-5);
      }
    }
  }
}

TEST(KernelReduction, RandomAxesMatchReference) {
  CheckRandomReductions<float>(DT_FLOAT, 1);
  CheckRandomReductions<double>(DT_DOUBLE, 2);
  CheckRandomReductions<int32_t>(DT_INT32, 3);
  CheckRandomReductions<int64_t>(DT_INT64, 4);
}

TEST(KernelReduction, HandComputedAndInt64Axes) {
  const Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  KernelRunner sum(NodeBuilder("Sum").Attr("T", DT_FLOAT).Attr("Tidx", DT_INT64).Build());
  TW_ASSERT_OK(sum.Compute({x, Vector<int64_t>({0})}));
  ExpectValues<float>(sum.output(0), {3}, {5, 7, 9});
  TW_ASSERT_OK(sum.Compute({x, Scalar<int64_t>(-1)}));
  ExpectValues<float>(sum.output(0), {2}, {6, 15});
  TW_ASSERT_OK(sum.Compute({x, Vector<int64_t>({1, 0, 1})}));  // repeats are harmless
  ExpectValues<float>(sum.output(0), {}, {21});
  TW_ASSERT_OK(sum.Compute({x, Vector<int64_t>({})}));
  ExpectValues<float>(sum.output(0), {2, 3}, {1, 2, 3, 4, 5, 6});
  KernelRunner mean(NodeBuilder("Mean").Attr("T", DT_INT32).Attr("keep_dims", true).Build());
  TW_ASSERT_OK(mean.Compute({MakeTensor<int32_t>({2, 2}, {1, 2, 4, 4}), Vector<int32_t>({1})}));
  ExpectValues<int32_t>(mean.output(0), {2, 1}, {1, 4});
  KernelRunner max(NodeBuilder("Max").Attr("T", DT_FLOAT).Build());
  TW_ASSERT_OK(max.Compute({MakeTensor<float>({2, 2}, {1, kNaN, 3, 2}), Vector<int32_t>({1})}));
  ExpectNear<float>(max.output(0), {2}, {kNaN, 3});
}

TEST(KernelReduction, EmptyInputsAndLongRows) {
  const Tensor empty = MakeTensor<float>({2, 0}, {});
  KernelRunner sum(NodeBuilder("Sum").Attr("T", DT_FLOAT).Build());
  TW_ASSERT_OK(sum.Compute({empty, Vector<int32_t>({1})}));
  ExpectValues<float>(sum.output(0), {2}, {0, 0});
  TW_ASSERT_OK(sum.Compute({empty, Vector<int32_t>({0})}));
  ExpectValues<float>(sum.output(0), {0}, {});
  KernelRunner mean(NodeBuilder("Mean").Attr("T", DT_FLOAT).Build());
  TW_ASSERT_OK(mean.Compute({empty, Vector<int32_t>({1})}));
  ExpectNear<float>(mean.output(0), {2}, {kNaN, kNaN});
  KernelRunner max(NodeBuilder("Max").Attr("T", DT_INT32).Build());
  TW_ASSERT_OK(max.Compute({MakeTensor<int32_t>({0}, {}), Vector<int32_t>({0})}));
  ExpectValues<int32_t>(max.output(0), {}, {std::numeric_limits<int32_t>::lowest()});

  // One long row is summed in chunks on the pool; ints make it exact.
  std::vector<int64_t> values(1 << 20);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int64_t>(i % 1000) - 300;
  int64_t total = 0;
  for (int64_t v : values) total += v;
  KernelRunner long_sum(NodeBuilder("Sum").Attr("T", DT_INT64).Build());
  TW_ASSERT_OK(long_sum.Compute({Vector<int64_t>(values), Vector<int32_t>({0})}));
  ExpectValues<int64_t>(long_sum.output(0), {}, {total});
  KernelRunner long_max(NodeBuilder("Max").Attr("T", DT_INT64).Build());
  values[777777] = 5000;
  TW_ASSERT_OK(long_max.Compute({Vector<int64_t>(values), Scalar<int32_t>(0)}));
  ExpectValues<int64_t>(long_max.output(0), {}, {5000});
}

TEST(KernelReduction, BadAxes) {
  KernelRunner sum(NodeBuilder("Sum").Attr("T", DT_FLOAT).Build());
  const Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectError(sum.Compute({x, Vector<int32_t>({2})}), Code::INVALID_ARGUMENT,
              "Invalid reduction dimension 2 for input with 2 dimensions");
  ExpectError(sum.Compute({x, Vector<int32_t>({-3})}), Code::INVALID_ARGUMENT,
              "Invalid reduction dimension -3");
  ExpectError(sum.Compute({x, MakeTensor<int32_t>({1, 1}, {0})}), Code::INVALID_ARGUMENT,
              "must be a scalar or vector");
  ExpectError(sum.Compute({Scalar<float>(1), Vector<int32_t>({0})}), Code::INVALID_ARGUMENT,
              "for input with 0 dimensions");
}

// --- ArgMax --------------------------------------------------------------------

TEST(KernelArgMax, AxesTiesNaNAndOutputTypes) {
  const Tensor x = MakeTensor<float>({2, 3}, {1, 5, 5, 7, 2, 7});
  KernelRunner argmax(NodeBuilder("ArgMax").Attr("T", DT_FLOAT).Build());
  TW_ASSERT_OK(argmax.Compute({x, Scalar<int32_t>(1)}));
  ExpectValues<int64_t>(argmax.output(0), {2}, {1, 0});  // first of the ties
  TW_ASSERT_OK(argmax.Compute({x, Scalar<int32_t>(-2)}));
  ExpectValues<int64_t>(argmax.output(0), {3}, {1, 0, 1});
  TW_ASSERT_OK(argmax.Compute({Vector<float>({1, kNaN, 3, kNaN}), Scalar<int32_t>(0)}));
  ExpectValues<int64_t>(argmax.output(0), {}, {1});

  KernelRunner argmax32(NodeBuilder("ArgMax")
                            .Attr("T", DT_INT32)
                            .Attr("Tidx", DT_INT64)
                            .Attr("output_type", DT_INT32)
                            .Build());
  // Middle axis of a 3-D tensor: [2, 3, 2].
  TW_ASSERT_OK(argmax32.Compute(
      {MakeTensor<int32_t>({2, 3, 2}, {0, 9, 5, 1, 3, 2, 8, 0, 8, 7, 9, 7}), Scalar<int64_t>(1)}));
  ExpectValues<int32_t>(argmax32.output(0), {2, 2}, {1, 0, 2, 1});

  KernelRunner bools(NodeBuilder("ArgMax").Attr("T", DT_BOOL).Build());
  TW_ASSERT_OK(bools.Compute({MakeBoolTensor({3}, {0, 1, 1}), Scalar<int32_t>(0)}));
  ExpectValues<int64_t>(bools.output(0), {}, {1});
}

TEST(KernelArgMax, LargeInputMatchesReference) {
  std::mt19937 rng(5);
  const Tensor x = Random<double>({64, 50, 40}, &rng);
  KernelRunner argmax(NodeBuilder("ArgMax").Attr("T", DT_DOUBLE).Build());
  TW_ASSERT_OK(argmax.Compute({x, Scalar<int32_t>(1)}));
  std::vector<int64_t> expected;
  for (int o = 0; o < 64; ++o) {
    for (int k = 0; k < 40; ++k) {
      int best = 0;
      for (int r = 1; r < 50; ++r) {
        if (x.data<double>()[(o * 50 + r) * 40 + k] > x.data<double>()[(o * 50 + best) * 40 + k]) {
          best = r;
        }
      }
      expected.push_back(best);
    }
  }
  ExpectValues<int64_t>(argmax.output(0), {64, 40}, expected);
}

TEST(KernelArgMax, Errors) {
  KernelRunner argmax(NodeBuilder("ArgMax").Attr("T", DT_FLOAT).Build());
  const Tensor x = MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  ExpectError(argmax.Compute({x, Scalar<int32_t>(2)}), Code::INVALID_ARGUMENT,
              "Expected dimension in the range [-2, 2), but got 2");
  ExpectError(argmax.Compute({x, Vector<int32_t>({0})}), Code::INVALID_ARGUMENT,
              "dimension must be a scalar");
  ExpectError(argmax.Compute({MakeTensor<float>({2, 0}, {}), Scalar<int32_t>(1)}),
              Code::INVALID_ARGUMENT, "Reduction axis 1 is empty in shape [2,0]");
  ExpectError(argmax.Compute({Scalar<float>(1), Scalar<int32_t>(0)}), Code::INVALID_ARGUMENT,
              "range [0, 0)");
}

// --- AddN --------------------------------------------------------------------

TEST(KernelAddN, SumsAndChecksShapes) {
  KernelRunner add3(NodeBuilder("AddN").Attr("T", DT_FLOAT).Attr("N", 3).Build());
  TW_ASSERT_OK(
      add3.Compute({Vector<float>({1, 2}), Vector<float>({10, 20}), Vector<float>({100, 200})}));
  ExpectValues<float>(add3.output(0), {2}, {111, 222});
  ExpectError(add3.Compute({Vector<float>({1, 2}), Vector<float>({1}), Vector<float>({1, 2})}),
              Code::INVALID_ARGUMENT, "must have the same size and shape");
  KernelRunner add1(NodeBuilder("AddN").Attr("T", DT_INT64).Attr("N", 1).Build());
  TW_ASSERT_OK(add1.Compute({Vector<int64_t>({4})}));
  ExpectValues<int64_t>(add1.output(0), {1}, {4});
  KernelRunner zero(NodeBuilder("AddN").Attr("T", DT_FLOAT).Attr("N", 0).Build());
  ExpectError(zero.construction_status(), Code::INVALID_ARGUMENT, "N");
}

// --- MatMul ------------------------------------------------------------------

template <typename T>
std::vector<T> MatMulReference(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  const int64_t m = a.dim_size(ta ? 1 : 0), k = a.dim_size(ta ? 0 : 1);
  const int64_t n = b.dim_size(tb ? 0 : 1);
  std::vector<T> c(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t l = 0; l < k; ++l) {
        const T av = ta ? a.data<T>()[l * m + i] : a.data<T>()[i * k + l];
        const T bv = tb ? b.data<T>()[j * k + l] : b.data<T>()[l * n + j];
        sum += static_cast<double>(av) * bv;
      }
      c[i * n + j] = static_cast<T>(sum);
    }
  }
  return c;
}

template <typename T>
void CheckMatMul(DataType dtype, int64_t m, int64_t k, int64_t n, double tolerance) {
  std::mt19937 rng(static_cast<uint32_t>(m * 131 + k * 7 + n));
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      KernelRunner run(NodeBuilder("MatMul")
                           .Attr("T", dtype)
                           .Attr("transpose_a", ta)
                           .Attr("transpose_b", tb)
                           .Build());
      const Tensor a = Random<T>(ta ? TensorShape({k, m}) : TensorShape({m, k}), &rng, -4, 4);
      const Tensor b = Random<T>(tb ? TensorShape({n, k}) : TensorShape({k, n}), &rng, -4, 4);
      TW_ASSERT_OK(run.Compute({a, b}));
      ExpectNear<T>(run.output(0), {m, n}, MatMulReference<T>(a, b, ta, tb), tolerance);
    }
  }
}

TEST(KernelMatMul, HandComputedWithGradAttrs) {
  KernelRunner matmul(
      NodeBuilder("MatMul").Attr("T", DT_FLOAT).Attr("grad_a", true).Attr("grad_b", false).Build());
  TW_ASSERT_OK(matmul.Compute({MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                               MakeTensor<float>({3, 2}, {1, 0, 0, 1, 1, 1})}));
  ExpectValues<float>(matmul.output(0), {2, 2}, {4, 5, 10, 11});
}

TEST(KernelMatMul, AllTransposesAndDtypesMatchReference) {
  CheckMatMul<float>(DT_FLOAT, 2, 3, 4, 1e-5);        // Eigen, small
  CheckMatMul<float>(DT_FLOAT, 20, 30, 25, 1e-4);     // oneDNN
  CheckMatMul<float>(DT_FLOAT, 300, 70, 9, 1e-4);     // oneDNN, one thread
  CheckMatMul<float>(DT_FLOAT, 301, 131, 217, 1e-4);  // split by rows (8.6M multiply-adds)
  CheckMatMul<float>(DT_FLOAT, 33, 257, 1001, 1e-4);  // split by columns
  CheckMatMul<double>(DT_DOUBLE, 90, 80, 70, 1e-10);  // Eigen, split
  CheckMatMul<int32_t>(DT_INT32, 7, 5, 3, 0);
  CheckMatMul<int64_t>(DT_INT64, 70, 65, 80, 0);
}

TEST(KernelMatMul, EmptyAndBadShapes) {
  KernelRunner matmul(NodeBuilder("MatMul").Attr("T", DT_FLOAT).Build());
  TW_ASSERT_OK(matmul.Compute({MakeTensor<float>({2, 0}, {}), MakeTensor<float>({0, 3}, {})}));
  ExpectValues<float>(matmul.output(0), {2, 3}, {0, 0, 0, 0, 0, 0});
  TW_ASSERT_OK(matmul.Compute(
      {MakeTensor<float>({0, 2}, {}), MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}));
  ExpectValues<float>(matmul.output(0), {0, 3}, {});
  ExpectError(matmul.Compute({MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}),
                              MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}),
              Code::INVALID_ARGUMENT, "Matrix size-incompatible: In[0]: [2,3], In[1]: [2,3]");
  ExpectError(matmul.Compute({Vector<float>({1, 2}), MakeTensor<float>({2, 1}, {1, 2})}),
              Code::INVALID_ARGUMENT, "In[0] is not a matrix");
  ExpectError(matmul.Compute({MakeTensor<float>({1, 2}, {1, 2}), Scalar<float>(1)}),
              Code::INVALID_ARGUMENT, "In[1] is not a matrix");
}

// --- BiasAdd and Softmax ------------------------------------------------------

TEST(KernelBiasAdd, BothDataFormats) {
  KernelRunner nhwc(NodeBuilder("BiasAdd").Attr("T", DT_FLOAT).Build());
  TW_ASSERT_OK(
      nhwc.Compute({MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}), Vector<float>({10, 20, 30})}));
  ExpectValues<float>(nhwc.output(0), {2, 3}, {11, 22, 33, 14, 25, 36});
  KernelRunner nchw(NodeBuilder("BiasAdd").Attr("T", DT_INT32).Attr("data_format", "NCHW").Build());
  TW_ASSERT_OK(nchw.Compute(
      {MakeTensor<int32_t>({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), Vector<int32_t>({100, 200})}));
  ExpectValues<int32_t>(nchw.output(0), {1, 2, 2, 2}, {101, 102, 103, 104, 205, 206, 207, 208});
}

TEST(KernelBiasAdd, Errors) {
  KernelRunner bias_add(NodeBuilder("BiasAdd").Attr("T", DT_FLOAT).Build());
  ExpectError(bias_add.Compute({Vector<float>({1, 2}), Vector<float>({1, 2})}),
              Code::INVALID_ARGUMENT, "Input tensor must be at least 2D: [2]");
  ExpectError(
      bias_add.Compute({MakeTensor<float>({1, 2}, {1, 2}), MakeTensor<float>({1, 2}, {1, 2})}),
      Code::INVALID_ARGUMENT, "Biases must be 1D: [1,2]");
  ExpectError(bias_add.Compute({MakeTensor<float>({1, 2}, {1, 2}), Vector<float>({1, 2, 3})}),
              Code::INVALID_ARGUMENT, "Must provide as many biases");
  KernelRunner bad_format(
      NodeBuilder("BiasAdd").Attr("T", DT_FLOAT).Attr("data_format", "NDHWC").Build());
  ExpectError(bad_format.construction_status(), Code::INVALID_ARGUMENT, "NDHWC");
}

TEST(KernelSoftmax, RowsSumToOneAndLargeLogitsAreStable) {
  KernelRunner softmax(NodeBuilder("Softmax").Attr("T", DT_FLOAT).Build());
  TW_ASSERT_OK(softmax.Compute({MakeTensor<float>({2, 3}, {1, 2, 3, 1000, 1000, 1000})}));
  const double e1 = std::exp(1.0), e2 = std::exp(2.0), e3 = std::exp(3.0), s = e1 + e2 + e3;
  ExpectNear<float>(softmax.output(0), {2, 3},
                    {float(e1 / s), float(e2 / s), float(e3 / s), 1 / 3.f, 1 / 3.f, 1 / 3.f});
  KernelRunner softmax64(NodeBuilder("Softmax").Attr("T", DT_DOUBLE).Build());
  TW_ASSERT_OK(softmax64.Compute({Vector<double>({0, std::log(3.0)})}));
  ExpectNear<double>(softmax64.output(0), {2}, {0.25, 0.75}, 1e-12);
  TW_ASSERT_OK(softmax64.Compute({MakeTensor<double>({3, 0}, {})}));
  ExpectValues<double>(softmax64.output(0), {3, 0}, {});
  ExpectError(softmax.Compute({Scalar<float>(1)}), Code::INVALID_ARGUMENT,
              "logits must have >= 1 dimension");
}

// --- Reductions and index ops of the gradients ------------------------------

TEST(KernelReduction, MinProdAllAny) {
  const Tensor x = MakeTensor<float>({2, 3}, {1, -2, 3, 4, 5, kNaN});
  KernelRunner min(NodeBuilder("Min").Attr("T", DT_FLOAT).Build());
  TW_ASSERT_OK(min.Compute({x, Vector<int32_t>({1})}));
  ExpectNear<float>(min.output(0), {2}, {-2, kNaN});
  KernelRunner prod(NodeBuilder("Prod").Attr("T", DT_INT32).Attr("keep_dims", true).Build());
  TW_ASSERT_OK(prod.Compute({MakeTensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}), Scalar<int32_t>(0)}));
  ExpectValues<int32_t>(prod.output(0), {1, 3}, {4, 10, 18});
  TW_ASSERT_OK(prod.Compute({MakeTensor<int32_t>({0, 3}, {}), Scalar<int32_t>(0)}));
  ExpectValues<int32_t>(prod.output(0), {1, 3}, {1, 1, 1});
  TW_ASSERT_OK(min.Compute({MakeTensor<float>({0, 2}, {}), Scalar<int32_t>(0)}));
  ExpectValues<float>(min.output(0), {2}, {kInf, kInf});

  const Tensor b = MakeBoolTensor({2, 3}, {1, 1, 0, 1, 1, 1});
  KernelRunner all(NodeBuilder("All").Build());
  KernelRunner any(NodeBuilder("Any").Attr("Tidx", DT_INT64).Build());
  TW_ASSERT_OK(all.Compute({b, Vector<int32_t>({1})}));
  ExpectBools(all.output(0), {2}, {0, 1});
  TW_ASSERT_OK(all.Compute({b, Vector<int32_t>({0})}));
  ExpectBools(all.output(0), {3}, {1, 1, 0});
  TW_ASSERT_OK(any.Compute({MakeBoolTensor({2, 2}, {0, 0, 0, 1}), Vector<int64_t>({-1})}));
  ExpectBools(any.output(0), {2}, {0, 1});
  TW_ASSERT_OK(any.Compute({MakeBoolTensor({0}, {}), Vector<int64_t>({0})}));
  ExpectBools(any.output(0), {}, {0});
  TW_ASSERT_OK(all.Compute({MakeBoolTensor({0}, {}), Vector<int32_t>({0})}));
  ExpectBools(all.output(0), {}, {1});
  ExpectError(all.Compute({b, Vector<int32_t>({2})}), Code::INVALID_ARGUMENT,
              "Invalid reduction dimension");
}

TEST(KernelArgMin, TiesNaNAndErrors) {
  KernelRunner argmin(NodeBuilder("ArgMin").Attr("T", DT_FLOAT).Build());
  TW_ASSERT_OK(
      argmin.Compute({MakeTensor<float>({2, 3}, {3, 1, 1, 2, kNaN, -5}), Scalar<int32_t>(1)}));
  ExpectValues<int64_t>(argmin.output(0), {2}, {1, 1});
  TW_ASSERT_OK(
      argmin.Compute({MakeTensor<float>({2, 3}, {3, 1, 1, 2, 0, -5}), Scalar<int32_t>(0)}));
  ExpectValues<int64_t>(argmin.output(0), {3}, {1, 1, 1});
  ExpectError(argmin.Compute({MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}), Scalar<int32_t>(2)}),
              Code::INVALID_ARGUMENT, "Expected dimension in the range");
  ExpectError(argmin.Compute({MakeTensor<float>({0, 3}, {}), Scalar<int32_t>(0)}),
              Code::INVALID_ARGUMENT, "empty");
}

TEST(KernelBroadcastGradientArgs, AxesToSumAndErrors) {
  KernelRunner args(NodeBuilder("BroadcastGradientArgs").Attr("T", DT_INT32).Build());
  TW_ASSERT_OK(args.Compute({Vector<int32_t>({2, 1, 3}), Vector<int32_t>({4, 1, 1, 3})}));
  ExpectValues<int32_t>(args.output(0), {2}, {0, 2});
  ExpectValues<int32_t>(args.output(1), {2}, {1, 2});
  TW_ASSERT_OK(args.Compute({Vector<int32_t>({5, 4}), Vector<int32_t>({5, 4})}));
  ExpectValues<int32_t>(args.output(0), {0}, {});
  ExpectValues<int32_t>(args.output(1), {0}, {});
  KernelRunner args64(NodeBuilder("BroadcastGradientArgs").Attr("T", DT_INT64).Build());
  TW_ASSERT_OK(args64.Compute({Vector<int64_t>({}), Vector<int64_t>({3})}));
  ExpectValues<int64_t>(args64.output(0), {1}, {0});
  ExpectValues<int64_t>(args64.output(1), {0}, {});
  ExpectError(args.Compute({Vector<int32_t>({2, 3}), Vector<int32_t>({4})}), Code::INVALID_ARGUMENT,
              "Incompatible shapes: [2,3] vs. [4]");
  ExpectError(args.Compute({Scalar<int32_t>(2), Vector<int32_t>({4})}), Code::INVALID_ARGUMENT,
              "must be vectors");
  ExpectError(args.Compute({Vector<int32_t>({-1}), Vector<int32_t>({4})}), Code::INVALID_ARGUMENT,
              "negative");
}

}  // namespace
}  // namespace test
}  // namespace tensorweave
