// Numpy broadcasting for binary elementwise kernels (Add, Mul, Less, ...,
// BiasAdd).
//
// The output is viewed as rows of `inner` contiguous elements after merging
// adjacent dims that broadcast the same way. Within a row, x (and y) either
// advance with the output or repeat one value, so every row is one of three
// flat 1-D loops: vector-vector, vector-scalar, scalar-vector. Same-shape
// and scalar operands (the common cases) are a single row and cost no
// allocation; general broadcasting walks the rows with a cursor. Each op and
// dtype thus instantiates three flat Eigen expressions, whatever the rank.
#ifndef TENSORWEAVE_KERNELS_CWISE_BINARY_H_
#define TENSORWEAVE_KERNELS_CWISE_BINARY_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "runtime/framework/op_kernel.h"
#include "runtime/framework/tensor.h"
#include "runtime/kernels/cpu_dispatch.h"
#include "runtime/kernels/eigen_helpers.h"

namespace tensorweave {

class BinaryBroadcast {
 public:
  // INVALID_ARGUMENT "Incompatible shapes: [2,3] vs. [4]" unless the shapes
  // broadcast. The shapes must outlive this object (it may refer to them).
  Status Init(const TensorShape& x, const TensorShape& y);

  const TensorShape& output_shape() const { return *output_shape_; }
  // The output is rows() x inner() elements (rows() is 0 for an empty
  // output).
  int64_t rows() const { return rows_; }
  int64_t inner() const { return inner_; }
  // Whether x (y) advances along a row; otherwise one value repeats.
  bool x_advances() const { return x_advances_; }
  bool y_advances() const { return y_advances_; }

  // The offsets in x and y of the first element of a row, walked in order.
  class RowCursor {
   public:
    RowCursor(const BinaryBroadcast& broadcast, int64_t row);
    int64_t x_offset() const { return x_offset_; }
    int64_t y_offset() const { return y_offset_; }
    void Next();

   private:
    const BinaryBroadcast& broadcast_;
    int64_t index_[kMaxRank];  // per outer dim (the first num_outer_ are used)
    int64_t x_offset_ = 0, y_offset_ = 0;
  };

 private:
  const TensorShape* output_shape_ = nullptr;
  TensorShape broadcast_shape_;  // owned output shape in the general case
  int64_t rows_ = 0, inner_ = 0;
  bool x_advances_ = true, y_advances_ = true;
  // The merged dims before the inner one, with each operand's element
  // stride along them (0 where it broadcasts). Fixed arrays bounded by the
  // rank limit keep small kernels on the hot path free of allocations;
  // only the first num_outer_ entries are set.
  int num_outer_ = 0;
  int64_t outer_dims_[kMaxRank], x_strides_[kMaxRank], y_strides_[kMaxRank];
};

// True when the two shapes broadcast (for Equal's incompatible_shape_error).
bool ShapesBroadcast(const TensorShape& x, const TensorShape& y);

// An Eigen expression of `a (op) b` where integers wrap in two's
// complement (as TensorFlow's kernels do on overflow) instead of
// overflowing: `Wrapping` is the integer functor, `Plain` the operator for
// floating types.
template <typename Wrapping, typename Plain>
struct WrappingBinaryExpr {
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    if constexpr (std::is_integral_v<std::remove_const_t<typename A::Scalar>>) {
      return a.binaryExpr(b, Wrapping());
    } else {
      return Plain()(a, b);
    }
  }
};
struct PlainAdd {
  template <typename A, typename B>
  auto operator()(const A& a, const B& b) const {
    return a + b;
  }
};

// Integer quotient without undefined behaviour (Div, TruncateDiv): the
// divisor was checked for zero, and MIN / -1 (which traps on x86) wraps to
// MIN as negation does.
template <typename T>
struct TruncatingDivide {
  T operator()(const T& a, const T& b) const {
    if (std::is_signed<T>::value && b == static_cast<T>(-1)) {
      using Unsigned = std::make_unsigned_t<T>;
      return static_cast<T>(Unsigned{0} - static_cast<Unsigned>(a));
    }
    return static_cast<T>(a / b);
  }
};

// x + y as an Eigen expression (shared by Add, AddV2, BiasAdd and AddN).
// Its float loops come from the CPU's kernel table (below).
struct AddExpr : WrappingBinaryExpr<WrappingAddFn, PlainAdd> {
  static constexpr FloatBinaryLoops FloatKernelTable::*kFloatLoops = &FloatKernelTable::add;
};

