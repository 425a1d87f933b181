// Kernels of the summary ops (runtime/ops/summary_ops.cc). Each builds a
// Summary proto and emits it serialized in a scalar string, with
// TensorFlow's tags, histogram buckets, image scaling and WAV encoding, so
// TensorBoard draws what it would for TensorFlow's summaries.
#include <Eigen/Core>
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_set>
#include <vector>

#include "runtime/framework/node_def_util.h"
#include "runtime/framework/op_kernel.h"
#include "runtime/kernels/png_io.h"
#include "runtime/kernels/wav_io.h"
#include "tensorweave/proto/summary.pb.h"

namespace tensorweave {
namespace {

Status EmitSummary(const Summary& summary, OpKernelContext* ctx) {
  Tensor* out = nullptr;
  TW_RETURN_IF_ERROR(ctx->allocate_output(0, TensorShape(), &out));
  if (!summary.SerializeToString(&out->data<std::string>()[0])) {
    return errors::Internal("Cannot serialize the summary");
  }
  return Status::OK();
}

// TensorFlow accepts a tag of shape [] or [1] where it says "scalar".
bool IsLegacyScalar(const Tensor& t) {
  return t.dims() == 0 || (t.dims() == 1 && t.dim_size(0) == 1);
}

// ---- ScalarSummary -------------------------------------------------------------

template <typename T>
class ScalarSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& tags = ctx->input(0);
    const Tensor& values = ctx->input(1);
    if (tags.shape() != values.shape()) {
      // TensorFlow names the tag when there is only one.
      const std::string single_tag =
          tags.NumElements() == 1 ? StrCat(" (tag '", tags.data<std::string>()[0], "')") : "";
      ctx->SetStatus(errors::InvalidArgument(
          "tags and values not the same shape: ", tags.shape().DebugString(),
          " != ", values.shape().DebugString(), single_tag));
      return;
    }
    Summary summary;
    for (int64_t i = 0; i < tags.NumElements(); ++i) {
      Summary::Value* value = summary.add_value();
      value->set_tag(tags.data<std::string>()[i]);
      value->set_simple_value(static_cast<float>(values.data<T>()[i]));
    }
    OP_REQUIRES_OK(ctx, EmitSummary(summary, ctx));
  }
};

// ---- HistogramSummary ----------------------------------------------------------

// TensorFlow's default buckets (tsl/lib/histogram): limits growing by 10%
// from 1e-12 to 1e20, mirrored below zero, with 0 and +-DBL_MAX.
const std::vector<double>& DefaultBucketLimits() {
  static const std::vector<double>* limits = [] {
    std::vector<double> positive;
    for (double v = 1.0e-12; v < 1.0e20; v *= 1.1) positive.push_back(v);
    positive.push_back(DBL_MAX);
    auto* all = new std::vector<double>;
    for (auto it = positive.rbegin(); it != positive.rend(); ++it) all->push_back(-*it);
    all->push_back(0.0);
    all->insert(all->end(), positive.begin(), positive.end());
    return all;
  }();
  return *limits;
}

class Histogram {
 public:
  Histogram() : counts_(DefaultBucketLimits().size(), 0.0) {}

  void Add(double value) {
    const std::vector<double>& limits = DefaultBucketLimits();
    const size_t bucket = std::upper_bound(limits.begin(), limits.end(), value) - limits.begin();
    counts_[bucket] += 1.0;
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
    num_ += 1;
    sum_ += value;
    sum_squares_ += value * value;
  }

  // Runs of empty buckets collapse into one (their last limit), as
  // TensorFlow's EncodeToProto(preserve_zero_buckets=false) does.
  void EncodeTo(HistogramProto* proto) const {
    const std::vector<double>& limits = DefaultBucketLimits();
    proto->set_min(min_);
    proto->set_max(max_);
    proto->set_num(num_);
    proto->set_sum(sum_);
    proto->set_sum_squares(sum_squares_);
    for (size_t i = 0; i < counts_.size();) {
      double limit = limits[i];
      double count = counts_[i];
      ++i;
      if (count <= 0.0) {
        while (i < counts_.size() && counts_[i] <= 0.0) {
          limit = limits[i];
          count = counts_[i];
          ++i;
        }
      }
      proto->add_bucket_limit(limit);
      proto->add_bucket(count);
    }
  }

 private:
  std::vector<double> counts_;
  double min_ = DBL_MAX;
  double max_ = -DBL_MAX;
  double num_ = 0;
  double sum_ = 0;
  double sum_squares_ = 0;
};

