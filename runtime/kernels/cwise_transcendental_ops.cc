// Unary transcendental functions on float and double: Sqrt, Rsqrt, Exp,
// Expm1, Log, Log1p, Tanh and Sigmoid, each one Eigen expression
// (cwise_unary.h).
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "runtime/kernels/cwise_unary.h"

namespace tensorweave {
namespace {

struct SqrtExpr {
  static constexpr FloatUnaryLoop FloatKernelTable::*kFloatLoop = &FloatKernelTable::sqrt;
  template <typename A>
  auto operator()(const A& a) const {
    return a.sqrt();
  }
};
struct RsqrtExpr {
  static constexpr FloatUnaryLoop FloatKernelTable::*kFloatLoop = &FloatKernelTable::rsqrt;
  template <typename A>
  auto operator()(const A& a) const {
    return a.rsqrt();
  }
};
struct ExpExpr {
  static constexpr FloatUnaryLoop FloatKernelTable::*kFloatLoop = &FloatKernelTable::exp;
  template <typename A>
  auto operator()(const A& a) const {
    return a.exp();
  }
};
// exp(x) - 1 without the cancellation of computing exp first: exact near 0.
struct Expm1Expr {
  template <typename A>
  auto operator()(const A& a) const {
    return a.expm1();
  }
};
struct LogExpr {
  static constexpr FloatUnaryLoop FloatKernelTable::*kFloatLoop = &FloatKernelTable::log;
  template <typename A>
  auto operator()(const A& a) const {
    return a.log();
  }
};
struct Log1pExpr {
  template <typename A>
  auto operator()(const A& a) const {
    return a.log1p();
  }
};
struct TanhExpr {
  static constexpr FloatUnaryLoop FloatKernelTable::*kFloatLoop = &FloatKernelTable::tanh;
  template <typename A>
  auto operator()(const A& a) const {
    return a.tanh();
  }
};
struct SigmoidExpr {
  static constexpr FloatUnaryLoop FloatKernelTable::*kFloatLoop = &FloatKernelTable::sigmoid;
  template <typename A>
  auto operator()(const A& a) const {
    return a.sigmoid();
  }
};

// Eigen's vectorized exp clamps its argument from below (near -88 for
// float, -709 for double), so exp(-inf) and exp(-1000) come out as a tiny
// positive number instead of 0 and results that should be subnormal are
// wrong. A block holding such an input is computed with std::exp instead
// (checked before writing, since the output may be the input's buffer).
// The float table's exp (float_kernels_body.h) does the same check itself.
struct ExactExp {
  explicit ExactExp(OpKernelConstruction* c) : eigen(c) {}
  template <typename T>
  void operator()(const T* in, T* out, int64_t n) const {
    if constexpr (std::is_same_v<T, float>) {
      ActiveFloatKernels().exp(in, out, n);
      return;
    }
    const T clamp = std::is_same<T, float>::value ? T(-87) : T(-708);
    if (std::none_of(in, in + n, [clamp](T v) { return v < clamp; })) {
      eigen(in, out, n);
      return;
    }
    for (int64_t i = 0; i < n; ++i) out[i] = std::exp(in[i]);
  }
  EigenUnary<ExpExpr> eigen;
};

template <typename T, typename Expr>
using TranscendentalOp = UnaryOp<T, EigenUnary<Expr>, kTranscendental>;

#define TW_REGISTER_TRANSCENDENTAL(T)                                      \
  TW_REGISTER_CPU_KERNEL("Sqrt", T, TranscendentalOp<T, SqrtExpr>);        \
  TW_REGISTER_CPU_KERNEL("Rsqrt", T, TranscendentalOp<T, RsqrtExpr>);      \
  TW_REGISTER_CPU_KERNEL("Exp", T, UnaryOp<T, ExactExp, kTranscendental>); \
  TW_REGISTER_CPU_KERNEL("Expm1", T, TranscendentalOp<T, Expm1Expr>);      \
  TW_REGISTER_CPU_KERNEL("Log", T, TranscendentalOp<T, LogExpr>);          \
  TW_REGISTER_CPU_KERNEL("Log1p", T, TranscendentalOp<T, Log1pExpr>);      \
  TW_REGISTER_CPU_KERNEL("Tanh", T, TranscendentalOp<T, TanhExpr>);        \
  TW_REGISTER_CPU_KERNEL("Sigmoid", T, TranscendentalOp<T, SigmoidExpr>);

TW_FOR_EACH_FLOAT(TW_REGISTER_TRANSCENDENTAL)

#undef TW_REGISTER_TRANSCENDENTAL

}  // namespace
}  // namespace tensorweave