// Whether Expr names its float loops in the kernel table
// (`static constexpr FloatBinaryLoops FloatKernelTable::*kFloatLoops`).
template <typename Expr, typename = void>
struct HasFloatLoops : std::false_type {};
template <typename Expr>
struct HasFloatLoops<Expr, std::void_t<decltype(Expr::kFloatLoops)>> : std::true_type {};

// The three flat loops, written as Eigen expressions of `Expr`, a functor
// mapping two Eigen expressions to one (a + b, a < b, ...). Float loops
// of an Expr that names its table entry run from the table built for the
// CPU's instruction set (cpu_dispatch.h) instead, the same expression
// compiled for AVX2 or AVX-512.
template <typename In, typename Out, typename Expr>
struct EigenBinaryLoops {
  static constexpr bool kFromTable =
      std::is_same_v<In, float> && std::is_same_v<Out, float> && HasFloatLoops<Expr>::value;

  static void VectorVector(const In* x, const In* y, Out* z, int64_t n) {
    if constexpr (kFromTable) {
      (ActiveFloatKernels().*Expr::kFloatLoops).vector_vector(x, y, z, n);
    } else {
      EigenVector<Out>(z, n) = Expr()(ConstEigenVector<In>(x, n), ConstEigenVector<In>(y, n));
    }
  }
  static void VectorScalar(const In* x, In y, Out* z, int64_t n) {
    if constexpr (kFromTable) {
      (ActiveFloatKernels().*Expr::kFloatLoops).vector_scalar(x, y, z, n);
    } else {
      ConstEigenVector<In> xs(x, n);
      EigenVector<Out>(z, n) = Expr()(xs, xs.constant(y));
    }
  }
  static void ScalarVector(In x, const In* y, Out* z, int64_t n) {
    if constexpr (kFromTable) {
      (ActiveFloatKernels().*Expr::kFloatLoops).scalar_vector(x, y, z, n);
    } else {
      ConstEigenVector<In> ys(y, n);
      EigenVector<Out>(z, n) = Expr()(ys.constant(x), ys);
    }
  }
};

// z = x (op) y over the whole broadcast output, in parallel blocks when it
// is large. `z` may alias x or y where they have the output's shape.
template <typename In, typename Out, typename Loops>
void RunBinary(const OpKernelContext* ctx, const BinaryBroadcast& broadcast, const In* x,
               const In* y, Out* z, double cycles_per_element) {
  const int64_t inner = broadcast.inner();
  const int64_t total = broadcast.rows() * inner;
  const bool x_advances = broadcast.x_advances(), y_advances = broadcast.y_advances();
  auto run = [&](int64_t begin, int64_t end) {
    int64_t column = begin % inner;
    BinaryBroadcast::RowCursor cursor(broadcast, begin / inner);
    for (int64_t at = begin; at < end; cursor.Next()) {
      const int64_t length = std::min(inner - column, end - at);
      const In* xs = x + cursor.x_offset() + (x_advances ? column : 0);
      const In* ys = y + cursor.y_offset() + (y_advances ? column : 0);
      if (x_advances && y_advances) {
        Loops::VectorVector(xs, ys, z + at, length);
      } else if (x_advances) {
        Loops::VectorScalar(xs, *ys, z + at, length);
      } else {
        Loops::ScalarVector(*xs, ys, z + at, length);
      }
      at += length;
      column = 0;
    }
  };
  const double bytes = 2 * sizeof(In) + sizeof(Out);
  ParallelFor(ctx, total, bytes, cycles_per_element, run);
}

// The body of a binary kernel: broadcasts inputs 0 and 1 into output 0,
// reusing an input buffer when it can.
template <typename In, typename Out, typename Loops>
void ComputeBinaryOp(OpKernelContext* ctx, double cycles_per_element) {
  const Tensor& x = ctx->input(0);
  const Tensor& y = ctx->input(1);
  BinaryBroadcast broadcast;
  OP_REQUIRES_OK(ctx, broadcast.Init(x.shape(), y.shape()));
  Tensor* z = nullptr;
  OP_REQUIRES_OK(ctx,
                 ctx->forward_input_or_allocate_output({0, 1}, 0, broadcast.output_shape(), &z));
  RunBinary<In, Out, Loops>(ctx, broadcast, x.data<In>(), y.data<In>(), z->data<Out>(),
                            cycles_per_element);
}

}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_CWISE_BINARY_H_
