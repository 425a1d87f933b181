// Divisions with numpy broadcasting beyond RealDiv and FloorDiv:
// TruncateDiv (C's quotient, rounded toward zero) for float, double and
// every integer type; TruncateMod and its old name Mod (C's % and fmod: the
// remainder has the sign of x) for float, double, int32 and int64; and the
// guarded DivNoNan, Xlogy and Xdivy for float and double. Integer
// divisions reject a zero divisor (INVALID_ARGUMENT "Integer division by
// zero", checked before anything is computed); MIN / -1 wraps to MIN and
// MIN % -1 is 0, as on TensorFlow, where C++ would trap.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "runtime/kernels/cwise_binary.h"

namespace tensorweave {
namespace {

template <typename T>
struct TruncatedQuotient {
  T operator()(const T& a, const T& b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return std::trunc(a / b);
    } else {
      return TruncatingDivide<T>()(a, b);
    }
  }
};

template <typename T>
struct TruncatedRemainder {
  T operator()(const T& a, const T& b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return std::fmod(a, b);
    } else {
      if (std::is_signed_v<T> && b == static_cast<T>(-1)) return T{0};
      return static_cast<T>(a % b);
    }
  }
};

// x / y, or 0 where y is 0 (whatever x is).
template <typename T>
struct DivNoNanFn {
  T operator()(const T& x, const T& y) const { return y == T{0} ? T{0} : x / y; }
};
// x * log(y), or 0 where x is 0 (whatever y is).
template <typename T>
struct XlogyFn {
  T operator()(const T& x, const T& y) const { return x == T{0} ? T{0} : x * std::log(y); }
};
// x / y, or 0 where x is 0 (whatever y is).
template <typename T>
struct XdivyFn {
  T operator()(const T& x, const T& y) const { return x == T{0} ? T{0} : x / y; }
};

template <typename Functor>
struct FunctorExpr {
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a.binaryExpr(b, Functor());
  }
};

// z = Functor(x, y) with broadcasting; for integers, a zero anywhere in y
// fails the step first.
template <typename T, typename Functor>
class GuardedDivisionOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    if constexpr (std::is_integral_v<T>) {
      const Tensor& y = ctx->input(1);
      const T* divisors = y.data<T>();
      const T* end = divisors + y.NumElements();
      OP_REQUIRES(ctx, std::find(divisors, end, T{0}) == end,
                  errors::InvalidArgument("Integer division by zero"));
    }
    ComputeBinaryOp<T, T, EigenBinaryLoops<T, T, FunctorExpr<Functor>>>(
        ctx, std::is_integral_v<T> ? 8 * kCheapCycles : kTranscendentalCycles);
  }
};

#define TW_REGISTER_TRUNCATE_DIV(T) \
  TW_REGISTER_CPU_KERNEL("TruncateDiv", T, GuardedDivisionOp<T, TruncatedQuotient<T>>);
#define TW_REGISTER_TRUNCATE_MOD(T)                                                      \
  TW_REGISTER_CPU_KERNEL("TruncateMod", T, GuardedDivisionOp<T, TruncatedRemainder<T>>); \
  TW_REGISTER_CPU_KERNEL("Mod", T, GuardedDivisionOp<T, TruncatedRemainder<T>>);
#define TW_REGISTER_GUARDED(T)                                                \
  TW_REGISTER_CPU_KERNEL("DivNoNan", T, GuardedDivisionOp<T, DivNoNanFn<T>>); \
  TW_REGISTER_CPU_KERNEL("Xlogy", T, GuardedDivisionOp<T, XlogyFn<T>>);       \
  TW_REGISTER_CPU_KERNEL("Xdivy", T, GuardedDivisionOp<T, XdivyFn<T>>);

TW_FOR_EACH_REAL_NUMBER(TW_REGISTER_TRUNCATE_DIV)
TW_FOR_EACH_SMALL_INT(TW_REGISTER_TRUNCATE_DIV)
TW_FOR_EACH_REAL_NUMBER(TW_REGISTER_TRUNCATE_MOD)
TW_FOR_EACH_FLOAT(TW_REGISTER_GUARDED)

#undef TW_REGISTER_GUARDED
#undef TW_REGISTER_TRUNCATE_MOD
#undef TW_REGISTER_TRUNCATE_DIV

}  // namespace
}  // namespace tensorweave
