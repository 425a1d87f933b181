// RandomUniform, RandomStandardNormal, TruncatedNormal, RandomUniformInt and
// RandomShuffle over Philox4x32-10 streams.
//
// Each kernel instance owns one stream named by its (seed, seed2) attrs
// (random seeds when both are 0, as TensorFlow does) and a cursor into it:
// every Compute reserves the next range of blocks, so successive runs draw
// new values, while two fresh sessions of one graph replay the same values.
// The output is cut into chunks of kChunkElements, and chunk i reads the
// stream from block (reserved start + i * kBlocksPerChunk) on: chunks fill in
// parallel and the values do not depend on how they are scheduled.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/kernels/kernel_util.h"
#include "runtime/kernels/philox_random.h"
#include "runtime/ops/index_vector.h"

namespace tensorweave {
namespace {

using random::PhiloxStream;

constexpr int64_t kChunkElements = 1024;
// A chunk needs at most 2 words per element and truncated normals redraw
// about 5% of theirs, so it uses under 600 of these blocks; the generous
// stride keeps chunks disjoint even for very unlucky rejection runs.
constexpr uint64_t kBlocksPerChunk = uint64_t{1} << 16;

// The (seed, seed2) pair a kernel draws from, and its cursor.
class StreamState {
 public:
  explicit StreamState(OpKernelConstruction* c) {
    int64_t seed = 0;
    int64_t seed2 = 0;
    OP_REQUIRES_OK(c, c->GetAttr("seed", &seed));
    OP_REQUIRES_OK(c, c->GetAttr("seed2", &seed2));
    if (seed == 0 && seed2 == 0) {
      // Unseeded: a different stream per kernel and per process.
      std::random_device device;
      seed = (static_cast<int64_t>(device()) << 32) | device();
      seed2 = (static_cast<int64_t>(device()) << 32) | device();
    }
    seed_ = static_cast<uint64_t>(seed);
    seed2_ = static_cast<uint64_t>(seed2);
  }

  // The first block of a fresh range of `blocks` blocks.
  uint64_t Reserve(uint64_t blocks) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t first = next_block_;
    next_block_ += blocks;
    return first;
  }

  PhiloxStream StreamAt(uint64_t block) const { return PhiloxStream(seed_, seed2_, block); }

 private:
  uint64_t seed_ = 0;
  uint64_t seed2_ = 0;
  std::mutex mu_;
  uint64_t next_block_ = 0;
};

// Reads the shape input (a vector of non-negative sizes).
Status ShapeFromInput(const Tensor& input, TensorShape* shape) {
  if (input.dims() != 1) {
    return errors::InvalidArgument("shape must be a vector of sizes, got shape ",
                                   input.shape().DebugString());
  }
  std::vector<int64_t> dims;
  TW_RETURN_IF_ERROR(ReadIndexVector(input, "shape", &dims));
  for (int64_t size : dims) {
    if (size < 0) {
      return errors::InvalidArgument("Random shape dimensions must be >= 0, got [",
                                     StrJoin(dims, ","), "]");
    }
  }
  return TensorShape::Build(dims, shape);
}

// Fills `count` elements chunk by chunk; fill(stream, begin, end) writes
// elements [begin, end) from a stream positioned for that chunk. The output
// size comes from a value, so a few input bytes can ask for billions of
// draws: the fill stops between chunks once the step is cancelled or out of
// time, and the kernel fails with that status.
template <typename Fill>
void FillInChunks(OpKernelContext* ctx, StreamState* state, int64_t count, double cycles,
                  Fill&& fill) {
  const int64_t chunks = (count + kChunkElements - 1) / kChunkElements;
  const uint64_t first = state->Reserve(static_cast<uint64_t>(chunks) * kBlocksPerChunk);
  std::atomic<bool> interrupted{false};
  ParallelFor(ctx, chunks, kChunkElements * 8.0, kChunkElements * cycles,
              [&](int64_t begin_chunk, int64_t end_chunk) {
                for (int64_t chunk = begin_chunk; chunk < end_chunk; ++chunk) {
                  if (interrupted.load(std::memory_order_relaxed)) return;
                  if (!ctx->CheckNotInterrupted().ok()) {
                    interrupted.store(true, std::memory_order_relaxed);
                    return;
                  }
                  PhiloxStream stream =
                      state->StreamAt(first + static_cast<uint64_t>(chunk) * kBlocksPerChunk);
                  const int64_t begin = chunk * kChunkElements;
                  fill(&stream, begin, std::min(count, begin + kChunkElements));
                }
              });
  if (interrupted.load()) ctx->SetStatus(ctx->CheckNotInterrupted());
}

template <typename T>
T Uniform(PhiloxStream* stream);
template <>
float Uniform<float>(PhiloxStream* stream) {
  return stream->UniformFloat();
}
template <>
double Uniform<double>(PhiloxStream* stream) {
  return stream->UniformDouble();
}

enum class Distribution { kUniform, kNormal, kTruncatedNormal };

template <typename T, Distribution kind>
class RandomOp : public OpKernel {
 public:
  explicit RandomOp(OpKernelConstruction* c) : OpKernel(c), state_(c) {}