template <typename T>
class HistogramSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& tag = ctx->input(0);
    const Tensor& values = ctx->input(1);
    OP_REQUIRES(ctx, tag.IsScalar(), errors::InvalidArgument("tags must be scalar"));
    Histogram histogram;
    const T* data = values.data<T>();
    for (int64_t i = 0; i < values.NumElements(); ++i) {
      const double value = static_cast<double>(data[i]);
      OP_REQUIRES(ctx, !std::isnan(value),
                  errors::InvalidArgument("Nan in summary histogram for: ", name()));
      OP_REQUIRES(ctx, !std::isinf(value),
                  errors::InvalidArgument("Infinity in summary histogram for: ", name()));
      histogram.Add(value);
    }
    Summary summary;
    Summary::Value* value = summary.add_value();
    value->set_tag(tag.scalar<std::string>());
    histogram.EncodeTo(value->mutable_histo());
    OP_REQUIRES_OK(ctx, EmitSummary(summary, ctx));
  }
};

// ---- ImageSummary --------------------------------------------------------------

// The tag of image i: TensorBoard groups by "/", so even one image gets
// "/image" (the choice depends on max_images, not on the batch).
std::string NumberedTag(const std::string& base, const char* kind, int64_t max_outputs, int64_t i) {
  return max_outputs > 1 ? StrCat(base, "/", kind, "/", i) : StrCat(base, "/", kind);
}

// Scales a float image into uint8 as TensorFlow does: with negative values
// by 127 / max|v| around 128, else by 255 / max; the range comes from the
// finite pixels only, and a pixel with a non-finite channel is bad_color.
// The arithmetic is T's own (half images scale in half precision, double
// images in double), and the result truncates to uint8 from there.
template <typename T>
void NormalizeFloatImage(const T* values, int64_t pixels, int64_t depth, const uint8_t* bad_color,
                         uint8_t* out) {
  auto pixel_is_finite = [&](int64_t p) {
    for (int64_t c = 0; c < depth; ++c) {
      if (!std::isfinite(static_cast<float>(values[p * depth + c]))) return false;
    }
    return true;
  };
  float image_min = std::numeric_limits<float>::infinity();
  float image_max = -image_min;
  for (int64_t p = 0; p < pixels; ++p) {
    if (!pixel_is_finite(p)) continue;
    for (int64_t c = 0; c < depth; ++c) {
      const float v = static_cast<float>(values[p * depth + c]);
      image_min = std::min(image_min, v);
      image_max = std::max(image_max, v);
    }
  }
  constexpr float kZeroThreshold = 1e-6f;
  T scale, offset;
  if (image_min < 0) {
    const float max_abs = std::max(std::abs(image_min), std::abs(image_max));
    scale = T(max_abs < kZeroThreshold ? 0.0f : 127.0f / max_abs);
    offset = T(128.0f);
  } else {
    scale = T(image_max < kZeroThreshold ? 0.0f : 255.0f / image_max);
    offset = T(0.0f);
  }
  for (int64_t p = 0; p < pixels; ++p) {
    const bool finite = pixel_is_finite(p);
    for (int64_t c = 0; c < depth; ++c) {
      out[p * depth + c] =
          finite ? static_cast<uint8_t>(static_cast<double>(values[p * depth + c] * scale + offset))
                 : bad_color[c];
    }
  }
}

