// Tests of DepthwiseConv2dNative and its two backprop kernels against naive
// reference loops (strides, dilations, SAME/VALID/EXPLICIT padding, channel
// multipliers, NHWC and NCHW, float and double, sizes that take the
// parallel path), the shared geometry (attr checks, overflow), the shape
// functions, and bad inputs.
#include <random>

#include "runtime/framework/depthwise_geometry.h"
#include "tests/runtime/kernel_test_util.h"

namespace tensorweave {
namespace test {
namespace {

void SetList(NodeDef* node, const char* name, const std::vector<int64_t>& values) {
  AttrValue& attr = (*node->mutable_attr())[name];
  attr.mutable_list();
  for (int64_t v : values) attr.mutable_list()->add_i(v);
}

struct Case {
  int64_t batch, rows, cols, depth;
  int64_t filter_rows, filter_cols, multiplier;
  int64_t stride_rows, stride_cols, dilation_rows, dilation_cols;
  std::string padding;                               // SAME, VALID or EXPLICIT
  int64_t top = 0, bottom = 0, left = 0, right = 0;  // EXPLICIT only
};

NodeDef DepthwiseNode(const char* op, DataType dtype, const Case& k, bool nchw) {
  NodeDef node = NodeBuilder(op, "depthwise_node")
                     .Attr("T", dtype)
                     .Attr("padding", k.padding)
                     .Attr("data_format", nchw ? "NCHW" : "NHWC")
                     .Build();
  if (nchw) {
    SetList(&node, "strides", {1, 1, k.stride_rows, k.stride_cols});
    SetList(&node, "dilations", {1, 1, k.dilation_rows, k.dilation_cols});
  } else {
    SetList(&node, "strides", {1, k.stride_rows, k.stride_cols, 1});
    SetList(&node, "dilations", {1, k.dilation_rows, k.dilation_cols, 1});
  }
  if (k.padding == "EXPLICIT") {
    SetList(&node, "explicit_paddings",
            nchw ? std::vector<int64_t>{0, 0, 0, 0, k.top, k.bottom, k.left, k.right}
                 : std::vector<int64_t>{0, 0, k.top, k.bottom, k.left, k.right, 0, 0});
  }
  return node;
}

// One dimension's output size and padding before, derived here without the
// geometry helpers.
void Reference1D(int64_t in, int64_t window, int64_t stride, int64_t dilation,
                 const std::string& padding, int64_t before, int64_t after, int64_t* out,
                 int64_t* pad) {
  const int64_t effective = (window - 1) * dilation + 1;
  if (padding == "SAME") {
    *out = (in + stride - 1) / stride;
    *pad = std::max<int64_t>(0, (*out - 1) * stride + effective - in) / 2;
  } else if (padding == "VALID") {
    *out = (in - effective) / stride + 1;
    *pad = 0;
  } else {
    *out = (in + before + after - effective) / stride + 1;
    *pad = before;
  }
}

// Naive NHWC loops: the forward output, and for an output gradient dy the
// input and filter gradients.
struct Reference {
  int64_t out_rows, out_cols, pad_rows, pad_cols;
  std::vector<double> y, dx, dw;
};

Reference Naive(const Case& k, const std::vector<double>& x, const std::vector<double>& w,
                const std::vector<double>& dy) {
  Reference r;
  Reference1D(k.rows, k.filter_rows, k.stride_rows, k.dilation_rows, k.padding, k.top, k.bottom,
              &r.out_rows, &r.pad_rows);
  Reference1D(k.cols, k.filter_cols, k.stride_cols, k.dilation_cols, k.padding, k.left, k.right,
              &r.out_cols, &r.pad_cols);
  const int64_t out_depth = k.depth * k.multiplier;
  r.y.assign(k.batch * r.out_rows * r.out_cols * out_depth, 0.0);
  r.dx.assign(x.size(), 0.0);
  r.dw.assign(w.size(), 0.0);
  for (int64_t n = 0; n < k.batch; ++n)
    for (int64_t i = 0; i < r.out_rows; ++i)
      for (int64_t j = 0; j < r.out_cols; ++j)
        for (int64_t c = 0; c < k.depth; ++c)
          for (int64_t m = 0; m < k.multiplier; ++m) {
            const int64_t o =
                ((n * r.out_rows + i) * r.out_cols + j) * out_depth + c * k.multiplier + m;
            for (int64_t a = 0; a < k.filter_rows; ++a)
              for (int64_t b = 0; b < k.filter_cols; ++b) {
                const int64_t row = i * k.stride_rows - r.pad_rows + a * k.dilation_rows;
                const int64_t col = j * k.stride_cols - r.pad_cols + b * k.dilation_cols;
                if (row < 0 || row >= k.rows || col < 0 || col >= k.cols) continue;
                const int64_t xi = ((n * k.rows + row) * k.cols + col) * k.depth + c;
                const int64_t wi = ((a * k.filter_cols + b) * k.depth + c) * k.multiplier + m;
                r.y[o] += x[xi] * w[wi];
                r.dx[xi] += dy[o] * w[wi];
                r.dw[wi] += dy[o] * x[xi];
              }
          }
  return r;
}

std::vector<double> RandomValues(int64_t count, std::mt19937* rng) {
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> values(count);
  for (double& v : values) v = dist(*rng);
  return values;
}

template <typename T>
Tensor ToTensor(const TensorShape& shape, const std::vector<double>& values) {
  return MakeTensor<T>(shape, std::vector<T>(values.begin(), values.end()));
}

// NHWC values as an NCHW tensor of T, or NHWC when !nchw.
template <typename T>
Tensor Layout(const std::vector<double>& nhwc, int64_t n, int64_t h, int64_t w, int64_t c,
              bool nchw) {
  if (!nchw) return ToTensor<T>(TensorShape({n, h, w, c}), nhwc);
  std::vector<double> moved(nhwc.size());
  for (int64_t a = 0; a < n; ++a)
    for (int64_t i = 0; i < h; ++i)
      for (int64_t j = 0; j < w; ++j)
        for (int64_t d = 0; d < c; ++d)
          moved[((a * c + d) * h + i) * w + j] = nhwc[((a * h + i) * w + j) * c + d];
  return ToTensor<T>(TensorShape({n, c, h, w}), moved);
}

template <typename T>
void ExpectClose(const Tensor& got, const Tensor& expected, double tolerance) {
  ASSERT_EQ(got.shape(), expected.shape());
  ASSERT_EQ(got.dtype(), expected.dtype());
  for (int64_t i = 0; i < got.NumElements(); ++i) {
    ASSERT_NEAR(got.data<T>()[i], expected.data<T>()[i], tolerance) << "element " << i;
  }
}

Tensor Sizes(int64_t a, int64_t b, int64_t c, int64_t d) {
  return Vector<int32_t>({static_cast<int32_t>(a), static_cast<int32_t>(b), static_cast<int32_t>(c),
                          static_cast<int32_t>(d)});
}

template <typename T>
void CheckCase(const Case& k, bool nchw, std::mt19937* rng) {
  SCOPED_TRACE(testing::Message() << "case " << k.batch << "x" << k.rows << "x" << k.cols << "x"
                                  << k.depth << " filter " << k.filter_rows << "x" << k.filter_cols
                                  << "x" << k.multiplier << " " << k.padding
                                  << (nchw ? " NCHW" : " NHWC"));
  const DataType dtype = DataTypeToEnum<T>::value;
  const double tolerance = sizeof(T) == 4 ? 1e-4 : 1e-11;
  const int64_t out_depth = k.depth * k.multiplier;
  const std::vector<double> x = RandomValues(k.batch * k.rows * k.cols * k.depth, rng);
  const std::vector<double> w =
      RandomValues(k.filter_rows * k.filter_cols * k.depth * k.multiplier, rng);
  Reference shape = Naive(k, x, w, std::vector<double>(1 << 20, 0.0));
  const std::vector<double> dy =
      RandomValues(k.batch * shape.out_rows * shape.out_cols * out_depth, rng);
  const Reference r = Naive(k, x, w, dy);
  const TensorShape filter_shape({k.filter_rows, k.filter_cols, k.depth, k.multiplier});
  const Tensor filter = ToTensor<T>(filter_shape, w);
  const Tensor input = Layout<T>(x, k.batch, k.rows, k.cols, k.depth, nchw);
  const Tensor grad = Layout<T>(dy, k.batch, r.out_rows, r.out_cols, out_depth, nchw);

  KernelRunner forward(DepthwiseNode("DepthwiseConv2dNative", dtype, k, nchw));
  TW_ASSERT_OK(forward.Compute({input, filter}));
  ExpectClose<T>(forward.output(0),
                 Layout<T>(r.y, k.batch, r.out_rows, r.out_cols, out_depth, nchw), tolerance);

  KernelRunner backprop_input(DepthwiseNode("DepthwiseConv2dNativeBackpropInput", dtype, k, nchw));
  const Tensor input_sizes =
      nchw ? Sizes(k.batch, k.depth, k.rows, k.cols) : Sizes(k.batch, k.rows, k.cols, k.depth);
  TW_ASSERT_OK(backprop_input.Compute({input_sizes, filter, grad}));
  ExpectClose<T>(backprop_input.output(0), Layout<T>(r.dx, k.batch, k.rows, k.cols, k.depth, nchw),
                 tolerance);

  KernelRunner backprop_filter(
      DepthwiseNode("DepthwiseConv2dNativeBackpropFilter", dtype, k, nchw));
  TW_ASSERT_OK(backprop_filter.Compute(
      {input, Sizes(k.filter_rows, k.filter_cols, k.depth, k.multiplier), grad}));
  ExpectClose<T>(backprop_filter.output(0), ToTensor<T>(filter_shape, r.dw),
                 tolerance * (1 + k.batch * r.out_rows * r.out_cols / 64.0));
}

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {1, 5, 5, 1, 3, 3, 1, 1, 1, 1, 1, "SAME"},
      {2, 7, 6, 3, 3, 2, 2, 2, 2, 1, 1, "SAME"},
      {2, 7, 6, 3, 3, 2, 1, 2, 3, 1, 1, "VALID"},
      {1, 9, 9, 2, 3, 3, 3, 1, 1, 2, 2, "SAME"},
      {1, 9, 10, 4, 3, 2, 1, 1, 1, 3, 2, "VALID"},
      {2, 6, 7, 5, 2, 3, 1, 2, 1, 1, 1, "EXPLICIT", 1, 2, 0, 3},
      {1, 4, 4, 3, 5, 5, 2, 3, 3, 1, 1, "SAME"},   // window larger than the input
      {3, 8, 8, 40, 3, 3, 1, 1, 1, 1, 1, "SAME"},  // 40 channels: a block and a remainder
      {2, 12, 11, 33, 3, 3, 1, 2, 2, 1, 1, "SAME"},
      {1, 1, 9, 2, 1, 3, 1, 1, 2, 1, 1, "SAME"},
      {2, 16, 16, 64, 3, 3, 1, 1, 1, 1, 1, "SAME"},  // enough work for the thread pool
  };
  return cases;
}

TEST(DepthwiseConvKernels, MatchNaiveLoopsNhwcAndNchw) {
  std::mt19937 rng(5);
  for (const Case& k : Cases()) {
    for (bool nchw : {false, true}) {
      CheckCase<float>(k, nchw, &rng);
      CheckCase<double>(k, nchw, &rng);
    }
  }
}

Status Parse(const Case& k, bool nchw, DepthwiseAttrs* attrs) {
  return ParseDepthwiseAttrs(DepthwiseNode("DepthwiseConv2dNative", DT_FLOAT, k, nchw), attrs);
}

TEST(DepthwiseGeometry, AttrChecks) {
  DepthwiseAttrs attrs;
  Case k{1, 4, 4, 2, 2, 2, 1, 1, 1, 1, 1, "SAME"};
  TW_EXPECT_OK(Parse(k, false, &attrs));
  NodeDef node = DepthwiseNode("DepthwiseConv2dNative", DT_FLOAT, k, false);
  SetList(&node, "strides", {2, 1, 1, 1});
  EXPECT_EQ(ParseDepthwiseAttrs(node, &attrs).code(), Code::INVALID_ARGUMENT);
  SetList(&node, "strides", {1, 1, 1, 1});
  node.mutable_attr()->erase("strides");
  SetList(&node, "strides", {1, 1, 1});
  EXPECT_EQ(ParseDepthwiseAttrs(node, &attrs).code(), Code::INVALID_ARGUMENT);
  node.mutable_attr()->erase("strides");
  SetList(&node, "strides", {1, int64_t{1} << 40, 1, 1});
  EXPECT_EQ(ParseDepthwiseAttrs(node, &attrs).code(), Code::INVALID_ARGUMENT);
  // NCHW reads the channel position at 1: a dilation there is refused.
  NodeDef nchw = DepthwiseNode("DepthwiseConv2dNative", DT_FLOAT, k, true);
  nchw.mutable_attr()->erase("dilations");
  SetList(&nchw, "dilations", {1, 2, 1, 1});
  EXPECT_EQ(ParseDepthwiseAttrs(nchw, &attrs).code(), Code::INVALID_ARGUMENT);
  // explicit_paddings: only with EXPLICIT, 8 values, non-negative, none on N or C.
  Case e{1, 4, 4, 2, 2, 2, 1, 1, 1, 1, 1, "EXPLICIT", 1, 1, 1, 1};
  NodeDef explicit_node = DepthwiseNode("DepthwiseConv2dNative", DT_FLOAT, e, false);
  TW_EXPECT_OK(ParseDepthwiseAttrs(explicit_node, &attrs));
  EXPECT_EQ(attrs.pad_top, 1);
  for (const std::vector<int64_t>& pads :
       std::vector<std::vector<int64_t>>{{0, 0, 1, 1},
                                         {0, 0, 1, -1, 0, 0, 0, 0},
                                         {0, 1, 0, 0, 0, 0, 0, 0},
                                         {0, 0, 0, 0, 0, 0, 1, 0},
                                         {0, 0, int64_t{1} << 40, 0, 0, 0, 0, 0}}) {
    explicit_node.mutable_attr()->erase("explicit_paddings");
    SetList(&explicit_node, "explicit_paddings", pads);
    EXPECT_EQ(ParseDepthwiseAttrs(explicit_node, &attrs).code(), Code::INVALID_ARGUMENT);
  }
  NodeDef same = DepthwiseNode("DepthwiseConv2dNative", DT_FLOAT, k, false);
  SetList(&same, "explicit_paddings", {0, 0, 1, 1, 1, 1, 0, 0});
  EXPECT_EQ(ParseDepthwiseAttrs(same, &attrs).code(), Code::INVALID_ARGUMENT);
}

TEST(DepthwiseGeometry, OverflowAndMismatchesAreInvalidArgument) {
  DepthwiseAttrs attrs;
  TW_ASSERT_OK(Parse({1, 4, 4, 2, 2, 2, 1, 1, 1, 1, 1, "SAME"}, false, &attrs));
  DepthwiseGeometry g;
  TensorShape out;
  const int64_t big = int64_t{1} << 40;
  EXPECT_EQ(ComputeDepthwiseGeometry(TensorShape({1, 1, 1, big}), TensorShape({1, 1, big, big}),
                                     attrs, &g, &out)
                .code(),
            Code::INVALID_ARGUMENT);
  EXPECT_EQ(ComputeDepthwiseGeometry(TensorShape({1, 4, 4, 3}), TensorShape({2, 2, 2, 1}), attrs,
                                     &g, &out)
                .code(),
            Code::INVALID_ARGUMENT);
  EXPECT_EQ(
      ComputeDepthwiseGeometry(TensorShape({4, 4, 3}), TensorShape({2, 2, 3, 1}), attrs, &g, &out)
          .code(),
      Code::INVALID_ARGUMENT);
  TW_ASSERT_OK(ComputeDepthwiseGeometry(TensorShape({2, 5, 6, 3}), TensorShape({3, 3, 3, 4}), attrs,
                                        &g, &out));
  EXPECT_EQ(out, TensorShape({2, 5, 6, 12}));
  TW_ASSERT_OK(Parse({1, 4, 4, 2, 2, 2, 1, 1, 1, 1, 1, "VALID"}, true, &attrs));
  TW_ASSERT_OK(ComputeDepthwiseGeometry(TensorShape({2, 3, 5, 6}), TensorShape({3, 3, 3, 2}), attrs,
                                        &g, &out));
  EXPECT_EQ(out, TensorShape({2, 6, 3, 4}));
  EXPECT_EQ(ComputeDepthwiseGeometry(TensorShape({2, 3, 2, 6}), TensorShape({3, 3, 3, 2}), attrs,
                                     &g, &out)
                .code(),
            Code::INVALID_ARGUMENT);
}

TEST(DepthwiseConvShapes, KnownAndUnknownDims) {
  std::vector<PartialTensorShape> outputs;
  Case k{1, 4, 4, 2, 3, 3, 2, 2, 2, 1, 1, "SAME"};
  PartialTensorShape input, filter;
  TW_ASSERT_OK(PartialTensorShape::Build({-1, 17, -1, 6}, &input));
  TW_ASSERT_OK(PartialTensorShape::Build({3, 3, 6, 2}, &filter));
  TW_ASSERT_OK(InferShapes(DepthwiseNode("DepthwiseConv2dNative", DT_FLOAT, k, false),
                           {input, filter}, {nullptr, nullptr}, &outputs));
  EXPECT_EQ(outputs[0].DebugString(), "[?,9,?,12]");
  TW_ASSERT_OK(PartialTensorShape::Build({3, 3, 5, 2}, &filter));
  const Status mismatch = InferShapes(DepthwiseNode("DepthwiseConv2dNative", DT_FLOAT, k, false),
                                      {input, filter}, {nullptr, nullptr}, &outputs);
  EXPECT_EQ(mismatch.code(), Code::INVALID_ARGUMENT);
  EXPECT_NE(mismatch.message().find("depthwise_node"), std::string::npos) << mismatch;
  // The backprops take their output shape from the sizes input.
  const Tensor sizes = Sizes(2, 5, 5, 3);
  TW_ASSERT_OK(
      InferShapes(DepthwiseNode("DepthwiseConv2dNativeBackpropInput", DT_FLOAT, k, false),
                  {PartialTensorShape::FromShape(TensorShape({4})), filter, PartialTensorShape()},
                  {&sizes, nullptr, nullptr}, &outputs));
  EXPECT_EQ(outputs[0].DebugString(), "[2,5,5,3]");
  TW_ASSERT_OK(InferShapes(
      DepthwiseNode("DepthwiseConv2dNativeBackpropFilter", DT_FLOAT, k, false),
      {PartialTensorShape(), PartialTensorShape::FromShape(TensorShape({4})), PartialTensorShape()},
      {nullptr, nullptr, nullptr}, &outputs));
  EXPECT_EQ(outputs[0].DebugString(), "[?,?,?,?]");
}

TEST(DepthwiseConvKernels, BadInputsAreInvalidArgument) {
  Case k{1, 4, 4, 3, 3, 3, 1, 1, 1, 1, 1, "VALID"};
  KernelRunner forward(DepthwiseNode("DepthwiseConv2dNative", DT_FLOAT, k, false));
  EXPECT_EQ(forward
                .Compute({Tensor(DT_FLOAT, TensorShape({1, 4, 4, 3})),
                          Tensor(DT_FLOAT, TensorShape({3, 3, 2, 1}))})
                .code(),
            Code::INVALID_ARGUMENT);
  EXPECT_EQ(forward
                .Compute({Tensor(DT_FLOAT, TensorShape({1, 2, 2, 3})),
                          Tensor(DT_FLOAT, TensorShape({3, 3, 3, 1}))})
                .code(),
            Code::INVALID_ARGUMENT);
  KernelRunner backprop_input(
      DepthwiseNode("DepthwiseConv2dNativeBackpropInput", DT_FLOAT, k, false));
  EXPECT_EQ(backprop_input
                .Compute({Sizes(1, 4, 4, 3), Tensor(DT_FLOAT, TensorShape({3, 3, 3, 1})),
                          Tensor(DT_FLOAT, TensorShape({1, 3, 3, 3}))})
                .code(),
            Code::INVALID_ARGUMENT);  // out_backprop is [1, 2, 2, 3]
  EXPECT_EQ(backprop_input
                .Compute({Vector<int32_t>({1, 4, 4}), Tensor(DT_FLOAT, TensorShape({3, 3, 3, 1})),
                          Tensor(DT_FLOAT, TensorShape({1, 2, 2, 3}))})
                .code(),
            Code::INVALID_ARGUMENT);
  KernelRunner backprop_filter(
      DepthwiseNode("DepthwiseConv2dNativeBackpropFilter", DT_FLOAT, k, false));
  EXPECT_EQ(backprop_filter
                .Compute({Tensor(DT_FLOAT, TensorShape({1, 4, 4, 3})), Sizes(3, 3, 3, 1 << 30),
                          Tensor(DT_FLOAT, TensorShape({1, 2, 2, 3}))})
                .code(),
            Code::INVALID_ARGUMENT);
  EXPECT_EQ(backprop_filter
                .Compute({Tensor(DT_FLOAT, TensorShape({1, 4, 4, 3})), Sizes(3, -3, 3, 1),
                          Tensor(DT_FLOAT, TensorShape({1, 2, 2, 3}))})
                .code(),
            Code::INVALID_ARGUMENT);
}

TEST(DepthwiseConvKernels, EmptyBatchGivesEmptyOutputAndZeroFilterGradient) {
  Case k{0, 4, 4, 2, 3, 3, 2, 1, 1, 1, 1, "SAME"};
  KernelRunner forward(DepthwiseNode("DepthwiseConv2dNative", DT_FLOAT, k, false));
  TW_ASSERT_OK(forward.Compute(
      {Tensor(DT_FLOAT, TensorShape({0, 4, 4, 2})), Tensor(DT_FLOAT, TensorShape({3, 3, 2, 2}))}));
  EXPECT_EQ(forward.output(0).shape(), TensorShape({0, 4, 4, 4}));
  KernelRunner backprop_filter(
      DepthwiseNode("DepthwiseConv2dNativeBackpropFilter", DT_FLOAT, k, true));
  TW_ASSERT_OK(
      backprop_filter.Compute({Tensor(DT_FLOAT, TensorShape({0, 2, 4, 4})), Sizes(3, 3, 2, 2),
                               Tensor(DT_FLOAT, TensorShape({0, 4, 4, 4}))}));
  ExpectValues<float>(backprop_filter.output(0), {3, 3, 2, 2}, std::vector<float>(36, 0.0f));
}

}  // namespace
}  // namespace test
}  // namespace tensorweave
