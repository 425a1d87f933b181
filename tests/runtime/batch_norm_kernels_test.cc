// Tests of the FusedBatchNorm family's kernels and shape functions: forward
// (training and inference, with and without exponential_avg_factor) and
// backward against naive double-precision loops, in the four layouts
// (NHWC, NCHW, NDHWC, NCDHW) and at sizes that run on the thread pool; the
// empty-batch and one-value-per-channel cases; bad inputs; shapes.
#include <cmath>
#include <random>

#include "tests/runtime/kernel_test_util.h"

namespace tensorweave {
namespace test {
namespace {

struct Layout {
  const char* format;
  TensorShape shape;
};

int ChannelDim(const Layout& layout) {
  return layout.format[1] == 'C' ? 1 : layout.shape.dims() - 1;
}

// The channel of every flat index of a tensor in `layout`.
std::vector<int64_t> ChannelOfEachIndex(const Layout& layout) {
  const int channel_dim = ChannelDim(layout);
  int64_t inner = 1;
  for (int i = channel_dim + 1; i < layout.shape.dims(); ++i) inner *= layout.shape.dim_size(i);
  const int64_t channels = layout.shape.dim_size(channel_dim);
  std::vector<int64_t> channel(layout.shape.num_elements());
  for (int64_t i = 0; i < static_cast<int64_t>(channel.size()); ++i) {
    channel[i] = (i / inner) % channels;
  }
  return channel;
}

Tensor RandomFloats(const TensorShape& shape, std::mt19937* rng, double scale, double mean) {
  std::normal_distribution<double> dist(mean, scale);
  Tensor tensor(DT_FLOAT, shape);
  for (int64_t i = 0; i < shape.num_elements(); ++i) tensor.data<float>()[i] = dist(*rng);
  return tensor;
}

Tensor PositiveFloats(int64_t n, std::mt19937* rng) {
  std::uniform_real_distribution<double> dist(0.25, 1.75);
  Tensor tensor(DT_FLOAT, TensorShape({n}));
  for (int64_t i = 0; i < n; ++i) tensor.data<float>()[i] = dist(*rng);
  return tensor;
}

NodeDef BatchNormNode(const char* op, const char* format, bool training, float epsilon,
                      float factor = 1.0f) {
  NodeBuilder builder(op);
  builder.Attr("T", DT_FLOAT).Attr("data_format", format).Attr("is_training", training);
  builder.Attr("epsilon", epsilon);
  if (std::string(op) != "FusedBatchNorm" && std::string(op) != "FusedBatchNormGrad") {
    builder.Attr("U", DT_FLOAT);
  }
  if (std::string(op).find("Grad") == std::string::npos) {
    builder.Attr("exponential_avg_factor", factor);
  }
  return builder.Build();
}

// Per-channel mean and biased variance of x, in double.
void ReferenceMoments(const Tensor& x, const std::vector<int64_t>& channel, int64_t channels,
                      std::vector<double>* mean, std::vector<double>* variance) {
  std::vector<double> count(channels, 0);
  mean->assign(channels, 0);
  variance->assign(channels, 0);
  for (size_t i = 0; i < channel.size(); ++i) {
    (*mean)[channel[i]] += x.data<float>()[i];
    count[channel[i]] += 1;
  }
  for (int64_t c = 0; c < channels; ++c) (*mean)[c] /= count[c];
  for (size_t i = 0; i < channel.size(); ++i) {
    const double d = x.data<float>()[i] - (*mean)[channel[i]];
    (*variance)[channel[i]] += d * d;
  }
  for (int64_t c = 0; c < channels; ++c) (*variance)[c] /= count[c];
}

std::vector<float> AsFloats(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}

const std::vector<Layout>& Layouts() {
  static const auto* layouts = new std::vector<Layout>{
      {"NHWC", TensorShape({2, 3, 4, 5})},     {"NCHW", TensorShape({2, 5, 3, 4})},
      {"NDHWC", TensorShape({2, 2, 3, 2, 3})}, {"NCDHW", TensorShape({2, 3, 2, 3, 2})},
      {"NHWC", TensorShape({8, 32, 32, 16})},  {"NCHW", TensorShape({4, 16, 32, 32})},
  };
  return *layouts;
}

TEST(FusedBatchNormKernel, TrainingMatchesReferenceInEveryLayout) {
  std::mt19937 rng(1);
  for (const Layout& layout : Layouts()) {
    for (float factor : {1.0f, 0.3f}) {
      SCOPED_TRACE(std::string(layout.format) + " " + layout.shape.DebugString() + " factor " +
                   std::to_string(factor));
      const int64_t channels = layout.shape.dim_size(ChannelDim(layout));
      Tensor x = RandomFloats(layout.shape, &rng, 2.0, 5.0);
      Tensor scale = PositiveFloats(channels, &rng);
      Tensor offset = RandomFloats(TensorShape({channels}), &rng, 1.0, 0.0);
      Tensor old_mean = RandomFloats(TensorShape({channels}), &rng, 1.0, 0.0);
      Tensor old_variance = PositiveFloats(channels, &rng);
      KernelRunner run(BatchNormNode("FusedBatchNormV3", layout.format, true, 0.001f, factor));
      TW_ASSERT_OK(run.Compute({x, scale, offset, old_mean, old_variance}));
      ASSERT_EQ(run.num_outputs(), 6);

      const std::vector<int64_t> channel = ChannelOfEachIndex(layout);
      std::vector<double> mean, variance;
      ReferenceMoments(x, channel, channels, &mean, &variance);
      const double n = static_cast<double>(layout.shape.num_elements() / channels);
      std::vector<double> y(channel.size()), running_mean(channels), running_variance(channels);
      for (size_t i = 0; i < channel.size(); ++i) {
        const int64_t c = channel[i];
        y[i] = (x.data<float>()[i] - mean[c]) / std::sqrt(variance[c] + 0.001) *
                   scale.data<float>()[c] +
               offset.data<float>()[c];
      }
      for (int64_t c = 0; c < channels; ++c) {
        const double unbiased = variance[c] * n / (n - 1);
        running_mean[c] = (1 - factor) * old_mean.data<float>()[c] + factor * mean[c];
        running_variance[c] = (1 - factor) * old_variance.data<float>()[c] + factor * unbiased;
      }
      ExpectNear<float>(run.output(0), layout.shape, AsFloats(y), 2e-5);
      ExpectNear<float>(run.output(1), TensorShape({channels}), AsFloats(running_mean), 1e-5);
      ExpectNear<float>(run.output(2), TensorShape({channels}), AsFloats(running_variance), 1e-5);
      ExpectNear<float>(run.output(3), TensorShape({channels}), AsFloats(mean), 1e-5);
      ExpectNear<float>(run.output(4), TensorShape({channels}), AsFloats(variance), 1e-5);
      EXPECT_EQ(run.output(5).shape(), TensorShape());
    }
  }
}

TEST(FusedBatchNormKernel, InferenceUsesTheGivenStatistics) {
  std::mt19937 rng(2);
  for (const Layout& layout : Layouts()) {
    SCOPED_TRACE(layout.format);
    const int64_t channels = layout.shape.dim_size(ChannelDim(layout));
    Tensor x = RandomFloats(layout.shape, &rng, 3.0, -1.0);
    Tensor scale = PositiveFloats(channels, &rng);
    Tensor offset = RandomFloats(TensorShape({channels}), &rng, 1.0, 0.0);
    Tensor mean = RandomFloats(TensorShape({channels}), &rng, 1.0, 0.0);
    Tensor variance = PositiveFloats(channels, &rng);
    KernelRunner run(BatchNormNode("FusedBatchNormV3", layout.format, false, 0.01f));
    TW_ASSERT_OK(run.Compute({x, scale, offset, mean, variance}));
    const std::vector<int64_t> channel = ChannelOfEachIndex(layout);
    std::vector<float> y(channel.size());
    for (size_t i = 0; i < channel.size(); ++i) {
      const int64_t c = channel[i];
      y[i] = (x.data<float>()[i] - mean.data<float>()[c]) /
                 std::sqrt(double{variance.data<float>()[c]} + 0.01) * scale.data<float>()[c] +
             offset.data<float>()[c];
    }
    ExpectNear<float>(run.output(0), layout.shape, y, 2e-5);
    ExpectValues<float>(run.output(1), TensorShape({channels}), Values<float>(mean));
    ExpectValues<float>(run.output(2), TensorShape({channels}), Values<float>(variance));
  }
}

// x_backprop, scale_backprop and offset_backprop in double from the
// definitions: in training the statistics are x's own.
void ReferenceGrad(const Layout& layout, bool training, const Tensor& dy, const Tensor& x,
                   const Tensor& scale, const Tensor& mean_in, const Tensor& variance_in,
                   double epsilon, std::vector<double>* dx, std::vector<double>* dscale,
                   std::vector<double>* doffset) {
  const int64_t channels = scale.NumElements();
  const std::vector<int64_t> channel = ChannelOfEachIndex(layout);
  const double n = static_cast<double>(channel.size() / channels);
  std::vector<double> mean(channels), variance(channels);
  for (int64_t c = 0; c < channels; ++c) {
    mean[c] = mean_in.data<float>()[c];
    variance[c] = variance_in.data<float>()[c];
  }
  std::vector<double> sum_dy(channels, 0), sum_dy_centered(channels, 0);
  for (size_t i = 0; i < channel.size(); ++i) {
    const int64_t c = channel[i];
    sum_dy[c] += dy.data<float>()[i];
    sum_dy_centered[c] += dy.data<float>()[i] * (x.data<float>()[i] - mean[c]);
  }
  dx->resize(channel.size());
  dscale->resize(channels);
  doffset->resize(channels);
  for (int64_t c = 0; c < channels; ++c) {
    const double inv_std = 1 / std::sqrt(variance[c] + epsilon);
    (*dscale)[c] = sum_dy_centered[c] * inv_std;
    (*doffset)[c] = sum_dy[c];
  }
  for (size_t i = 0; i < channel.size(); ++i) {
    const int64_t c = channel[i];
    const double inv_std = 1 / std::sqrt(variance[c] + epsilon);
    const double g = dy.data<float>()[i];
    if (!training) {
      (*dx)[i] = g * scale.data<float>()[c] * inv_std;
      continue;
    }
    const double centered = x.data<float>()[i] - mean[c];
    (*dx)[i] = scale.data<float>()[c] * inv_std *
               (g - sum_dy[c] / n - centered * inv_std * inv_std * sum_dy_centered[c] / n);
  }
}

TEST(FusedBatchNormGradKernel, MatchesReferenceInEveryLayoutAndMode) {
  std::mt19937 rng(3);
  for (const Layout& layout : Layouts()) {
    for (bool training : {true, false}) {
      SCOPED_TRACE(std::string(layout.format) + (training ? " training" : " inference"));
      const int64_t channels = layout.shape.dim_size(ChannelDim(layout));
      Tensor x = RandomFloats(layout.shape, &rng, 1.5, 0.5);
      Tensor dy = RandomFloats(layout.shape, &rng, 1.0, 0.2);
      Tensor scale = PositiveFloats(channels, &rng);
      Tensor mean(DT_FLOAT, TensorShape({channels})), variance(DT_FLOAT, TensorShape({channels}));
      std::vector<double> batch_mean, batch_variance;
      ReferenceMoments(x, ChannelOfEachIndex(layout), channels, &batch_mean, &batch_variance);
      for (int64_t c = 0; c < channels; ++c) {
        // Training gets x's own statistics (what the forward saved);
        // inference gets unrelated population ones.
        mean.data<float>()[c] = training ? batch_mean[c] : 0.1f * c;
        variance.data<float>()[c] = training ? batch_variance[c] : 0.5f + 0.2f * c;
      }
      KernelRunner run(BatchNormNode("FusedBatchNormGradV3", layout.format, training, 0.001f));
      TW_ASSERT_OK(run.Compute({dy, x, scale, mean, variance, Scalar<float>(0)}));
      std::vector<double> dx, dscale, doffset;
      ReferenceGrad(layout, training, dy, x, scale, mean, variance, 0.001, &dx, &dscale, &doffset);
      ExpectNear<float>(run.output(0), layout.shape, AsFloats(dx), 5e-5);
      ExpectNear<float>(run.output(1), TensorShape({channels}), AsFloats(dscale), 2e-5);
      ExpectNear<float>(run.output(2), TensorShape({channels}), AsFloats(doffset), 2e-5);
      EXPECT_EQ(run.output(3).shape(), TensorShape({0}));
      EXPECT_EQ(run.output(4).shape(), TensorShape({0}));
    }
  }
}

// y may take x's buffer and x_backprop y_backprop's when nothing else holds
// them; the results must not change.
TEST(FusedBatchNormKernel, ForwardedBuffersGiveTheSameResults) {
  std::mt19937 rng(6);
  for (const char* format : {"NHWC", "NCHW"}) {
    SCOPED_TRACE(format);
    const TensorShape shape({4, 6, 5, 6});
    Tensor x = RandomFloats(shape, &rng, 1.0, 0.5), dy = RandomFloats(shape, &rng, 1.0, 0.0);
    Tensor scale = PositiveFloats(6, &rng), offset = RandomFloats(TensorShape({6}), &rng, 1, 0);
    Tensor mean = RandomFloats(TensorShape({6}), &rng, 0.1, 0.5),
           variance = PositiveFloats(6, &rng);
    for (bool training : {true, false}) {
      KernelRunner forward(BatchNormNode("FusedBatchNormV3", format, training, 0.001f));
      TW_ASSERT_OK(forward.Compute({x, scale, offset, mean, variance}));
      const std::vector<float> y = Values<float>(forward.output(0));
      std::vector<Tensor> inputs = {x.DeepCopy(), scale, offset, mean, variance};
      TW_ASSERT_OK(forward.Compute(std::move(inputs)));
      EXPECT_TRUE(forward.output(0).SharesBufferWith(forward.inputs()[0].tensor));
      EXPECT_EQ(Values<float>(forward.output(0)), y);

      KernelRunner grad(BatchNormNode("FusedBatchNormGradV3", format, training, 0.001f));
      TW_ASSERT_OK(grad.Compute({dy, x, scale, mean, variance, Scalar<float>(0)}));
      const std::vector<float> dx = Values<float>(grad.output(0));
      std::vector<Tensor> grad_inputs = {dy.DeepCopy(), x, scale, mean, variance, Scalar<float>(0)};
      TW_ASSERT_OK(grad.Compute(std::move(grad_inputs)));
      EXPECT_TRUE(grad.output(0).SharesBufferWith(grad.inputs()[0].tensor));
      EXPECT_EQ(Values<float>(grad.output(0)), dx);
    }
  }
}

TEST(FusedBatchNormKernel, OlderVersionsComputeTheSame) {
  std::mt19937 rng(4);
  const TensorShape shape({3, 4, 2, 5});
  Tensor x = RandomFloats(shape, &rng, 1.0, 0.0);
  Tensor scale = PositiveFloats(5, &rng);
  Tensor offset = RandomFloats(TensorShape({5}), &rng, 1.0, 0.0);
  Tensor empty(DT_FLOAT, TensorShape({0}));
  std::vector<std::vector<float>> outputs;
  for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
    KernelRunner run(BatchNormNode(op, "NHWC", true, 0.001f));
    TW_ASSERT_OK(run.Compute({x, scale, offset, empty, empty}));
    EXPECT_EQ(run.num_outputs(), std::string(op) == "FusedBatchNormV3" ? 6 : 5);
    outputs.push_back(Values<float>(run.output(0)));
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  EXPECT_EQ(outputs[0], outputs[2]);
}

TEST(FusedBatchNormKernel, LargeMeanKeepsTheVariancePrecise) {
  // Values 10000 + N(0, 0.01): a one-pass sum of squares in float would
  // lose the variance entirely.
  std::mt19937 rng(5);
  const TensorShape shape({16, 8, 8, 2});
  Tensor x = RandomFloats(shape, &rng, 0.01, 10000.0);
  Tensor ones(DT_FLOAT, TensorShape({2})), zeros(DT_FLOAT, TensorShape({2}));
  for (int c = 0; c < 2; ++c) ones.data<float>()[c] = 1, zeros.data<float>()[c] = 0;
  KernelRunner run(BatchNormNode("FusedBatchNormV3", "NHWC", true, 1e-5f));
  TW_ASSERT_OK(run.Compute({x, ones, zeros, zeros, ones}));
  std::vector<double> mean, variance;
  const Layout layout{"NHWC", shape};
  ReferenceMoments(x, ChannelOfEachIndex(layout), 2, &mean, &variance);
  ExpectNear<float>(run.output(4), TensorShape({2}), AsFloats(variance), 1e-3);
}

TEST(FusedBatchNormKernel, EmptyBatchGivesNanStatistics) {
  Tensor x(DT_FLOAT, TensorShape({0, 2, 2, 3}));
  Tensor vector = Vector<float>({1, 1, 1});
  for (bool training : {true, false}) {
    KernelRunner run(BatchNormNode("FusedBatchNormV3", "NHWC", training, 0.001f));
    TW_ASSERT_OK(run.Compute({x, vector, vector, vector, vector}));
    EXPECT_EQ(run.output(0).shape(), x.shape());
    const float nan = std::nanf("");
    ExpectNear<float>(run.output(1), TensorShape({3}), {nan, nan, nan});
    ExpectNear<float>(run.output(2), TensorShape({3}), {nan, nan, nan});
  }
  KernelRunner grad(BatchNormNode("FusedBatchNormGradV3", "NHWC", true, 0.001f));
  TW_ASSERT_OK(grad.Compute({x, x, vector, vector, vector, vector}));
  ExpectValues<float>(grad.output(1), TensorShape({3}), {0, 0, 0});
  ExpectValues<float>(grad.output(2), TensorShape({3}), {0, 0, 0});
}

TEST(FusedBatchNormKernel, OneValuePerChannelHasZeroVariance) {
  KernelRunner run(BatchNormNode("FusedBatchNormV3", "NHWC", true, 0.001f));
  Tensor x = MakeTensor<float>(TensorShape({1, 1, 1, 2}), {3, -4});
  Tensor ones = Vector<float>({1, 1}), zeros = Vector<float>({0, 0});
  TW_ASSERT_OK(run.Compute({x, ones, zeros, zeros, ones}));
  ExpectValues<float>(run.output(0), x.shape(), {0, 0});
  ExpectValues<float>(run.output(1), TensorShape({2}), {3, -4});
  ExpectValues<float>(run.output(2), TensorShape({2}), {0, 0});
}

TEST(FusedBatchNormKernel, RefusesBadInputs) {
  Tensor x(DT_FLOAT, TensorShape({2, 2, 2, 3}));
  for (int64_t i = 0; i < x.NumElements(); ++i) x.data<float>()[i] = i;
  Tensor three = Vector<float>({1, 1, 1}), two = Vector<float>({1, 1});
  Tensor empty(DT_FLOAT, TensorShape({0}));
  KernelRunner training(BatchNormNode("FusedBatchNormV3", "NHWC", true, 0.001f));
  ExpectError(
      training.Compute({Tensor(DT_FLOAT, TensorShape({2, 2, 3})), three, three, three, three}),
      Code::INVALID_ARGUMENT, "input must be 4 or 5-dimensional");
  ExpectError(training.Compute({x, two, three, three, three}), Code::INVALID_ARGUMENT,
              "scale must have the same number of elements as the channels of x, got 2 and 3");
  ExpectError(
      training.Compute({x, three, MakeTensor<float>(TensorShape({1, 3}), {0, 0, 0}), three, three}),
      Code::INVALID_ARGUMENT, "offset must be 1-dimensional");
  // Training with factor 1 ignores mean and variance; inference needs them.
  TW_EXPECT_OK(training.Compute({x, three, three, empty, empty}));
  KernelRunner inference(BatchNormNode("FusedBatchNormV3", "NHWC", false, 0.001f));
  ExpectError(inference.Compute({x, three, three, empty, three}), Code::INVALID_ARGUMENT,
              "When is_training=false, mean must have the same number of elements");
  KernelRunner blended(BatchNormNode("FusedBatchNormV3", "NHWC", true, 0.001f, 0.5f));
  ExpectError(blended.Compute({x, three, three, three, empty}), Code::INVALID_ARGUMENT,
              "When exponential_avg_factor != 1, variance must have the same number");

  KernelRunner grad(BatchNormNode("FusedBatchNormGradV3", "NHWC", true, 0.001f));
  ExpectError(
      grad.Compute({Tensor(DT_FLOAT, TensorShape({2, 2, 2, 2})), x, three, three, three, empty}),
      Code::INVALID_ARGUMENT, "x and y_backprop must have same shape");
  ExpectError(grad.Compute({x, x, three, two, three, empty}), Code::INVALID_ARGUMENT,
              "reserve_space_1 must have the same number of elements");
  ExpectError(grad.Compute({x, x, three, three, Scalar<float>(1), empty}), Code::INVALID_ARGUMENT,
              "saved variance must be 1-dimensional");
}

TEST(FusedBatchNormShapes, FollowTheLayout) {
  std::vector<PartialTensorShape> out;
  TW_ASSERT_OK(InferShapes(
      BatchNormNode("FusedBatchNormV3", "NCHW", true, 0.001f),
      {Partial({-1, -1, 5, 5}), Partial({4}), Partial({-1}), Unknown(), Unknown()}, {}, &out));
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out[0], Partial({-1, 4, 5, 5}));
  for (int i = 1; i <= 4; ++i) EXPECT_EQ(out[i], Partial({4})) << i;
  EXPECT_TRUE(out[5].unknown_rank());