class ImageSummaryOp : public OpKernel {
 public:
  explicit ImageSummaryOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("max_images", &max_images_));
    OP_REQUIRES(c, max_images_ < (int64_t{1} << 31),
                errors::InvalidArgument("max_images must be < 2^31"));
    const AttrValue* bad_color = FindNodeAttr(c->def(), "bad_color");
    OP_REQUIRES(c, bad_color != nullptr && bad_color->value_case() == AttrValue::kTensor,
                errors::InvalidArgument("ImageSummary needs a tensor attr 'bad_color'"));
    OP_REQUIRES_OK(c, Tensor::FromProto(bad_color->tensor(), &bad_color_));
    OP_REQUIRES(c, bad_color_.dtype() == DT_UINT8,
                errors::InvalidArgument("bad_color must be uint8, got ",
                                        DataTypeString(bad_color_.dtype())));
    OP_REQUIRES(c, bad_color_.dims() == 1,
                errors::InvalidArgument("bad_color must be a vector, got shape ",
                                        bad_color_.shape().DebugString()));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& tag = ctx->input(0);
    const Tensor& images = ctx->input(1);
    OP_REQUIRES(ctx, IsLegacyScalar(tag), errors::InvalidArgument("Tags must be a scalar"));
    OP_REQUIRES(ctx,
                images.dims() == 4 &&
                    (images.dim_size(3) == 1 || images.dim_size(3) == 3 || images.dim_size(3) == 4),
                errors::InvalidArgument("Tensor must be 4-D with last dim 1, 3, or 4, not ",
                                        images.shape().DebugString()));
    const int64_t batch = images.dim_size(0), height = images.dim_size(1);
    const int64_t width = images.dim_size(2), depth = images.dim_size(3);
    OP_REQUIRES(
        ctx,
        batch < (int64_t{1} << 31) && height < (int64_t{1} << 31) && width < (int64_t{1} << 31) &&
            height * width < (int64_t{1} << 29),
        errors::InvalidArgument("Tensor too large for summary ", images.shape().DebugString()));
    if (images.dtype() != DT_UINT8) {
      OP_REQUIRES(ctx, bad_color_.dim_size(0) >= depth,
                  errors::InvalidArgument("expected depth <= bad_color.size, got depth = ", depth,
                                          ", bad_color.size = ", bad_color_.dim_size(0)));
    }
    const std::string& base_tag = tag.data<std::string>()[0];
    const int64_t pixels = height * width;
    std::vector<uint8_t> scaled(images.dtype() == DT_UINT8 ? 0 : pixels * depth);
    Summary summary;
    for (int64_t i = 0; i < std::min(max_images_, batch); ++i) {
      const uint8_t* image = nullptr;
      const int64_t first = i * pixels * depth;
      switch (images.dtype()) {
        case DT_UINT8:
          image = images.data<uint8_t>() + first;
          break;
        case DT_HALF:
          NormalizeFloatImage(images.data<Eigen::half>() + first, pixels, depth,
                              bad_color_.data<uint8_t>(), scaled.data());
          break;
        case DT_FLOAT:
          NormalizeFloatImage(images.data<float>() + first, pixels, depth,
                              bad_color_.data<uint8_t>(), scaled.data());
          break;
        case DT_DOUBLE:
          NormalizeFloatImage(images.data<double>() + first, pixels, depth,
                              bad_color_.data<uint8_t>(), scaled.data());
          break;
        default:
          ctx->SetStatus(errors::InvalidArgument("ImageSummary does not take ",
                                                 DataTypeString(images.dtype())));
          return;
      }
      if (image == nullptr) image = scaled.data();
      Summary::Value* value = summary.add_value();
      value->set_tag(NumberedTag(base_tag, "image", max_images_, i));
      Summary::Image* encoded = value->mutable_image();
      encoded->set_height(static_cast<int32_t>(height));
      encoded->set_width(static_cast<int32_t>(width));
      encoded->set_colorspace(static_cast<int32_t>(depth));
      OP_REQUIRES_OK(ctx, EncodePng(image, height, width, static_cast<int>(depth), 8, -1,
                                    encoded->mutable_encoded_image_string()));
    }
    OP_REQUIRES_OK(ctx, EmitSummary(summary, ctx));
  }

 private:
  int64_t max_images_ = 3;
  Tensor bad_color_;
};

// ---- AudioSummaryV2 ------------------------------------------------------------

class AudioSummaryOp : public OpKernel {
 public:
  explicit AudioSummaryOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("max_outputs", &max_outputs_));
    OP_REQUIRES(c, max_outputs_ > 0, errors::InvalidArgument("max_outputs must be > 0"));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& tag = ctx->input(0);
    const Tensor& audio = ctx->input(1);
    const Tensor& sample_rate_tensor = ctx->input(2);
    OP_REQUIRES(ctx, IsLegacyScalar(tag), errors::InvalidArgument("Tag must be a scalar"));
    OP_REQUIRES(
        ctx, audio.dims() >= 2 && audio.dims() <= 3,
        errors::InvalidArgument("Tensor must be 3-D or 2-D, got: ", audio.shape().DebugString()));
    OP_REQUIRES(ctx, sample_rate_tensor.NumElements() == 1,
                errors::InvalidArgument("sample_rate must be a scalar, got shape ",
                                        sample_rate_tensor.shape().DebugString()));
    const float sample_rate = sample_rate_tensor.data<float>()[0];
    OP_REQUIRES(ctx, sample_rate > 0.0f, errors::InvalidArgument("sample_rate must be > 0"));
    const int64_t batch = audio.dim_size(0), frames = audio.dim_size(1);
    const int64_t channels = audio.dims() == 2 ? 1 : audio.dim_size(2);
    // The WAV header holds an integer rate: TensorFlow rounds, at least 1;
    // a rate past 2^32 reaches the encoder as such and is refused there.
    const double rounded_rate = std::nearbyint(static_cast<double>(sample_rate));
    const size_t wav_rate = rounded_rate < 1              ? 1
                            : rounded_rate > 4294967295.0 ? std::numeric_limits<size_t>::max()
                                                          : static_cast<size_t>(rounded_rate);
    Summary summary;
    for (int64_t i = 0; i < std::min(max_outputs_, batch); ++i) {
      Summary::Value* value = summary.add_value();
      value->set_tag(NumberedTag(tag.data<std::string>()[0], "audio", max_outputs_, i));
      Summary::Audio* clip = value->mutable_audio();
      clip->set_sample_rate(sample_rate);
      clip->set_num_channels(channels);
      clip->set_length_frames(frames);
      clip->set_content_type("audio/wav");
      OP_REQUIRES_OK(
          ctx, EncodeAudioAsS16LEWav(audio.data<float>() + i * frames * channels, wav_rate,
                                     static_cast<size_t>(channels), static_cast<size_t>(frames),
                                     clip->mutable_encoded_audio_string()));
    }
    OP_REQUIRES_OK(ctx, EmitSummary(summary, ctx));
  }

 private:
  int64_t max_outputs_ = 3;
};

