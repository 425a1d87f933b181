// Unary elementwise arithmetic and rounding, on the dtypes of TensorFlow's
// CPU kernels: Square and Relu on every real dtype; Neg, Abs and Sign on the
// signed ones; Round (on int32 and int64 the identity);
// Reciprocal (and its old name Inv), Floor and Ceil on float and double.
// Integer Neg, Square and Abs wrap in two's complement as TensorFlow's do
// (Neg(INT_MIN) and Abs(INT_MIN) are INT_MIN). Round sends halves to the
// even neighbour (banker's rounding), as TensorFlow and numpy do; Sign and
// Relu keep NaN, as numpy does.
#include <cmath>
#include <type_traits>

#include "runtime/kernels/cwise_unary.h"
#include "runtime/ops/type_lists.h"

namespace tensorweave {
namespace {

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
struct ReluExpr {
  static constexpr FloatUnaryLoop FloatKernelTable::*kFloatLoop = &FloatKernelTable::relu;
  template <typename A>
  auto operator()(const A& a) const {
    using T = std::remove_const_t<typename A::Scalar>;
    return a.template cwiseMax<Eigen::PropagateNaN>(static_cast<T>(0));
  }
};

struct SignFn {
  template <typename T>
  T operator()(const T& x) const {
    // A NaN fails both tests and comes back unchanged.
    return x > T{0} ? T{1} : (x < T{0} ? T{-1} : x);
  }
};
struct RoundHalfToEvenFn {
  // nearbyint rounds in the current mode, which is round-to-nearest-even
  // unless a program changes it.
  template <typename T>
  T operator()(const T& x) const {
    return std::nearbyint(x);
  }
};
struct ReciprocalExpr {
  template <typename A>
  auto operator()(const A& a) const {
    return a.inverse();
  }
};
struct FloorExpr {
  template <typename A>
  auto operator()(const A& a) const {
    return a.floor();
  }
};
struct CeilExpr {
  template <typename A>
  auto operator()(const A& a) const {
    return a.ceil();
  }
};

// Rounding an integer changes nothing: the output is the input tensor.
class RoundIntegerOp : public CheapKernel {
 public:
  using CheapKernel::CheapKernel;
  void Compute(OpKernelContext* ctx) override { ctx->set_output(0, ctx->input(0)); }
};

template <typename T, typename Expr>
using CheapEigenUnaryOp = UnaryOp<T, EigenUnary<Expr>, kCheap>;

#define TW_REGISTER_REAL_UNARY(T)                                        \
  TW_REGISTER_CPU_KERNEL("Square", T, CheapEigenUnaryOp<T, SquareExpr>); \
  TW_REGISTER_CPU_KERNEL("Relu", T, CheapEigenUnaryOp<T, ReluExpr>);
#define TW_REGISTER_SIGNED_UNARY(T)                                \
  TW_REGISTER_CPU_KERNEL("Neg", T, CheapEigenUnaryOp<T, NegExpr>); \
  TW_REGISTER_CPU_KERNEL("Abs", T, CheapEigenUnaryOp<T, AbsExpr>); \
  TW_REGISTER_CPU_KERNEL("Sign", T, UnaryOp<T, ScalarUnary<SignFn>, kCheap>);
#define TW_REGISTER_FLOAT_UNARY(T)                                                             \
  TW_REGISTER_CPU_KERNEL("Round", T, UnaryOp<T, ScalarUnary<RoundHalfToEvenFn>, 4 * kCheap>);  \
  TW_REGISTER_CPU_KERNEL("Reciprocal", T, UnaryOp<T, EigenUnary<ReciprocalExpr>, 4 * kCheap>); \
  TW_REGISTER_CPU_KERNEL("Inv", T, UnaryOp<T, EigenUnary<ReciprocalExpr>, 4 * kCheap>);        \
  TW_REGISTER_CPU_KERNEL("Floor", T, CheapEigenUnaryOp<T, FloorExpr>);                         \
  TW_REGISTER_CPU_KERNEL("Ceil", T, CheapEigenUnaryOp<T, CeilExpr>);
#define TW_REGISTER_INT_UNARY(T) TW_REGISTER_CPU_KERNEL("Round", T, RoundIntegerOp);

TW_FOR_EACH_NUMBER(TW_REGISTER_REAL_UNARY)
TW_FOR_EACH_SIGNED_NUMBER(TW_REGISTER_SIGNED_UNARY)
TW_FOR_EACH_FLOAT(TW_REGISTER_FLOAT_UNARY)
TW_FOR_EACH_INT(TW_REGISTER_INT_UNARY)

#undef TW_REGISTER_INT_UNARY
#undef TW_REGISTER_FLOAT_UNARY
#undef TW_REGISTER_SIGNED_UNARY
#undef TW_REGISTER_REAL_UNARY

}  // namespace
}  // namespace tensorweave
