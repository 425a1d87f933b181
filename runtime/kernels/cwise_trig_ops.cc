// Trigonometric and hyperbolic functions and their inverses on float and
// double: Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh
// (one Eigen scalar functor each, vectorized where Eigen has a packet
// version, as TensorFlow's kernels use them), and Atan2 with numpy
// broadcasting.
#include <cmath>
#include <type_traits>

#include "runtime/kernels/cwise_binary.h"
#include "runtime/kernels/cwise_unary.h"

namespace tensorweave {
namespace {

// A block mapped through Eigen's scalar functor Functor<T>.
template <template <typename> class Functor>
struct EigenFunctorExpr {
  template <typename A>
  auto operator()(const A& a) const {
    return a.unaryExpr(Functor<std::remove_const_t<typename A::Scalar>>());
  }
};

template <typename T, template <typename> class Functor>
using TrigOp = UnaryOp<T, EigenUnary<EigenFunctorExpr<Functor>>, kTranscendental>;

// atan2(y, x): the quadrant follows the signs of both (and of zeros).
struct Atan2Fn {
  template <typename T>
  T operator()(const T& y, const T& x) const {
    return std::atan2(y, x);
  }
};
struct Atan2Expr {
  template <typename A, typename B>
  auto operator()(const A& y, const B& x) const {
    return y.binaryExpr(x, Atan2Fn());
  }
};

template <typename T>
class Atan2Op : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    ComputeBinaryOp<T, T, EigenBinaryLoops<T, T, Atan2Expr>>(ctx, kTranscendentalCycles);
  }
};

#define TW_REGISTER_TRIG(T)                                                        \
  TW_REGISTER_CPU_KERNEL("Sin", T, TrigOp<T, Eigen::internal::scalar_sin_op>);     \
  TW_REGISTER_CPU_KERNEL("Cos", T, TrigOp<T, Eigen::internal::scalar_cos_op>);     \
  TW_REGISTER_CPU_KERNEL("Tan", T, TrigOp<T, Eigen::internal::scalar_tan_op>);     \
  TW_REGISTER_CPU_KERNEL("Asin", T, TrigOp<T, Eigen::internal::scalar_asin_op>);   \
  TW_REGISTER_CPU_KERNEL("Acos", T, TrigOp<T, Eigen::internal::scalar_acos_op>);   \
  TW_REGISTER_CPU_KERNEL("Atan", T, TrigOp<T, Eigen::internal::scalar_atan_op>);   \
  TW_REGISTER_CPU_KERNEL("Sinh", T, TrigOp<T, Eigen::internal::scalar_sinh_op>);   \
  TW_REGISTER_CPU_KERNEL("Cosh", T, TrigOp<T, Eigen::internal::scalar_cosh_op>);   \
  TW_REGISTER_CPU_KERNEL("Asinh", T, TrigOp<T, Eigen::internal::scalar_asinh_op>); \
  TW_REGISTER_CPU_KERNEL("Acosh", T, TrigOp<T, Eigen::internal::scalar_acosh_op>); \
  TW_REGISTER_CPU_KERNEL("Atanh", T, TrigOp<T, Eigen::internal::scalar_atanh_op>); \
  TW_REGISTER_CPU_KERNEL("Atan2", T, Atan2Op<T>);

TW_FOR_EACH_FLOAT(TW_REGISTER_TRIG)

#undef TW_REGISTER_TRIG

}  // namespace
}  // namespace tensorweave
