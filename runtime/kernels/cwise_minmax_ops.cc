// Maximum and Minimum (every real dtype) and SquaredDifference (float,
// double, int32 and int64) with numpy broadcasting, the dtypes of
// TensorFlow's CPU kernels. Maximum and Minimum propagate NaN, as numpy's
// maximum/minimum do (not fmax/fmin).
#include <type_traits>

#include "runtime/kernels/cwise_binary.h"
#include "runtime/ops/type_lists.h"

namespace tensorweave {
namespace {

struct MaximumExpr {
  static constexpr FloatBinaryLoops FloatKernelTable::*kFloatLoops = &FloatKernelTable::maximum;
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a.template cwiseMax<Eigen::PropagateNaN>(b);
  }
};
struct MinimumExpr {
  static constexpr FloatBinaryLoops FloatKernelTable::*kFloatLoops = &FloatKernelTable::minimum;
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a.template cwiseMin<Eigen::PropagateNaN>(b);
  }
};
// Integers wrap in two's complement, as TensorFlow's do, instead of
// overflowing.
struct WrappingSquaredDifferenceFn {
  template <typename T>
  T operator()(const T& a, const T& b) const {
    const T difference = WrappingSub(a, b);
    return WrappingMul(difference, difference);
  }
};
struct SquaredDifferenceExpr {
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    if constexpr (std::is_integral_v<std::remove_const_t<typename A::Scalar>>) {
      return a.binaryExpr(b, WrappingSquaredDifferenceFn());
    } else {
      return (a - b).square();
    }
  }
};

template <typename T, typename Expr>
class MinMaxOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    ComputeBinaryOp<T, T, EigenBinaryLoops<T, T, Expr>>(ctx, kCheapCycles);
  }
};

#define TW_REGISTER_MIN_MAX(T)                                    \
  TW_REGISTER_CPU_KERNEL("Maximum", T, MinMaxOp<T, MaximumExpr>); \
  TW_REGISTER_CPU_KERNEL("Minimum", T, MinMaxOp<T, MinimumExpr>);
#define TW_REGISTER_SQUARED_DIFFERENCE(T) \
  TW_REGISTER_CPU_KERNEL("SquaredDifference", T, MinMaxOp<T, SquaredDifferenceExpr>);

TW_FOR_EACH_NUMBER(TW_REGISTER_MIN_MAX)
TW_FOR_EACH_REAL_NUMBER(TW_REGISTER_SQUARED_DIFFERENCE)

#undef TW_REGISTER_SQUARED_DIFFERENCE
#undef TW_REGISTER_MIN_MAX

}  // namespace
}  // namespace tensorweave