  void Compute(OpKernelContext* ctx) override {
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ShapeFromInput(ctx->input(0), &shape));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &output));
    T* values = output->data<T>();
    const double cycles = kind == Distribution::kUniform ? kCheapCycles : kTranscendentalCycles;
    FillInChunks(ctx, &state_, shape.num_elements(), cycles,
                 [values](PhiloxStream* stream, int64_t begin, int64_t end) {
                   Fill(stream, values + begin, end - begin);
                 });
  }

 private:
  static void Fill(PhiloxStream* stream, T* out, int64_t count) {
    if (kind == Distribution::kUniform) {
      for (int64_t i = 0; i < count; ++i) out[i] = Uniform<T>(stream);
      return;
    }
    int64_t i = 0;
    while (i < count) {
      double pair[2];
      stream->NormalPair(&pair[0], &pair[1]);
      for (double value : pair) {
        // Values beyond two standard deviations are dropped and redrawn.
        if (kind == Distribution::kTruncatedNormal && std::fabs(value) >= 2.0) continue;
        if (i < count) out[i++] = static_cast<T>(value);
      }
    }
  }

  StreamState state_;
};

template <typename T>
class RandomUniformIntOp : public OpKernel {
 public:
  explicit RandomUniformIntOp(OpKernelConstruction* c) : OpKernel(c), state_(c) {}

  void Compute(OpKernelContext* ctx) override {
    TensorShape shape;
    OP_REQUIRES_OK(ctx, ShapeFromInput(ctx->input(0), &shape));
    const Tensor& minval = ctx->input(1);
    const Tensor& maxval = ctx->input(2);
    OP_REQUIRES(
        ctx, minval.dims() == 0,
        errors::InvalidArgument("minval must be 0-D, got shape ", minval.shape().DebugString()));
    OP_REQUIRES(
        ctx, maxval.dims() == 0,
        errors::InvalidArgument("maxval must be 0-D, got shape ", maxval.shape().DebugString()));
    const T low = minval.data<T>()[0];
    const T high = maxval.data<T>()[0];
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, shape, &output));
    if (shape.num_elements() == 0) return;  // TensorFlow allows any bounds then
    OP_REQUIRES(ctx, low < high,
                errors::InvalidArgument("Need minval < maxval: ", low, " >= ", high));
    // The width as unsigned, which holds every int64 range without overflow.
    using Unsigned = std::make_unsigned_t<T>;
    const uint64_t range =
        static_cast<Unsigned>(static_cast<Unsigned>(high) - static_cast<Unsigned>(low));
    T* values = output->data<T>();
    FillInChunks(ctx, &state_, shape.num_elements(), kCheapCycles,
                 [=](PhiloxStream* stream, int64_t begin, int64_t end) {
                   for (int64_t i = begin; i < end; ++i) {
                     // A 64-bit draw reduced modulo the range: the bias is
                     // below range / 2^64, invisible for int32 ranges.
                     const uint64_t offset = stream->Next64() % range;
                     values[i] =
                         static_cast<T>(static_cast<Unsigned>(low) + static_cast<Unsigned>(offset));
                   }
                 });
  }

 private:
  StreamState state_;
};