  TW_ASSERT_OK(InferShapes(BatchNormNode("FusedBatchNormV3", "NDHWC", false, 0.001f),
                           {Unknown(), Unknown(), Unknown(), Partial({7}), Unknown()}, {}, &out));
  EXPECT_EQ(out[0], Partial({-1, -1, -1, -1, 7}));

  // Training with factor 1 does not constrain mean and variance.
  TW_EXPECT_OK(InferShapes(
      BatchNormNode("FusedBatchNormV3", "NHWC", true, 0.001f),
      {Partial({2, 3, 3, 4}), Partial({4}), Partial({4}), Partial({0}), Partial({0})}, {}, &out));
  ExpectError(
      InferShapes(BatchNormNode("FusedBatchNormV3", "NHWC", false, 0.001f),
                  {Partial({2, 3, 3, 4}), Partial({4}), Partial({4}), Partial({0}), Partial({4})},
                  {}, &out),
      Code::INVALID_ARGUMENT, "Dimensions must be equal, but are 4 and 0");
  ExpectError(
      InferShapes(BatchNormNode("FusedBatchNormV2", "NHWC", true, 0.001f),
                  {Partial({2, 3, 4, 5, 6}), Unknown(), Unknown(), Unknown(), Unknown()}, {}, &out),
      Code::INVALID_ARGUMENT, "must have rank 4");
  ExpectError(InferShapes(BatchNormNode("FusedBatchNormV3", "NHWC", true, 0.001f),
                          {Unknown(), Partial({1, 4}), Unknown(), Unknown(), Unknown()}, {}, &out),
              Code::INVALID_ARGUMENT, "must have rank 1");

  TW_ASSERT_OK(InferShapes(
      BatchNormNode("FusedBatchNormGradV3", "NCHW", true, 0.001f),
      {Unknown(), Partial({2, 3, -1, -1}), Unknown(), Unknown(), Unknown(), Unknown()}, {}, &out));
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0], Partial({-1, 3, -1, -1}));
  EXPECT_EQ(out[1], Partial({3}));
  EXPECT_EQ(out[3], Partial({0}));
  EXPECT_EQ(out[4], Partial({0}));
}

}  // namespace
}  // namespace test
}  // namespace tensorweave
