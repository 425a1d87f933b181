// Tests of the neural-network kernels: Conv2D and its backprops, pooling
// and pooling gradients against naive reference loops over many shapes,
// strides, paddings and dilations; activations, softmax, the losses,
// BiasAddGrad and BatchMatMulV2 against hand-computed or reference values;
// and their bad-input errors and shape functions.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "tests/runtime/kernel_test_util.h"

namespace tensorweave {
namespace test {
namespace {

template <typename T>
Tensor RandomTensor(const TensorShape& shape, std::mt19937* rng) {
  std::uniform_real_distribution<double> dist(-1, 1);
  Tensor tensor(DataTypeToEnum<T>::value, shape);
  for (int64_t i = 0; i < shape.num_elements(); ++i) tensor.data<T>()[i] = dist(*rng);
  return tensor;
}

Tensor Sizes(const TensorShape& shape) {
  std::vector<int32_t> dims;
  for (int64_t d : shape.dim_sizes()) dims.push_back(static_cast<int32_t>(d));
  return Vector<int32_t>(dims);
}

void SetList(NodeDef* node, const char* name, const std::vector<int64_t>& values) {
  AttrValue& attr = (*node->mutable_attr())[name];
  attr.mutable_list();  // an empty list is still a list
  for (int64_t v : values) attr.mutable_list()->add_i(v);
}

NodeDef WindowNode(const char* op, DataType dtype, std::vector<int64_t> strides,
                   const char* padding, std::vector<int64_t> ksize = {},
                   std::vector<int64_t> dilations = {1, 1, 1, 1}) {
  NodeDef node = NodeBuilder(op).Attr("T", dtype).Attr("padding", padding).Build();
  SetList(&node, "strides", strides);
  if (!ksize.empty()) SetList(&node, "ksize", ksize);
  if (op[0] == 'C') SetList(&node, "dilations", dilations);
  return node;
}

// One spatial dimension, derived independently of conv_geometry.cc.
void Reference1D(int64_t in, int64_t window, int64_t stride, int64_t dilation, bool same,
                 int64_t* out, int64_t* pad) {
  const int64_t effective = (window - 1) * dilation + 1;
  if (same) {
    *out = (in + stride - 1) / stride;
    *pad = std::max<int64_t>(0, (*out - 1) * stride + effective - in) / 2;
  } else {
    *out = (in - effective) / stride + 1;
    *pad = 0;
  }
}

struct ConvCase {
  int64_t batch, rows, cols, depth, filter_rows, filter_cols, out_depth;
  int64_t stride_rows, stride_cols, dilation_rows, dilation_cols;
  bool same;
};

// Calls f(n, out_r, out_c, in_r, in_c, fr, fc) for every in-bounds tap.
template <typename F>
void ForEachTap(const ConvCase& k, int64_t out_rows, int64_t out_cols, int64_t pad_r, int64_t pad_c,
                F f) {
  for (int64_t n = 0; n < k.batch; ++n)
    for (int64_t orow = 0; orow < out_rows; ++orow)
      for (int64_t ocol = 0; ocol < out_cols; ++ocol)
        for (int64_t fr = 0; fr < k.filter_rows; ++fr)
          for (int64_t fc = 0; fc < k.filter_cols; ++fc) {
            const int64_t ir = orow * k.stride_rows - pad_r + fr * k.dilation_rows;
            const int64_t ic = ocol * k.stride_cols - pad_c + fc * k.dilation_cols;
            if (ir < 0 || ir >= k.rows || ic < 0 || ic >= k.cols) continue;
            f(n, orow, ocol, ir, ic, fr, fc);
          }
}

template <typename T>
void CheckConvCase(const ConvCase& k, std::mt19937* rng) {
  SCOPED_TRACE(::testing::Message()
               << "batch " << k.batch << " in " << k.rows << "x" << k.cols << "x" << k.depth
               << " filter " << k.filter_rows << "x" << k.filter_cols << "x" << k.out_depth
               << " strides " << k.stride_rows << "," << k.stride_cols << " dilations "
               << k.dilation_rows << "," << k.dilation_cols << (k.same ? " SAME" : " VALID"));
  int64_t out_rows, out_cols, pad_r, pad_c;
  Reference1D(k.rows, k.filter_rows, k.stride_rows, k.dilation_rows, k.same, &out_rows, &pad_r);
  Reference1D(k.cols, k.filter_cols, k.stride_cols, k.dilation_cols, k.same, &out_cols, &pad_c);
  const TensorShape in_shape({k.batch, k.rows, k.cols, k.depth});
  const TensorShape filter_shape({k.filter_rows, k.filter_cols, k.depth, k.out_depth});
  const TensorShape out_shape({k.batch, out_rows, out_cols, k.out_depth});
  const Tensor input = RandomTensor<T>(in_shape, rng);
  const Tensor filter = RandomTensor<T>(filter_shape, rng);
  const Tensor grad = RandomTensor<T>(out_shape, rng);
  const T* x = input.data<T>();
  const T* w = filter.data<T>();
  const T* dy = grad.data<T>();
  std::vector<double> expected(out_shape.num_elements(), 0.0);
  std::vector<double> expected_dx(in_shape.num_elements(), 0.0);
  std::vector<double> expected_dw(filter_shape.num_elements(), 0.0);
  ForEachTap(
      k, out_rows, out_cols, pad_r, pad_c,
      [&](int64_t n, int64_t orow, int64_t ocol, int64_t ir, int64_t ic, int64_t fr, int64_t fc) {
        for (int64_t d = 0; d < k.depth; ++d) {
          for (int64_t o = 0; o < k.out_depth; ++o) {
            const int64_t xi = ((n * k.rows + ir) * k.cols + ic) * k.depth + d;
            const int64_t wi = ((fr * k.filter_cols + fc) * k.depth + d) * k.out_depth + o;
            const int64_t yi = ((n * out_rows + orow) * out_cols + ocol) * k.out_depth + o;
            expected[yi] += static_cast<double>(x[xi]) * w[wi];
            expected_dx[xi] += static_cast<double>(dy[yi]) * w[wi];
            expected_dw[wi] += static_cast<double>(dy[yi]) * x[xi];
          }
        }
      });
  const DataType dtype = DataTypeToEnum<T>::value;
  const std::vector<int64_t> strides = {1, k.stride_rows, k.stride_cols, 1};
  const std::vector<int64_t> dilations = {1, k.dilation_rows, k.dilation_cols, 1};
  const char* padding = k.same ? "SAME" : "VALID";
  const double tolerance = sizeof(T) == 4 ? 2e-4 : 1e-10;
  auto to_t = [](const std::vector<double>& v) { return std::vector<T>(v.begin(), v.end()); };

  KernelRunner conv(WindowNode("Conv2D", dtype, strides, padding, {}, dilations));
  TW_ASSERT_OK(conv.Compute({input, filter}));
  ExpectNear<T>(conv.output(0), out_shape, to_t(expected), tolerance);

  KernelRunner backprop_input(
      WindowNode("Conv2DBackpropInput", dtype, strides, padding, {}, dilations));
  TW_ASSERT_OK(backprop_input.Compute({Sizes(in_shape), filter, grad}));
  ExpectNear<T>(backprop_input.output(0), in_shape, to_t(expected_dx), tolerance);

  KernelRunner backprop_filter(
      WindowNode("Conv2DBackpropFilter", dtype, strides, padding, {}, dilations));
  TW_ASSERT_OK(backprop_filter.Compute({input, Sizes(filter_shape), grad}));
  ExpectNear<T>(backprop_filter.output(0), filter_shape, to_t(expected_dw), tolerance);
}

TEST(NnKernelConv, MatchesNaiveLoops) {
  std::mt19937 rng(7);
  const std::vector<ConvCase> cases = {
      {1, 5, 5, 1, 3, 3, 1, 1, 1, 1, 1, true},    {1, 5, 5, 1, 3, 3, 1, 1, 1, 1, 1, false},
      {2, 7, 6, 3, 3, 2, 4, 2, 2, 1, 1, true},    {2, 7, 6, 3, 3, 2, 4, 2, 3, 1, 1, false},
      {3, 8, 8, 2, 1, 1, 5, 1, 1, 1, 1, true},    {3, 8, 8, 2, 1, 1, 5, 2, 2, 1, 1, false},
      {2, 9, 9, 2, 3, 3, 3, 1, 1, 2, 2, true},    {2, 9, 10, 2, 3, 2, 3, 1, 2, 2, 3, false},
      {1, 4, 4, 3, 4, 4, 2, 1, 1, 1, 1, false},   {1, 4, 4, 3, 5, 5, 2, 3, 3, 1, 1, true},
      {5, 6, 5, 4, 2, 3, 6, 3, 1, 1, 1, true},    {16, 8, 8, 1, 3, 3, 8, 1, 1, 1, 1, true},
      {4, 12, 12, 8, 3, 3, 16, 1, 1, 1, 1, true}, {3, 10, 7, 5, 3, 3, 7, 2, 2, 1, 1, true},
      {1, 3, 3, 2, 3, 3, 2, 4, 4, 1, 1, true},    {2, 1, 9, 2, 1, 3, 2, 1, 2, 1, 1, true},
  };
  for (const ConvCase& k : cases) {
    CheckConvCase<float>(k, &rng);
    CheckConvCase<double>(k, &rng);
  }
}

TEST(NnKernelConv, EmptyBatchAndDepth) {
  KernelRunner conv(WindowNode("Conv2D", DT_FLOAT, {1, 1, 1, 1}, "SAME"));
  TW_ASSERT_OK(conv.Compute(
      {Tensor(DT_FLOAT, TensorShape({0, 4, 4, 2})), Tensor(DT_FLOAT, TensorShape({3, 3, 2, 5}))}));
  EXPECT_EQ(conv.output(0).shape(), TensorShape({0, 4, 4, 5}));
  // No input channels: every output is an empty sum.
  TW_ASSERT_OK(conv.Compute(
      {Tensor(DT_FLOAT, TensorShape({1, 2, 2, 0})), Tensor(DT_FLOAT, TensorShape({1, 1, 0, 2}))}));
  ExpectValues<float>(conv.output(0), {1, 2, 2, 2}, std::vector<float>(8, 0.0f));
  KernelRunner filter_grad(WindowNode("Conv2DBackpropFilter", DT_FLOAT, {1, 1, 1, 1}, "SAME"));
  TW_ASSERT_OK(filter_grad.Compute({Tensor(DT_FLOAT, TensorShape({0, 4, 4, 1})),
                                    Vector<int32_t>({2, 2, 1, 3}),
                                    Tensor(DT_FLOAT, TensorShape({0, 4, 4, 3}))}));
  ExpectValues<float>(filter_grad.output(0), {2, 2, 1, 3}, std::vector<float>(12, 0.0f));
}

TEST(NnKernelConv, Errors) {
  const Tensor input(DT_FLOAT, TensorShape({1, 4, 4, 2}));
  const Tensor filter(DT_FLOAT, TensorShape({3, 3, 2, 1}));
  KernelRunner conv(WindowNode("Conv2D", DT_FLOAT, {1, 1, 1, 1}, "VALID"));
  ExpectError(conv.Compute({Tensor(DT_FLOAT, TensorShape({4, 4, 2})), filter}),
              Code::INVALID_ARGUMENT, "input must be 4-dimensional");
  ExpectError(conv.Compute({input, Tensor(DT_FLOAT, TensorShape({3, 3, 2}))}),
              Code::INVALID_ARGUMENT, "filter must be 4-dimensional");
  ExpectError(conv.Compute({input, Tensor(DT_FLOAT, TensorShape({3, 3, 3, 1}))}),
              Code::INVALID_ARGUMENT, "input depth must equal filter depth: 2 vs 3");
  ExpectError(conv.Compute({input, Tensor(DT_FLOAT, TensorShape({5, 3, 2, 1}))}),
              Code::INVALID_ARGUMENT, "Computed output size would be negative");

  KernelRunner bad_strides(WindowNode("Conv2D", DT_FLOAT, {1, 1, 1}, "VALID"));
  ExpectError(bad_strides.construction_status(), Code::INVALID_ARGUMENT,
              "strides must specify 4 dimensions");
  KernelRunner batch_stride(WindowNode("Conv2D", DT_FLOAT, {2, 1, 1, 1}, "VALID"));
  ExpectError(batch_stride.construction_status(), Code::INVALID_ARGUMENT,
              "does not yet support strides in the batch and depth dimensions");
  KernelRunner zero_stride(WindowNode("Conv2D", DT_FLOAT, {1, 0, 1, 1}, "VALID"));
  ExpectError(zero_stride.construction_status(), Code::INVALID_ARGUMENT, "must be positive");
  NodeDef nchw = WindowNode("Conv2D", DT_FLOAT, {1, 1, 1, 1}, "VALID");
  SetAttrValue(std::string("NCHW_VECT_C"), &(*nchw.mutable_attr())["data_format"]);
  ExpectError(KernelRunner(nchw).construction_status(), Code::INVALID_ARGUMENT, "NCHW_VECT_C");
  KernelRunner explicit_padding(WindowNode("Conv2D", DT_FLOAT, {1, 1, 1, 1}, "EXPLICIT"));
  ExpectError(explicit_padding.construction_status(), Code::INVALID_ARGUMENT,
              "explicit_paddings attribute must contain 8 values");

  KernelRunner backprop(WindowNode("Conv2DBackpropInput", DT_FLOAT, {1, 1, 1, 1}, "VALID"));
  ExpectError(backprop.Compute({Vector<int32_t>({1, 4, 4}), filter,
                                Tensor(DT_FLOAT, TensorShape({1, 2, 2, 1}))}),
              Code::INVALID_ARGUMENT, "input_sizes must be a vector of 4 sizes");
  ExpectError(backprop.Compute({Vector<int32_t>({1, 4, 4, 2}), filter,
                                Tensor(DT_FLOAT, TensorShape({1, 3, 2, 1}))}),
              Code::INVALID_ARGUMENT, "out_backprop has shape [1,3,2,1]");
  ExpectError(backprop.Compute({Vector<int32_t>({1, -4, 4, 2}), filter,
                                Tensor(DT_FLOAT, TensorShape({1, 2, 2, 1}))}),
              Code::INVALID_ARGUMENT, "");
  KernelRunner filter_grad(WindowNode("Conv2DBackpropFilter", DT_FLOAT, {1, 1, 1, 1}, "VALID"));
  ExpectError(filter_grad.Compute({input, Vector<int32_t>({3, 3, 2, 1}),
                                   Tensor(DT_FLOAT, TensorShape({1, 2, 3, 1}))}),
              Code::INVALID_ARGUMENT, "out_backprop has shape");
}

// --- pooling -------------------------------------------------------------------------

struct PoolCase {
  int64_t batch, rows, cols, depth, window_rows, window_cols, stride_rows, stride_cols;
  bool same;
};

template <typename T>
void CheckPoolCase(const PoolCase& k, std::mt19937* rng) {
  SCOPED_TRACE(::testing::Message()
               << "batch " << k.batch << " in " << k.rows << "x" << k.cols << "x" << k.depth
               << " window " << k.window_rows << "x" << k.window_cols << " strides "
               << k.stride_rows << "," << k.stride_cols << (k.same ? " SAME" : " VALID"));
  int64_t out_rows, out_cols, pad_r, pad_c;
  Reference1D(k.rows, k.window_rows, k.stride_rows, 1, k.same, &out_rows, &pad_r);
  Reference1D(k.cols, k.window_cols, k.stride_cols, 1, k.same, &out_cols, &pad_c);
  const TensorShape in_shape({k.batch, k.rows, k.cols, k.depth});
  const TensorShape out_shape({k.batch, out_rows, out_cols, k.depth});
  const Tensor input = RandomTensor<T>(in_shape, rng);
  const Tensor grad = RandomTensor<T>(out_shape, rng);
  const T* x = input.data<T>();
  const T* dy = grad.data<T>();
  std::vector<T> max(out_shape.num_elements()), avg(out_shape.num_elements());
  std::vector<T> max_dx(in_shape.num_elements(), T(0)), avg_dx(in_shape.num_elements(), T(0));
  for (int64_t n = 0; n < k.batch; ++n)
    for (int64_t orow = 0; orow < out_rows; ++orow)
      for (int64_t ocol = 0; ocol < out_cols; ++ocol)
        for (int64_t d = 0; d < k.depth; ++d) {
          const int64_t yi = ((n * out_rows + orow) * out_cols + ocol) * k.depth + d;
          int64_t best = -1, count = 0;
          double sum = 0;
          std::vector<int64_t> taps;
          for (int64_t i = 0; i < k.window_rows; ++i)
            for (int64_t j = 0; j < k.window_cols; ++j) {
              const int64_t ir = orow * k.stride_rows - pad_r + i;
              const int64_t ic = ocol * k.stride_cols - pad_c + j;
              if (ir < 0 || ir >= k.rows || ic < 0 || ic >= k.cols) continue;
              const int64_t xi = ((n * k.rows + ir) * k.cols + ic) * k.depth + d;
              if (best < 0 || x[xi] > x[best]) best = xi;
              sum += x[xi];
              ++count;
              taps.push_back(xi);
            }
          max[yi] = x[best];
          avg[yi] = static_cast<T>(sum / count);
          max_dx[best] += dy[yi];
          for (int64_t xi : taps) avg_dx[xi] += dy[yi] / static_cast<T>(count);
        }
  const DataType dtype = DataTypeToEnum<T>::value;
  const std::vector<int64_t> ksize = {1, k.window_rows, k.window_cols, 1};
  const std::vector<int64_t> strides = {1, k.stride_rows, k.stride_cols, 1};
  const char* padding = k.same ? "SAME" : "VALID";
  const double tolerance = sizeof(T) == 4 ? 1e-5 : 1e-12;

  KernelRunner max_pool(WindowNode("MaxPool", dtype, strides, padding, ksize));
  TW_ASSERT_OK(max_pool.Compute({input}));
  ExpectValues<T>(max_pool.output(0), out_shape, max);
  KernelRunner max_grad(WindowNode("MaxPoolGrad", dtype, strides, padding, ksize));
  TW_ASSERT_OK(max_grad.Compute({input, max_pool.output(0), grad}));
  ExpectNear<T>(max_grad.output(0), in_shape, max_dx, tolerance);
  KernelRunner avg_pool(WindowNode("AvgPool", dtype, strides, padding, ksize));
  TW_ASSERT_OK(avg_pool.Compute({input}));
  ExpectNear<T>(avg_pool.output(0), out_shape, avg, tolerance);
  KernelRunner avg_grad(WindowNode("AvgPoolGrad", dtype, strides, padding, ksize));
  TW_ASSERT_OK(avg_grad.Compute({Sizes(in_shape), grad}));
  ExpectNear<T>(avg_grad.output(0), in_shape, avg_dx, tolerance);
}

TEST(NnKernelPool, MatchesNaiveLoops) {
  std::mt19937 rng(11);
  const std::vector<PoolCase> cases = {
      {1, 4, 4, 1, 2, 2, 2, 2, false},
      {1, 5, 5, 1, 2, 2, 2, 2, true},
      {2, 7, 6, 3, 3, 3, 2, 2, true},
      {2, 7, 6, 3, 3, 2, 1, 2, false},
      {3, 8, 8, 4, 3, 3, 1, 1, true},
      {1, 3, 3, 2, 3, 3, 3, 3, true},
      {4, 9, 5, 2, 1, 1, 2, 3, false},
      {2, 6, 6, 5, 4, 4, 3, 3, true},
      {64, 8, 8, 16, 2, 2, 2, 2, true},
      // Depths past one block of 16 channels, with a tail of 5 and of 5
      // after two blocks: the kernels take channels 16 at a time.
      {2, 6, 5, 21, 3, 3, 2, 2, true},
      {1, 5, 5, 37, 2, 2, 2, 2, false},
  };
  for (const PoolCase& k : cases) {
    CheckPoolCase<float>(k, &rng);
    CheckPoolCase<double>(k, &rng);
  }
}

TEST(NnKernelPool, TiesGoToTheFirstMaximum) {
  KernelRunner grad(WindowNode("MaxPoolGrad", DT_FLOAT, {1, 2, 2, 1}, "VALID", {1, 2, 2, 1}));
  const Tensor input = MakeTensor<float>({1, 2, 2, 1}, {1, 3, 3, 2});
  TW_ASSERT_OK(grad.Compute(
      {input, MakeTensor<float>({1, 1, 1, 1}, {3}), MakeTensor<float>({1, 1, 1, 1}, {5})}));
  ExpectValues<float>(grad.output(0), {1, 2, 2, 1}, {0, 5, 0, 0});
}

// Every channel of a block of 16 and of the tail after it: a window of
// equal values routes its gradient to the first element, and a NaN met
// first stays the maximum while a later NaN never replaces one.
TEST(NnKernelPool, TiesAndNaNsInEveryChannelLane) {
  constexpr int kDepth = 19;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> input(4 * kDepth, 2.0f);
  for (int d = 0; d < kDepth; ++d) {
    if (d % 3 == 1) input[d] = nan;               // pixel 0: NaN first
    if (d % 3 == 2) input[2 * kDepth + d] = nan;  // pixel 2: NaN later
  }
  std::vector<float> dy(kDepth);
  for (int d = 0; d < kDepth; ++d) dy[d] = static_cast<float>(d + 1);
  KernelRunner grad(WindowNode("MaxPoolGrad", DT_FLOAT, {1, 2, 2, 1}, "VALID", {1, 2, 2, 1}));
  TW_ASSERT_OK(grad.Compute({MakeTensor<float>({1, 2, 2, kDepth}, input),
                             MakeTensor<float>({1, 1, 1, kDepth}, std::vector<float>(kDepth, 2)),
                             MakeTensor<float>({1, 1, 1, kDepth}, dy)}));
  // Ties and NaNs both leave each channel's gradient on pixel 0.
  std::vector<float> expected(4 * kDepth, 0.0f);
  for (int d = 0; d < kDepth; ++d) expected[d] = dy[d];
  ExpectValues<float>(grad.output(0), {1, 2, 2, kDepth}, expected);

  // MaxPool ignores a NaN wherever it is in the window.
  KernelRunner pool(WindowNode("MaxPool", DT_FLOAT, {1, 2, 2, 1}, "VALID", {1, 2, 2, 1}));
  TW_ASSERT_OK(pool.Compute({MakeTensor<float>({1, 2, 2, kDepth}, input)}));
  ExpectValues<float>(pool.output(0), {1, 1, 1, kDepth}, std::vector<float>(kDepth, 2.0f));
}

TEST(NnKernelPool, Errors) {
  KernelRunner batch_window(WindowNode("MaxPool", DT_FLOAT, {1, 1, 1, 1}, "VALID", {2, 2, 2, 1}));
  ExpectError(batch_window.construction_status(), Code::INVALID_ARGUMENT,
              "does not yet support pooling in the batch and depth dimensions");
  KernelRunner pool(WindowNode("MaxPool", DT_FLOAT, {1, 1, 1, 1}, "VALID", {1, 3, 3, 1}));
  ExpectError(pool.Compute({Tensor(DT_FLOAT, TensorShape({2, 2, 1}))}), Code::INVALID_ARGUMENT,
              "input must be 4-dimensional");
  ExpectError(pool.Compute({Tensor(DT_FLOAT, TensorShape({1, 2, 2, 1}))}), Code::INVALID_ARGUMENT,
              "Computed output size would be negative");
  KernelRunner grad(WindowNode("MaxPoolGrad", DT_FLOAT, {1, 1, 1, 1}, "VALID", {1, 2, 2, 1}));
  const Tensor input(DT_FLOAT, TensorShape({1, 3, 3, 1}));
  ExpectError(grad.Compute({input, Tensor(DT_FLOAT, TensorShape({1, 2, 2, 1})),
                            Tensor(DT_FLOAT, TensorShape({1, 3, 3, 1}))}),
              Code::INVALID_ARGUMENT, "grad has shape [1,3,3,1]");
  KernelRunner avg_grad(WindowNode("AvgPoolGrad", DT_FLOAT, {1, 1, 1, 1}, "VALID", {1, 2, 2, 1}));
  ExpectError(
      avg_grad.Compute({Vector<int32_t>({1, 3, 3}), Tensor(DT_FLOAT, TensorShape({1, 2, 2, 1}))}),
      Code::INVALID_ARGUMENT, "orig_input_shape must be a vector of 4 sizes");
}

// --- activations ----------------------------------------------------------------------

NodeDef Typed(const char* op, DataType dtype) { return NodeBuilder(op).Attr("T", dtype).Build(); }

TEST(NnKernelActivation, ForwardValues) {
  const Tensor x = Vector<double>({-3, -0.5, 0, 0.5, 7});
  auto run = [&](const char* op, const std::vector<double>& expected) {
    SCOPED_TRACE(op);
    KernelRunner kernel(Typed(op, DT_DOUBLE));
    TW_ASSERT_OK(kernel.Compute({x}));
    ExpectNear<double>(kernel.output(0), {5}, expected, 1e-12);
  };
  run("Relu6", {0, 0, 0, 0.5, 6});
  run("Elu", {std::expm1(-3.0), std::expm1(-0.5), 0, 0.5, 7});
  const double scale = 1.0507009873554804934193349852946, alpha = 1.6732632423543772848170429916717;
  run("Selu", {scale * alpha * std::expm1(-3.0), scale * alpha * std::expm1(-0.5), 0, scale * 0.5,
               scale * 7});
  run("Softplus", {std::log1p(std::exp(-3.0)), std::log1p(std::exp(-0.5)), std::log(2.0),
                   std::log1p(std::exp(0.5)), std::log1p(std::exp(7.0))});
  const double alpha_attr = 0.2f;  // the attr is a float
  run("LeakyRelu", {-3 * alpha_attr, -0.5 * alpha_attr, 0, 0.5, 7});
  NodeDef leaky = Typed("LeakyRelu", DT_FLOAT);
  SetAttrValue(0.5f, &(*leaky.mutable_attr())["alpha"]);
  KernelRunner half_slope(leaky);
  TW_ASSERT_OK(half_slope.Compute({Vector<float>({-4, 2})}));
  ExpectValues<float>(half_slope.output(0), {2}, {-2, 2});
  // Softplus stays finite and exact far out in both tails.
  KernelRunner softplus(Typed("Softplus", DT_FLOAT));
  TW_ASSERT_OK(softplus.Compute({Vector<float>({-100, 100})}));
  ExpectNear<float>(softplus.output(0), {2}, {std::exp(-100.0f), 100});
  KernelRunner relu6(Typed("Relu6", DT_INT32));
  TW_ASSERT_OK(relu6.Compute({Vector<int32_t>({-2, 3, 9})}));
  ExpectValues<int32_t>(relu6.output(0), {3}, {0, 3, 6});
}

TEST(NnKernelActivation, GradientValues) {
  const Tensor dy = Vector<double>({1, 2, 3, 4, 5});
  const Tensor x = Vector<double>({-3, -0.5, 0.5, 5, 7});
  auto run = [&](const char* op, const Tensor& saved, const std::vector<double>& expected) {
    SCOPED_TRACE(op);
    KernelRunner kernel(Typed(op, DT_DOUBLE));
    TW_ASSERT_OK(kernel.Compute({dy, saved}));
    ExpectNear<double>(kernel.output(0), {5}, expected, 1e-12);
  };
  run("ReluGrad", x, {0, 0, 3, 4, 5});
  run("Relu6Grad", x, {0, 0, 3, 4, 0});
  const double alpha_attr = 0.2f;  // the attr is a float
  run("LeakyReluGrad", x, {alpha_attr, 2 * alpha_attr, 3, 4, 5});
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  run("SoftplusGrad", x,
      {sigmoid(-3), 2 * sigmoid(-0.5), 3 * sigmoid(0.5), 4 * sigmoid(5), 5 * sigmoid(7)});
  // EluGrad and SeluGrad take the forward outputs.
  const Tensor elu_y = Vector<double>({std::expm1(-3.0), std::expm1(-0.5), 0.5, 5, 7});
  run("EluGrad", elu_y, {std::exp(-3.0), 2 * std::exp(-0.5), 3, 4, 5});
  const double scale = 1.0507009873554804934193349852946, alpha = 1.6732632423543772848170429916717;
  const Tensor selu_y =
      Vector<double>({scale * alpha * std::expm1(-3.0), scale * alpha * std::expm1(-0.5),
                      scale * 0.5, scale * 5, scale * 7});
  run("SeluGrad", selu_y,
      {scale * alpha * std::exp(-3.0), 2 * scale * alpha * std::exp(-0.5), 3 * scale, 4 * scale,
       5 * scale});
  KernelRunner mismatch(Typed("ReluGrad", DT_FLOAT));
  ExpectError(mismatch.Compute({Vector<float>({1, 2}), Vector<float>({1, 2, 3})}),
              Code::INVALID_ARGUMENT, "gradients and features must have the same shape");
  KernelRunner elu_mismatch(Typed("EluGrad", DT_FLOAT));
  ExpectError(elu_mismatch.Compute({Vector<float>({1, 2}), Vector<float>({1})}),
              Code::INVALID_ARGUMENT, "gradients and outputs must have the same shape");
}

// --- softmax, losses, bias -------------------------------------------------------------

TEST(NnKernelSoftmax, LogSoftmaxIsStable) {
  KernelRunner log_softmax(Typed("LogSoftmax", DT_DOUBLE));
  TW_ASSERT_OK(log_softmax.Compute({MakeTensor<double>({2, 3}, {1, 2, 3, 1000, 1000, -1000})}));
  const double lse = std::log(std::exp(-2.0) + std::exp(-1.0) + 1.0);
  ExpectNear<double>(
      log_softmax.output(0), {2, 3},
      {-2 - lse, -1 - lse, -lse, -std::log(2.0), -std::log(2.0), -2000 - std::log(2.0)}, 1e-12);
}

TEST(NnKernelLoss, SoftmaxCrossEntropy) {
  KernelRunner xent(Typed("SoftmaxCrossEntropyWithLogits", DT_DOUBLE));
  const Tensor logits = MakeTensor<double>({2, 3}, {1, 2, 3, 500, 0, -500});
  const Tensor labels = MakeTensor<double>({2, 3}, {0.2, 0.3, 0.5, 0, 1, 0});
  TW_ASSERT_OK(xent.Compute({logits, labels}));
  const double lse = 3 + std::log(std::exp(-2.0) + std::exp(-1.0) + 1.0);
  const std::vector<double> log_p = {1 - lse, 2 - lse, 3 - lse};
  ExpectNear<double>(xent.output(0), {2},
                     {-(0.2 * log_p[0] + 0.3 * log_p[1] + 0.5 * log_p[2]), 500}, 1e-12);
  ExpectNear<double>(
      xent.output(1), {2, 3},
      {std::exp(log_p[0]) - 0.2, std::exp(log_p[1]) - 0.3, std::exp(log_p[2]) - 0.5, 1, -1, 0},
      1e-12);
  // One row of labels broadcasts over the batch.
  TW_ASSERT_OK(xent.Compute({logits, MakeTensor<double>({1, 3}, {0, 1, 0})}));
  ExpectNear<double>(xent.output(0), {2}, {-log_p[1], 500}, 1e-12);
  ExpectError(xent.Compute({logits, MakeTensor<double>({2, 2}, {1, 0, 0, 1})}),
              Code::INVALID_ARGUMENT, "logits and labels must be same size: logits_size=[2,3]");
  ExpectError(xent.Compute({Vector<double>({1, 2}), Vector<double>({1, 0})}),
              Code::INVALID_ARGUMENT, "logits must be 2-dimensional");
}

TEST(NnKernelLoss, SparseSoftmaxCrossEntropy) {
  NodeDef node = NodeBuilder("SparseSoftmaxCrossEntropyWithLogits")
                     .Attr("T", DT_FLOAT)
                     .Attr("Tlabels", DT_INT32)
                     .Build();
  KernelRunner xent(node);
  const Tensor logits = MakeTensor<float>({2, 3}, {1, 2, 3, 0, 0, 0});
  TW_ASSERT_OK(xent.Compute({logits, Vector<int32_t>({2, 0})}));
  const double lse = 3 + std::log(std::exp(-2.0) + std::exp(-1.0) + 1.0);
  ExpectNear<float>(xent.output(0), {2}, {static_cast<float>(lse - 3), std::log(3.0f)});
  const float third = 1.0f / 3;
  ExpectNear<float>(xent.output(1), {2, 3},
                    {static_cast<float>(std::exp(1 - lse)), static_cast<float>(std::exp(2 - lse)),
                     static_cast<float>(std::exp(3 - lse) - 1), third - 1, third, third});
  KernelRunner wide(Typed("SparseSoftmaxCrossEntropyWithLogits", DT_FLOAT));  // int64 labels
  ExpectError(wide.Compute({Tensor(DT_FLOAT, TensorShape({2, 10})), Vector<int64_t>({1, 12})}),
              Code::INVALID_ARGUMENT,
              "Received a label value of 12 which is outside the valid range of [0, 10)");
  ExpectError(wide.Compute({Tensor(DT_FLOAT, TensorShape({2, 10})), Vector<int64_t>({-1, 1})}),
              Code::INVALID_ARGUMENT, "Received a label value of -1");
  ExpectError(wide.Compute({Tensor(DT_FLOAT, TensorShape({2, 10})), Vector<int64_t>({1})}),
              Code::INVALID_ARGUMENT, "must have the same first dimension");
  ExpectError(wide.Compute({Tensor(DT_FLOAT, TensorShape({2, 0})), Vector<int64_t>({0, 0})}),
              Code::INVALID_ARGUMENT, "Must have at least one class");
}

TEST(NnKernelLoss, L2Loss) {
  KernelRunner l2(Typed("L2Loss", DT_FLOAT));
  TW_ASSERT_OK(l2.Compute({MakeTensor<float>({2, 2}, {1, -2, 3, 0.5})}));
  ExpectNear<float>(l2.output(0), {}, {(1 + 4 + 9 + 0.25f) / 2});
  TW_ASSERT_OK(l2.Compute({Tensor(DT_FLOAT, TensorShape({0}))}));
  ExpectValues<float>(l2.output(0), {}, {0});
  std::mt19937 rng(3);
  const Tensor big = RandomTensor<double>(TensorShape({100001}), &rng);
  KernelRunner l2_double(Typed("L2Loss", DT_DOUBLE));
  TW_ASSERT_OK(l2_double.Compute({big}));
  double expected = 0;
  for (int64_t i = 0; i < big.NumElements(); ++i)
    expected += big.data<double>()[i] * big.data<double>()[i];
  ExpectNear<double>(l2_double.output(0), {}, {expected / 2}, 1e-12);
}

TEST(NnKernelBias, BiasAddGrad) {
  std::mt19937 rng(5);
  // The last dimension 37 is two blocks of 16 channels and a tail of 5 for
  // NHWC, where the kernel adds rows 16 channels at a time.
  for (const TensorShape& shape : {TensorShape({3, 4, 5, 6}), TensorShape({3, 4, 5, 37})}) {
    for (const char* format : {"NHWC", "NCHW"}) {
      SCOPED_TRACE(StrCat(format, " ", shape.DebugString()));
      const bool nchw = std::string(format) == "NCHW";
      const Tensor grad = RandomTensor<double>(shape, &rng);
      const int channel = nchw ? 1 : 3;
      const int64_t image_size = shape.dim_size(2) * shape.dim_size(3);
      std::vector<double> expected(shape.dim_size(channel), 0.0);
      for (int64_t i = 0; i < shape.num_elements(); ++i) {
        const int64_t c = nchw ? (i / image_size) % shape.dim_size(1) : i % shape.dim_size(3);
        expected[c] += grad.data<double>()[i];
      }
      KernelRunner bias_grad(
          NodeBuilder("BiasAddGrad").Attr("T", DT_DOUBLE).Attr("data_format", format).Build());
      TW_ASSERT_OK(bias_grad.Compute({grad}));
      ExpectNear<double>(bias_grad.output(0), {shape.dim_size(channel)}, expected, 1e-12);
    }
  }
  KernelRunner matrix(Typed("BiasAddGrad", DT_FLOAT));
  TW_ASSERT_OK(matrix.Compute({MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}));
  ExpectValues<float>(matrix.output(0), {3}, {5, 7, 9});
  ExpectError(matrix.Compute({Vector<float>({1, 2})}), Code::INVALID_ARGUMENT,
              "Input tensor must be at least 2D");
}

// --- BatchMatMulV2 --------------------------------------------------------------------

TEST(NnKernelBatchMatMul, BroadcastsAndAdjoints) {
  std::mt19937 rng(9);
  struct Case {
    std::vector<int64_t> x, y;
    bool adj_x, adj_y;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, {2, 4, 5}, false, false},  {{2, 4, 3}, {2, 4, 5}, true, false},
      {{2, 3, 4}, {2, 5, 4}, false, true},   {{3, 1, 4, 3}, {2, 5, 4}, true, true},
      {{3, 4}, {6, 4, 2}, false, false},     {{5, 1, 2, 3}, {1, 4, 3, 2}, false, false},
      {{8, 20, 30}, {30, 40}, false, false},
  };
  for (const Case& k : cases) {
    TensorShape xs, ys;
    TW_ASSERT_OK(TensorShape::Build(k.x, &xs));
    TW_ASSERT_OK(TensorShape::Build(k.y, &ys));
    const Tensor x = RandomTensor<double>(xs, &rng);
    const Tensor y = RandomTensor<double>(ys, &rng);
    KernelRunner bmm(NodeBuilder("BatchMatMulV2")
                         .Attr("T", DT_DOUBLE)
                         .Attr("adj_x", k.adj_x)
                         .Attr("adj_y", k.adj_y)
                         .Build());
    TW_ASSERT_OK(bmm.Compute({x, y}));
    const Tensor& out = bmm.output(0);
    const int xr = xs.dims(), r = out.dims();
    const int64_t m = out.dim_size(r - 2), n = out.dim_size(r - 1);
    const int64_t kk = xs.dim_size(k.adj_x ? xr - 2 : xr - 1);
    const int64_t batches = out.NumElements() / (m * n);
    std::vector<double> expected;
    for (int64_t b = 0; b < batches; ++b) {
      // The batch index of out, then of x and y (size-1 dims broadcast).
      std::vector<int64_t> index(r - 2);
      int64_t rest = b;
      for (int i = r - 3; i >= 0; --i) {
        index[i] = rest % out.dim_size(i);
        rest /= out.dim_size(i);
      }
      auto offset = [&](const TensorShape& s) {
        int64_t linear = 0;
        const int lead = (r - 2) - (s.dims() - 2);
        for (int i = 0; i < s.dims() - 2; ++i) {
          linear = linear * s.dim_size(i) + (s.dim_size(i) == 1 ? 0 : index[lead + i]);
        }
        return linear * s.dim_size(s.dims() - 2) * s.dim_size(s.dims() - 1);
      };
      const double* xm = x.data<double>() + offset(xs);
      const double* ym = y.data<double>() + offset(ys);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t p = 0; p < kk; ++p) {
            sum += (k.adj_x ? xm[p * m + i] : xm[i * kk + p]) *
                   (k.adj_y ? ym[j * kk + p] : ym[p * n + j]);
          }
          expected.push_back(sum);
        }
    }
    ExpectNear<double>(out, out.shape(), expected, 1e-12);
  }
  KernelRunner bmm(Typed("BatchMatMulV2", DT_FLOAT));
  ExpectError(bmm.Compute({Tensor(DT_FLOAT, TensorShape({2, 3, 4})),
                           Tensor(DT_FLOAT, TensorShape({2, 5, 4}))}),
              Code::INVALID_ARGUMENT, "Matrix size-incompatible");
  ExpectError(bmm.Compute({Tensor(DT_FLOAT, TensorShape({2, 3, 4})),
                           Tensor(DT_FLOAT, TensorShape({3, 4, 4}))}),
              Code::INVALID_ARGUMENT, "compatible batch dimensions");
  ExpectError(bmm.Compute({Vector<float>({1}), Tensor(DT_FLOAT, TensorShape({1, 1}))}),
              Code::INVALID_ARGUMENT, "In[0] ndims must be >= 2");
}