// ---- TensorSummaryV2 -----------------------------------------------------------

class TensorSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& tag = ctx->input(0);
    const Tensor& tensor = ctx->input(1);
    const Tensor& metadata = ctx->input(2);
    OP_REQUIRES(ctx, tag.IsScalar(), errors::InvalidArgument("tag must be scalar"));
    OP_REQUIRES(ctx, metadata.IsScalar(),
                errors::InvalidArgument("serialized_summary_metadata must be scalar"));
    OP_REQUIRES(ctx, tensor.dtype() != DT_VARIANT && tensor.dtype() != DT_RESOURCE,
                errors::InvalidArgument("TensorSummaryV2 does not take ",
                                        DataTypeString(tensor.dtype()), " tensors"));
    Summary summary;
    Summary::Value* value = summary.add_value();
    value->set_tag(tag.scalar<std::string>());
    tensor.AsProtoTensorContent(value->mutable_tensor());
    // TensorFlow ignores metadata that does not parse; so does this.
    value->mutable_metadata()->ParseFromString(metadata.scalar<std::string>());
    OP_REQUIRES_OK(ctx, EmitSummary(summary, ctx));
  }
};

// ---- MergeSummary --------------------------------------------------------------

class MergeSummaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    Summary merged;
    std::unordered_set<std::string> tags;
    for (int input = 0; input < ctx->num_inputs(); ++input) {
      const Tensor& serialized = ctx->input(input);
      for (int64_t i = 0; i < serialized.NumElements(); ++i) {
        Summary summary;
        OP_REQUIRES(ctx, summary.ParseFromString(serialized.data<std::string>()[i]),
                    errors::InvalidArgument("Could not parse one of the summary inputs"));
        for (Summary::Value& value : *summary.mutable_value()) {
          // Values of tensor summaries without a tag cannot clash.
          OP_REQUIRES(
              ctx, value.tag().empty() || tags.insert(value.tag()).second,
              errors::InvalidArgument("Duplicate tag ", value.tag(), " found in summary inputs"));
          *merged.add_value() = std::move(value);
        }
      }
    }
    OP_REQUIRES_OK(ctx, EmitSummary(merged, ctx));
  }
};

#define TW_REGISTER_SUMMARY_KERNELS(T)                                                        \
  REGISTER_KERNEL_BUILDER(Name("ScalarSummary").Device(DEVICE_CPU).TypeConstraint<T>("T"),    \
                          ScalarSummaryOp<T>);                                                \
  REGISTER_KERNEL_BUILDER(Name("HistogramSummary").Device(DEVICE_CPU).TypeConstraint<T>("T"), \
                          HistogramSummaryOp<T>);
TW_FOR_EACH_REAL_NUMBER(TW_REGISTER_SUMMARY_KERNELS)
TW_REGISTER_SUMMARY_KERNELS(uint8_t)
TW_REGISTER_SUMMARY_KERNELS(int8_t)
TW_REGISTER_SUMMARY_KERNELS(int16_t)
TW_REGISTER_SUMMARY_KERNELS(uint16_t)
TW_REGISTER_SUMMARY_KERNELS(uint32_t)
TW_REGISTER_SUMMARY_KERNELS(uint64_t)
TW_FOR_EACH_HALF_FLOAT(TW_REGISTER_SUMMARY_KERNELS)
#undef TW_REGISTER_SUMMARY_KERNELS

REGISTER_KERNEL_BUILDER(Name("ImageSummary").Device(DEVICE_CPU), ImageSummaryOp);
REGISTER_KERNEL_BUILDER(Name("AudioSummaryV2").Device(DEVICE_CPU), AudioSummaryOp);
REGISTER_KERNEL_BUILDER(Name("TensorSummaryV2").Device(DEVICE_CPU), TensorSummaryOp);
REGISTER_KERNEL_BUILDER(Name("MergeSummary").Device(DEVICE_CPU), MergeSummaryOp);

}  // namespace
}  // namespace tensorweave
