// Add, AddV2, Sub, Mul, RealDiv and Div with numpy broadcasting. AddV2,
// Sub, Mul and Div run on every real dtype, as TensorFlow's CPU kernels do;
// Add on the signed ones, uint8 and strings (TensorFlow's list; strings
// concatenate); RealDiv on float, double, int32 and int64. Integer RealDiv and Div truncate toward
// zero (as C and TensorFlow's integer division do) and reject zero divisors; Div is RealDiv under
// its older name, so the two share one instantiation.
#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>

#include "runtime/kernels/cwise_binary.h"
#include "runtime/ops/type_lists.h"

namespace tensorweave {
namespace {

struct PlainSub {
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a - b;
  }
};
struct PlainMul {
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a * b;
  }
};
// Integer Sub and Mul wrap on overflow, as Add does (cwise_binary.h).
// Float loops come from the CPU's kernel table (cwise_binary.h).
struct SubExpr : WrappingBinaryExpr<WrappingSubFn, PlainSub> {
  static constexpr FloatBinaryLoops FloatKernelTable::*kFloatLoops = &FloatKernelTable::sub;
};
struct MulExpr : WrappingBinaryExpr<WrappingMulFn, PlainMul> {
  static constexpr FloatBinaryLoops FloatKernelTable::*kFloatLoops = &FloatKernelTable::mul;
};
struct DivExpr {
  static constexpr FloatBinaryLoops FloatKernelTable::*kFloatLoops = &FloatKernelTable::div;
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a / b;
  }
};

template <typename T>
struct IntDivExpr {
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a.binaryExpr(b, TruncatingDivide<T>());
  }
};

template <typename T, typename Expr>
class BinaryArithOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    using Loops = EigenBinaryLoops<T, T, Expr>;
    const Tensor& x = ctx->input(0);
    const Tensor& y = ctx->input(1);
    if (x.dims() == 0 && y.dims() == 0) {
      // Two scalars (a loop counter's i + 1): nothing to broadcast or split
      // into blocks, which would cost more than the arithmetic.
      Tensor* z = nullptr;
      OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, x.shape(), &z));
      Loops::VectorVector(x.data<T>(), y.data<T>(), z->data<T>(), 1);
      return;
    }
    ComputeBinaryOp<T, T, Loops>(ctx, kCheapCycles);
  }
};

template <typename T>
class IntDivOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    const Tensor& y = ctx->input(1);
    const T* divisors = y.data<T>();
    OP_REQUIRES(ctx,
                std::find(divisors, divisors + y.NumElements(), T{0}) == divisors + y.NumElements(),
                errors::InvalidArgument("Integer division by zero"));
    ComputeBinaryOp<T, T, EigenBinaryLoops<T, T, IntDivExpr<T>>>(ctx, 4 * kCheapCycles);
  }
};

// Add on strings concatenates, as TensorFlow's: the three loops of
// RunBinary on std::string (z may alias x or y: each element is read
// before it is replaced).
struct StringConcatLoops {
  static void VectorVector(const std::string* x, const std::string* y, std::string* z, int64_t n) {
    for (int64_t i = 0; i < n; ++i) z[i] = x[i] + y[i];
  }
  static void VectorScalar(const std::string* x, const std::string& y, std::string* z, int64_t n) {
    for (int64_t i = 0; i < n; ++i) z[i] = x[i] + y;
  }
  static void ScalarVector(const std::string& x, const std::string* y, std::string* z, int64_t n) {
    for (int64_t i = 0; i < n; ++i) z[i] = x + y[i];
  }
};

class StringAddOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext* ctx) override {
    // A string's cost grows with its length; 16 cycles is a short one's.
    ComputeBinaryOp<std::string, std::string, StringConcatLoops>(ctx, 16 * kCheapCycles);
  }
};

#define TW_REGISTER_ARITHMETIC(T)                                \
  TW_REGISTER_CPU_KERNEL("AddV2", T, BinaryArithOp<T, AddExpr>); \
  TW_REGISTER_CPU_KERNEL("Sub", T, BinaryArithOp<T, SubExpr>);   \
  TW_REGISTER_CPU_KERNEL("Mul", T, BinaryArithOp<T, MulExpr>);
#define TW_REGISTER_ADD(T) TW_REGISTER_CPU_KERNEL("Add", T, BinaryArithOp<T, AddExpr>);
#define TW_REGISTER_FLOAT_DIVISION(T)                              \
  TW_REGISTER_CPU_KERNEL("RealDiv", T, BinaryArithOp<T, DivExpr>); \
  TW_REGISTER_CPU_KERNEL("Div", T, BinaryArithOp<T, DivExpr>);
#define TW_REGISTER_INT_REAL_DIVISION(T) TW_REGISTER_CPU_KERNEL("RealDiv", T, IntDivOp<T>);
#define TW_REGISTER_INT_DIVISION(T) TW_REGISTER_CPU_KERNEL("Div", T, IntDivOp<T>);

TW_FOR_EACH_NUMBER(TW_REGISTER_ARITHMETIC)
TW_FOR_EACH_SIGNED_NUMBER(TW_REGISTER_ADD)
TW_REGISTER_ADD(uint8_t)
TW_REGISTER_CPU_KERNEL("Add", std::string, StringAddOp);
TW_FOR_EACH_FLOAT(TW_REGISTER_FLOAT_DIVISION)
TW_FOR_EACH_INT(TW_REGISTER_INT_REAL_DIVISION)
TW_FOR_EACH_INTEGER(TW_REGISTER_INT_DIVISION)

#undef TW_REGISTER_INT_DIVISION
#undef TW_REGISTER_INT_REAL_DIVISION
#undef TW_REGISTER_FLOAT_DIVISION
#undef TW_REGISTER_ADD
#undef TW_REGISTER_ARITHMETIC

}  // namespace
}  // namespace tensorweave
