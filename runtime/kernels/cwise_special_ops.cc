// Special functions and classifiers on float and double: Erf, Erfc,
// Lgamma, Digamma and Rint (Eigen expressions, as TensorFlow computes
// them, so values agree with TensorFlow's to the last bits), Polygamma and
// Zeta with numpy broadcasting, IsNan/IsInf/IsFinite (bool out), and the
// Softsign activation with its gradient.
#include <cmath>
#include <type_traits>

#include "runtime/kernels/cwise_binary.h"
#include "runtime/kernels/cwise_unary.h"

namespace tensorweave {
namespace {

struct ErfExpr {
  template <typename A>
  auto operator()(const A& a) const {
    return a.erf();
  }
};
struct ErfcExpr {
  template <typename A>
  auto operator()(const A& a) const {
    return a.erfc();
  }
};
struct LgammaExpr {
  template <typename A>
  auto operator()(const A& a) const {
    return a.lgamma();
  }
};
struct DigammaExpr {
  template <typename A>
  auto operator()(const A& a) const {
    return a.digamma();
  }
};
// Halves to even (the current rounding mode), like numpy's rint.
struct RintExpr {
  template <typename A>
  auto operator()(const A& a) const {
    return a.unaryExpr(Eigen::internal::scalar_rint_op<std::remove_const_t<typename A::Scalar>>());
  }
};
struct SoftsignExpr {
  template <typename A>
  auto operator()(const A& a) const {
    return a / (a.abs() + a.constant(1));
  }
};
// d/dx x / (|x| + 1) = 1 / (|x| + 1)^2.
struct SoftsignGradExpr {
  template <typename G, typename F>
  auto operator()(const G& gradients, const F& features) const {
    return gradients / (features.abs() + features.constant(1)).square();
  }
};

struct PolygammaExpr {
  template <typename A, typename B>
  auto operator()(const A& n, const B& x) const {
    return n.polygamma(x);
  }
};
struct ZetaExpr {
  template <typename A, typename B>
  auto operator()(const A& x, const B& q) const {
    return x.zeta(q);
  }
};

template <typename T, typename Expr>
class SpecialBinaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    // Series with tens of terms per element.
    ComputeBinaryOp<T, T, EigenBinaryLoops<T, T, Expr>>(ctx, 10 * kTranscendentalCycles);
  }
};

struct IsNanFn {
  template <typename T>
  bool operator()(T v) const {
    return std::isnan(v);
  }
};
struct IsInfFn {
  template <typename T>
  bool operator()(T v) const {
    return std::isinf(v);
  }
};
struct IsFiniteFn {
  template <typename T>
  bool operator()(T v) const {
    return std::isfinite(v);
  }
};

// y[i] = Fn(x[i]) as a bool tensor of x's shape.
template <typename T, typename Fn>
class ClassifyOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    const T* in = x.data<T>();
    bool* out = y->data<bool>();
    ParallelFor(ctx, x.NumElements(), sizeof(T) + 1, kCheapCycles, [&](int64_t begin, int64_t end) {
      BlockedMap(in + begin, out + begin, end - begin, Fn());
    });
  }
};

template <typename T, typename Expr>
using SpecialOp = UnaryOp<T, EigenUnary<Expr>, 2 * kTranscendental>;

#define TW_REGISTER_SPECIAL(T)                                                             \
  TW_REGISTER_CPU_KERNEL("Erf", T, SpecialOp<T, ErfExpr>);                                 \
  TW_REGISTER_CPU_KERNEL("Erfc", T, SpecialOp<T, ErfcExpr>);                               \
  TW_REGISTER_CPU_KERNEL("Lgamma", T, SpecialOp<T, LgammaExpr>);                           \
  TW_REGISTER_CPU_KERNEL("Digamma", T, SpecialOp<T, DigammaExpr>);                         \
  TW_REGISTER_CPU_KERNEL("Rint", T, UnaryOp<T, EigenUnary<RintExpr>, kCheap>);             \
  TW_REGISTER_CPU_KERNEL("Softsign", T, UnaryOp<T, EigenUnary<SoftsignExpr>, 4 * kCheap>); \
  TW_REGISTER_CPU_KERNEL("SoftsignGrad", T,                                                \
                         UnaryGradientOp<T, EigenGradient<SoftsignGradExpr>, 4 * kCheap>); \
  TW_REGISTER_CPU_KERNEL("Polygamma", T, SpecialBinaryOp<T, PolygammaExpr>);               \
  TW_REGISTER_CPU_KERNEL("Zeta", T, SpecialBinaryOp<T, ZetaExpr>);                         \
  TW_REGISTER_CPU_KERNEL("IsNan", T, ClassifyOp<T, IsNanFn>);                              \
  TW_REGISTER_CPU_KERNEL("IsInf", T, ClassifyOp<T, IsInfFn>);                              \
  TW_REGISTER_CPU_KERNEL("IsFinite", T, ClassifyOp<T, IsFiniteFn>);

TW_FOR_EACH_FLOAT(TW_REGISTER_SPECIAL)

#undef TW_REGISTER_SPECIAL

}  // namespace
}  // namespace tensorweave
