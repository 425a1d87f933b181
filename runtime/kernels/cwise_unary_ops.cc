// Unary elementwise kernels: Neg, Square, Abs and Relu on float, double,
// int32 and int64; Sqrt, Exp, Log, Tanh and Sigmoid on float and double.
// Each output may reuse its input's buffer.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "runtime/kernels/eigen_helpers.h"

namespace tensorweave {
namespace {

// Integer Neg, Square and Abs wrap in two's complement as TensorFlow's do
// (Neg(INT_MIN) and Abs(INT_MIN) are INT_MIN) instead of overflowing: an
// Expr naming an `IntegerFn` runs it on integers through WrappingMap, and
// Eigen's expression on floats.
struct NegExpr {
  using IntegerFn = WrappingNegFn;
  template <typename A>
  auto operator()(const A& a) const {
    return -a;
  }
};
struct SquareExpr {
  using IntegerFn = WrappingSquareFn;
  template <typename A>
  auto operator()(const A& a) const {
    return a.square();
  }
};
struct AbsExpr {
  using IntegerFn = WrappingAbsFn;
  template <typename A>
  auto operator()(const A& a) const {
    return a.abs();
  }
};

// Expr::IntegerFn, or void when Expr has none.
template <typename Expr, typename = void>
struct IntegerFnOf {
  using type = void;
};
template <typename Expr>
struct IntegerFnOf<Expr, std::void_t<typename Expr::IntegerFn>> {
  using type = typename Expr::IntegerFn;
};

// out[i] = fn(in[i]) in blocks of fixed length, each computed into a local
// array before it is stored (in and out may be one buffer): GCC vectorizes
// such loops at -O2, where a plain loop over n stays scalar.
template <typename T, typename Fn>
void WrappingMap(const T* in, T* out, int64_t n, Fn fn) {
  constexpr int kLanes = 16;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    T block[kLanes];
    for (int j = 0; j < kLanes; ++j) block[j] = fn(in[i + j]);
    for (int j = 0; j < kLanes; ++j) out[i + j] = block[j];
  }
  for (; i < n; ++i) out[i] = fn(in[i]);
}
struct SqrtExpr {
  template <typename A>
  auto operator()(const A& a) const {
    return a.sqrt();
  }
};
struct ExpExpr {
  template <typename A>
  auto operator()(const A& a) const {
    return a.exp();
  }
};
struct LogExpr {
  template <typename A>
  auto operator()(const A& a) const {
    return a.log();
  }
};
struct TanhExpr {
  template <typename A>
  auto operator()(const A& a) const {
    return a.tanh();
  }
};
struct SigmoidExpr {
  template <typename A>
  auto operator()(const A& a) const {
    return a.sigmoid();
  }
};
// NaN stays NaN, as numpy's maximum(x, 0) does.
struct ReluExpr {
  template <typename A>
  auto operator()(const A& a) const {
    using T = std::remove_const_t<typename A::Scalar>;
    return a.template cwiseMax<Eigen::PropagateNaN>(static_cast<T>(0));
  }
};

// Eigen's vectorized exp clamps its argument from below (near -88 for
// float, -709 for double), so exp(-inf) and exp(-1000) come out as a tiny
// positive number instead of 0 and results that should be subnormal are
// wrong. A block holding such an input is computed with std::exp instead
// (checked before writing, since the output may be the input's buffer).
template <typename T>
bool ExactExpForSmallInputs(const T* in, T* out, int64_t begin, int64_t end) {
  const T clamp = std::is_same<T, float>::value ? T(-87) : T(-708);
  if (std::none_of(in + begin, in + end, [clamp](T v) { return v < clamp; })) return false;
  for (int64_t i = begin; i < end; ++i) out[i] = std::exp(in[i]);
  return true;
}

template <typename T, typename Expr, int kCycles>
class UnaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    const int64_t n = x.NumElements();
    const T* in = x.data<T>();
    T* out = y->data<T>();
    using IntegerFn = typename IntegerFnOf<Expr>::type;
    ParallelFor(ctx, n, 2 * sizeof(T), kCycles, [&](int64_t begin, int64_t end) {
      if constexpr (std::is_integral_v<T> && !std::is_void_v<IntegerFn>) {
        WrappingMap(in + begin, out + begin, end - begin, IntegerFn());
      } else {
        if constexpr (std::is_same<Expr, ExpExpr>::value) {
          if (ExactExpForSmallInputs(in, out, begin, end)) return;
        }
        EigenVector<T>(out + begin, end - begin) =
            Expr()(ConstEigenVector<T>(in + begin, end - begin));
      }
    });
  }
};

constexpr int kCheap = static_cast<int>(kCheapCycles);
constexpr int kTranscendental = static_cast<int>(kTranscendentalCycles);

#define TW_REGISTER_UNARY(NAME, EXPR, CYCLES, T)                                \
  REGISTER_KERNEL_BUILDER(Name(NAME).Device(DEVICE_CPU).TypeConstraint<T>("T"), \
                          UnaryOp<T, EXPR, CYCLES>)
#define TW_REGISTER_ARITHMETIC_UNARY(T)               \
  TW_REGISTER_UNARY("Neg", NegExpr, kCheap, T);       \
  TW_REGISTER_UNARY("Square", SquareExpr, kCheap, T); \
  TW_REGISTER_UNARY("Abs", AbsExpr, kCheap, T);       \
  TW_REGISTER_UNARY("Relu", ReluExpr, kCheap, T);
#define TW_REGISTER_FLOAT_UNARY(T)                         \
  TW_REGISTER_UNARY("Sqrt", SqrtExpr, kTranscendental, T); \
  TW_REGISTER_UNARY("Exp", ExpExpr, kTranscendental, T);   \
  TW_REGISTER_UNARY("Log", LogExpr, kTranscendental, T);   \
  TW_REGISTER_UNARY("Tanh", TanhExpr, kTranscendental, T); \
  TW_REGISTER_UNARY("Sigmoid", SigmoidExpr, kTranscendental, T);

TW_FOR_EACH_REAL_NUMBER(TW_REGISTER_ARITHMETIC_UNARY)
TW_FOR_EACH_FLOAT(TW_REGISTER_FLOAT_UNARY)

#undef TW_REGISTER_FLOAT_UNARY
#undef TW_REGISTER_ARITHMETIC_UNARY
#undef TW_REGISTER_UNARY

}  // namespace
}  // namespace tensorweave
