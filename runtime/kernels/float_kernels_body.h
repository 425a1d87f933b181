// The body of the float kernel table (float_kernel_table.h), compiled once
// per instruction set: float_kernels_baseline.cc, float_kernels_avx2.cc and
// float_kernels_avx512.cc define TW_ISA_NAMESPACE, TW_ISA_NAME and TW_ISA_EIGEN and
// include this file, and the Makefile gives each its -m flags. Not a normal
// header: it has no include guard and each of those files includes it
// once, before anything else.
//
// Why Eigen's namespace is renamed: Eigen is templates and inline
// functions, which every translation unit that uses them emits as weak
// (COMDAT) definitions, and the linker keeps one copy of each name for the
// whole library. Instantiations that mention our types (an expression of a
// functor below) have names of their own, but many do not
// (Eigen::internal::pexp<Packet4f>, the Tensor evaluators of plain sums):
// the AVX-512 build's copy of such a function could then replace the
// baseline one and run on a CPU without AVX-512. Defining `Eigen` as a
// per-ISA name before Eigen is included gives every Eigen symbol of this
// build a name no other translation unit uses (the library's other files
// see the real `Eigen`), and everything of ours sits in an anonymous
// namespace, so the only symbol this file exports is
// tensorweave::TW_ISA_NAMESPACE::FloatKernels(). The Makefile checks that
// after compiling (tools/check_isa_symbols.sh): an exported symbol without
// the ISA's name in it (a std:: template the compiler did not inline, say)
// fails the build. The alternative, per-function target attributes as in
// depthwise_conv.h, does not reach into Eigen's templates.
//
// The -m flags come with -ffp-contract=off (Makefile): GCC would otherwise
// fuse a * b + c into one FMA where the baseline build rounds twice, and
// the ISAs would disagree on arithmetic that is exact (Add, Mul, Adam's
// update are bitwise the same on every ISA; only Eigen's own polynomial
// code, exp, tanh, ..., uses FMA on purpose, and sums add in a different
// order with wider packets).
#if !defined(TW_ISA_NAMESPACE) || !defined(TW_ISA_NAME) || !defined(TW_ISA_EIGEN)
#error "define TW_ISA_NAMESPACE, TW_ISA_NAME and TW_ISA_EIGEN, then include float_kernels_body.h"
#endif

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "runtime/kernels/float_kernel_table.h"

// The loops below run on the calling thread (the kernels split work with
// ParallelFor), so Eigen's thread-pool device is not needed here.
#undef EIGEN_USE_THREADS
#define Eigen TW_ISA_EIGEN
#include <unsupported/Eigen/CXX11/Tensor>

namespace tensorweave {
namespace TW_ISA_NAMESPACE {
namespace {

using Vector =
    Eigen::TensorMap<Eigen::Tensor<float, 1, Eigen::RowMajor, Eigen::DenseIndex>, Eigen::Unaligned>;
using ConstVector =
    Eigen::TensorMap<Eigen::Tensor<const float, 1, Eigen::RowMajor, Eigen::DenseIndex>,
                     Eigen::Unaligned>;
using Scalar =
    Eigen::TensorMap<Eigen::Tensor<float, 0, Eigen::RowMajor, Eigen::DenseIndex>, Eigen::Unaligned>;

// Correctly rounded square roots of Eigen's float packets (which are the
// intrinsic vector types). Eigen's own psqrt, with EIGEN_FAST_MATH (its
// default), is an rsqrt estimate and a Newton step, off by an ulp for some
// inputs (3.4832253 for sqrt(12.13288), not 3.4832251) and different per
// ISA: Sqrt and Adam's update use these instead, so that they match numpy
// and every ISA gives the same bits.
inline __m128 ExactPacketSqrt(__m128 x) { return _mm_sqrt_ps(x); }
#ifdef __AVX__
inline __m256 ExactPacketSqrt(__m256 x) { return _mm256_sqrt_ps(x); }
#endif
#ifdef __AVX512F__
inline __m512 ExactPacketSqrt(__m512 x) { return _mm512_sqrt_ps(x); }
#endif

struct ExactSqrt {
  float operator()(float x) const { return std::sqrt(x); }
  template <typename Packet>
  Packet packetOp(const Packet& x) const {
    return ExactPacketSqrt(x);
  }
};

}  // namespace
}  // namespace TW_ISA_NAMESPACE
}  // namespace tensorweave

namespace Eigen {
namespace internal {
template <>
struct functor_traits<tensorweave::TW_ISA_NAMESPACE::ExactSqrt> {
  enum { Cost = 10, PacketAccess = true };
};
}  // namespace internal
}  // namespace Eigen

namespace tensorweave {
namespace TW_ISA_NAMESPACE {
namespace {

// The binary operations, as Eigen expressions of two operands.
struct AddOp {
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a + b;
  }
};
struct SubOp {
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a - b;
  }
};
struct MulOp {
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a * b;
  }
};
struct DivOp {
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a / b;
  }
};
struct MaximumOp {
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a.template cwiseMax<Eigen::PropagateNaN>(b);
  }
};
struct MinimumOp {
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a.template cwiseMin<Eigen::PropagateNaN>(b);
  }
};