// Float batches big enough for oneDNN, with y adjoint (the cached matmul
// primitive's path) and odd sizes, each batch checked against a double sum.
TEST(NnKernelBatchMatMul, FloatAdjointsAtOddSizes) {
  std::mt19937 rng(12);
  for (bool adj_x : {false, true}) {
    for (bool adj_y : {false, true}) {
      const int64_t batches = 3, m = 33, k = 70, n = 51;
      const Tensor x = RandomTensor<float>(
          adj_x ? TensorShape({batches, k, m}) : TensorShape({batches, m, k}), &rng);
      const Tensor y = RandomTensor<float>(
          adj_y ? TensorShape({batches, n, k}) : TensorShape({batches, k, n}), &rng);
      KernelRunner bmm(NodeBuilder("BatchMatMulV2")
                           .Attr("T", DT_FLOAT)
                           .Attr("adj_x", adj_x)
                           .Attr("adj_y", adj_y)
                           .Build());
      TW_ASSERT_OK(bmm.Compute({x, y}));
      std::vector<float> expected;
      for (int64_t b = 0; b < batches; ++b) {
        const float* xm = x.data<float>() + b * m * k;
        const float* ym = y.data<float>() + b * k * n;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (int64_t p = 0; p < k; ++p) {
              sum += static_cast<double>(adj_x ? xm[p * m + i] : xm[i * k + p]) *
                     (adj_y ? ym[j * k + p] : ym[p * n + j]);
            }
            expected.push_back(static_cast<float>(sum));
          }
        }
      }
      ExpectNear<float>(bmm.output(0), {batches, m, n}, expected, 1e-4);
    }
  }
}