// Copies row `from` of `input` to row `to` of `output`.
template <typename T>
void CopyRow(const T* input, int64_t from, T* output, int64_t to, int64_t row_size) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    std::memcpy(output + to * row_size, input + from * row_size, row_size * sizeof(T));
  } else {
    std::copy(input + from * row_size, input + (from + 1) * row_size, output + to * row_size);
  }
}

template <typename T>
class RandomShuffleOp : public OpKernel {
 public:
  explicit RandomShuffleOp(OpKernelConstruction* c) : OpKernel(c), state_(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    const int64_t rows = input.dims() == 0 ? 1 : input.dim_size(0);
    if (rows <= 1) {
      ctx->set_output(0, input);  // nothing to reorder
      return;
    }
    // Fisher-Yates over row indices; one stream, read in order. Each swap
    // takes one 64-bit draw (two words), so rows / 2 + 1 blocks suffice.
    const uint64_t blocks = static_cast<uint64_t>(rows) / 2 + 1;
    PhiloxStream stream = state_.StreamAt(state_.Reserve(blocks));
    std::vector<int64_t> order(rows);
    for (int64_t i = 0; i < rows; ++i) order[i] = i;
    for (int64_t i = rows - 1; i > 0; --i) {
      const int64_t j = static_cast<int64_t>(stream.Next64() % static_cast<uint64_t>(i + 1));
      std::swap(order[i], order[j]);
    }
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.shape(), &output));
    const int64_t row_size = input.NumElements() / rows;
    const T* from = input.data<T>();
    T* to = output->data<T>();
    for (int64_t i = 0; i < rows; ++i) CopyRow(from, order[i], to, i, row_size);
  }

 private:
  StreamState state_;
};

#define TW_REGISTER_REAL_RANDOM(T)                                                               \
  REGISTER_KERNEL_BUILDER(Name("RandomUniform").Device(DEVICE_CPU).TypeConstraint<T>("dtype"),   \
                          RandomOp<T, Distribution::kUniform>);                                  \
  REGISTER_KERNEL_BUILDER(                                                                       \
      Name("RandomStandardNormal").Device(DEVICE_CPU).TypeConstraint<T>("dtype"),                \
      RandomOp<T, Distribution::kNormal>);                                                       \
  REGISTER_KERNEL_BUILDER(Name("TruncatedNormal").Device(DEVICE_CPU).TypeConstraint<T>("dtype"), \
                          RandomOp<T, Distribution::kTruncatedNormal>);
TW_FOR_EACH_FLOAT(TW_REGISTER_REAL_RANDOM)
#undef TW_REGISTER_REAL_RANDOM

#define TW_REGISTER_UNIFORM_INT(T)                                                               \
  REGISTER_KERNEL_BUILDER(Name("RandomUniformInt").Device(DEVICE_CPU).TypeConstraint<T>("Tout"), \
                          RandomUniformIntOp<T>);
TW_FOR_EACH_INT(TW_REGISTER_UNIFORM_INT)
#undef TW_REGISTER_UNIFORM_INT

#define TW_REGISTER_SHUFFLE(T) TW_REGISTER_CPU_KERNEL("RandomShuffle", T, RandomShuffleOp<T>);
TW_FOR_EACH_TYPE(TW_REGISTER_SHUFFLE)
#undef TW_REGISTER_SHUFFLE

}  // namespace
}  // namespace tensorweave