template <typename Op>
struct BinaryLoops {
  static void VectorVector(const float* x, const float* y, float* z, int64_t n) {
    Vector(z, n) = Op()(ConstVector(x, n), ConstVector(y, n));
  }
  static void VectorScalar(const float* x, float y, float* z, int64_t n) {
    ConstVector xs(x, n);
    Vector(z, n) = Op()(xs, xs.constant(y));
  }
  static void ScalarVector(float x, const float* y, float* z, int64_t n) {
    ConstVector ys(y, n);
    Vector(z, n) = Op()(ys.constant(x), ys);
  }
  static constexpr FloatBinaryLoops kLoops = {VectorVector, VectorScalar, ScalarVector};
};

// The unary operations, as Eigen expressions of one operand.
struct LogOp {
  template <typename A>
  auto operator()(const A& a) const {
    return a.log();
  }
};
struct TanhOp {
  template <typename A>
  auto operator()(const A& a) const {
    return a.tanh();
  }
};
struct SigmoidOp {
  template <typename A>
  auto operator()(const A& a) const {
    return a.sigmoid();
  }
};
struct SqrtOp {
  template <typename A>
  auto operator()(const A& a) const {
    return a.unaryExpr(ExactSqrt());
  }
};
struct RsqrtOp {
  template <typename A>
  auto operator()(const A& a) const {
    return a.rsqrt();
  }
};
struct ReluOp {
  template <typename A>
  auto operator()(const A& a) const {
    return a.template cwiseMax<Eigen::PropagateNaN>(0.0f);
  }
};

template <typename Op>
void UnaryLoop(const float* in, float* out, int64_t n) {
  Vector(out, n) = Op()(ConstVector(in, n));
}

// Eigen's vectorized exp clamps its argument from below near -88, so
// exp(-inf) and exp(-100) would come out as a tiny positive number instead
// of 0 (and results that should be subnormal are wrong): a block holding
// such an input is computed with std::exp instead (checked before writing,
// since out may be in). The check is a vectorized minimum that skips NaN
// (a NaN input never needs std::exp; a plain loop of comparisons stays
// scalar at -O2 and cost as much as the exp itself on SSE).
void ExactExp(const float* in, float* out, int64_t n) {
  constexpr float kClamp = -87.0f;
  float smallest;
  Scalar smallest_map(&smallest);
  smallest_map = ConstVector(in, n).minimum<Eigen::PropagateNumbers>();
  if (!(smallest < kClamp)) {
    Vector(out, n) = ConstVector(in, n).exp();
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = std::exp(in[i]);
}

float Sum(const float* row, int64_t n) {
  float result;
  Scalar destination(&result);
  destination = ConstVector(row, n).sum();
  return result;
}
float Max(const float* row, int64_t n) {
  float result;
  Scalar destination(&result);
  destination = ConstVector(row, n).maximum<Eigen::PropagateNaN>();
  return result;
}
float Min(const float* row, int64_t n) {
  float result;
  Scalar destination(&result);
  destination = ConstVector(row, n).minimum<Eigen::PropagateNaN>();
  return result;
}

void Softmax(const float* in, float* out, int64_t depth, bool log) {
  ConstVector x(in, depth);
  Vector y(out, depth);
  const float max_value = Max(in, depth);
  if (log) {
    y = x - x.constant(max_value);
    float sum;
    Scalar sum_map(&sum);
    sum_map = y.exp().sum();
    y = y - y.constant(std::log(sum));
  } else {
    y = (x - x.constant(max_value)).exp();
    const float sum = Sum(out, depth);
    y = y / y.constant(sum);
  }
}

// m += (grad - m) * (1 - beta1); v += (grad^2 - v) * (1 - beta2);
// var -= lr_t * m / (sqrt(v) + epsilon), multiplying in TensorFlow's order.
// Nesterov (NAdam) uses beta1 * m + (1 - beta1) * grad in place of m.
void Adam(const AdamChunk& c) {
  const int64_t n = c.length;
  const ConstVector grad(c.grad, n);
  const ConstVector old_var(c.in[0], n), old_m(c.in[1], n), old_v(c.in[2], n);
  Vector var(c.out[0], n), m(c.out[1], n), v(c.out[2], n);
  m = old_m + (grad - old_m) * (1.0f - c.beta1);
  v = old_v + (grad.square() - old_v) * (1.0f - c.beta2);
  if (c.use_nesterov) {
    var = old_var -
          (m * c.beta1 + grad * (1.0f - c.beta1)) * c.lr_t / (v.unaryExpr(ExactSqrt()) + c.epsilon);
  } else {
    var = old_var - m * c.lr_t / (v.unaryExpr(ExactSqrt()) + c.epsilon);
  }
}

constexpr FloatKernelTable kTable = {
    TW_ISA_NAME,
    BinaryLoops<AddOp>::kLoops,
    BinaryLoops<SubOp>::kLoops,
    BinaryLoops<MulOp>::kLoops,
    BinaryLoops<DivOp>::kLoops,
    BinaryLoops<MaximumOp>::kLoops,
    BinaryLoops<MinimumOp>::kLoops,
    ExactExp,
    UnaryLoop<LogOp>,
    UnaryLoop<TanhOp>,
    UnaryLoop<SigmoidOp>,
    UnaryLoop<SqrtOp>,
    UnaryLoop<RsqrtOp>,
    UnaryLoop<ReluOp>,
    Sum,
    Max,
    Min,
    Softmax,
    Adam,
};

}  // namespace

const FloatKernelTable& FloatKernels() { return kTable; }

}  // namespace TW_ISA_NAMESPACE
}  // namespace tensorweave