// --- shape functions -------------------------------------------------------------------

TEST(NnShapes, ConvPoolAndMatMul) {
  std::vector<PartialTensorShape> out;
  TW_ASSERT_OK(InferShapes(WindowNode("Conv2D", DT_FLOAT, {1, 2, 2, 1}, "SAME"),
                           {Partial({-1, 7, 8, 3}), Partial({3, 3, 3, 16})}, {}, &out));
  EXPECT_EQ(out[0], Partial({-1, 4, 4, 16}));
  TW_ASSERT_OK(InferShapes(WindowNode("Conv2D", DT_FLOAT, {1, 1, 1, 1}, "VALID"),
                           {Partial({2, 7, -1, 3}), Unknown()}, {}, &out));
  EXPECT_EQ(out[0], Partial({2, -1, -1, -1}));
  ExpectError(InferShapes(WindowNode("Conv2D", DT_FLOAT, {1, 1, 1, 1}, "VALID"),
                          {Partial({2, 7, 7, 3}), Partial({3, 3, 4, 1})}, {}, &out),
              Code::INVALID_ARGUMENT, "input depth must equal filter depth");
  const Tensor sizes = Vector<int32_t>({2, 9, 9, 3});
  TW_ASSERT_OK(InferShapes(WindowNode("Conv2DBackpropInput", DT_FLOAT, {1, 1, 1, 1}, "SAME"),
                           {Partial({4}), Unknown(), Unknown()}, {&sizes}, &out));
  EXPECT_EQ(out[0], Partial({2, 9, 9, 3}));
  TW_ASSERT_OK(InferShapes(WindowNode("MaxPool", DT_FLOAT, {1, 2, 2, 1}, "VALID", {1, 3, 3, 1}),
                           {Partial({5, 9, 8, 2})}, {}, &out));
  EXPECT_EQ(out[0], Partial({5, 4, 3, 2}));
  TW_ASSERT_OK(
      InferShapes(NodeBuilder("BatchMatMulV2").Attr("T", DT_FLOAT).Attr("adj_y", true).Build(),
                  {Partial({3, 1, 4, 5}), Partial({6, 7, 5})}, {}, &out));
  EXPECT_EQ(out[0], Partial({3, 6, 4, 7}));
  TW_ASSERT_OK(InferShapes(Typed("SparseSoftmaxCrossEntropyWithLogits", DT_FLOAT),
                           {Partial({-1, 10}), Partial({32})}, {}, &out));
  EXPECT_EQ(out[0], Partial({32}));
  EXPECT_EQ(out[1], Partial({32, 10}));
  TW_ASSERT_OK(InferShapes(Typed("BiasAddGrad", DT_FLOAT), {Partial({-1, 5, 7})}, {}, &out));
  EXPECT_EQ(out[0], Partial({7}));
}

// Step time of the demo CNN's first layer (printed, not asserted: timings
// depend on the machine and its load).
TEST(NnKernelConv, TimingOfTheDemoLayer) {
  std::mt19937 rng(1);
  const Tensor input = RandomTensor<float>(TensorShape({128, 8, 8, 1}), &rng);
  const Tensor filter = RandomTensor<float>(TensorShape({3, 3, 1, 32}), &rng);
  KernelRunner conv(WindowNode("Conv2D", DT_FLOAT, {1, 1, 1, 1}, "SAME"));
  TW_ASSERT_OK(conv.Compute({input, filter}));
  double best = 1e30;
  for (int repeat = 0; repeat < 5; ++repeat) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 50; ++i) TW_ASSERT_OK(conv.Compute({input, filter}));
    const std::chrono::duration<double, std::micro> elapsed =
        std::chrono::steady_clock::now() - start;
    best = std::min(best, elapsed.count() / 50);
  }
  std::printf("Conv2D 128x8x8x1 * 3x3x1x32 SAME: %.1f us\n", best);
}

}  // namespace
}  // namespace test
}  // namespace tensorweave
