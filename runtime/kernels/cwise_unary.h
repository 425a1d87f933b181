// Elementwise kernels of one tensor (Neg, Exp, Relu, LogicalNot, ...) and
// the gradient kernels that combine two tensors of one shape (TanhGrad,
// ReluGrad, ...): the one kernel class each, parameterized by how a block
// of elements is mapped.
//
//   struct Expm1Expr {  // an Eigen expression of the input block
//     template <typename A>
//     auto operator()(const A& a) const { return a.expm1(); }
//   };
//   TW_REGISTER_CPU_KERNEL("Expm1", float, UnaryOp<float, EigenUnary<Expm1Expr>, kTranscendental>);
//
// A block mapping `Map` is constructed from the kernel's
// OpKernelConstruction (so it may read attrs, like LeakyRelu's alpha) and
// called as map(in, out, n) for unary kernels or map(a, b, out, n) for
// gradient kernels, on blocks the thread pool hands out. `out` may be one
// of the inputs' buffers (an input nobody else holds is reused).
#ifndef TENSORWEAVE_KERNELS_CWISE_UNARY_H_
#define TENSORWEAVE_KERNELS_CWISE_UNARY_H_

#include <cstdint>
#include <string>
#include <type_traits>

#include "runtime/framework/op_kernel.h"
#include "runtime/framework/tensor.h"
#include "runtime/kernels/cpu_dispatch.h"
#include "runtime/kernels/eigen_helpers.h"

namespace tensorweave {

// Constructs Fn from the kernel's construction when it has such a
// constructor, else default-constructs it.
template <typename Fn>
Fn MakeElementFn(OpKernelConstruction* c) {
  if constexpr (std::is_constructible_v<Fn, OpKernelConstruction*>) {
    return Fn(c);
  } else {
    return Fn();
  }
}

// out[i] = fn(in[i]) in blocks of fixed length, each computed into a local
// array before it is stored (in and out may be one buffer): GCC vectorizes
// such loops at -O2, where a plain loop over n stays scalar. `fn` is copied
// first: a functor read through a reference might alias `out` (LeakyRelu's
// float alpha and a float output), which would also keep the loop scalar.
template <typename T, typename Out, typename Fn>
void BlockedMap(const T* in, Out* out, int64_t n, const Fn& shared_fn) {
  const Fn fn = shared_fn;
  constexpr int kLanes = 16;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    Out block[kLanes];
    for (int j = 0; j < kLanes; ++j) block[j] = fn(in[i + j]);
    for (int j = 0; j < kLanes; ++j) out[i + j] = block[j];
  }
  for (; i < n; ++i) out[i] = fn(in[i]);
}

// out[i] = fn(a[i], b[i]) the same way.
template <typename T, typename Fn>
void BlockedMap2(const T* a, const T* b, T* out, int64_t n, const Fn& shared_fn) {
  const Fn fn = shared_fn;
  constexpr int kLanes = 16;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    T block[kLanes];
    for (int j = 0; j < kLanes; ++j) block[j] = fn(a[i + j], b[i + j]);
    for (int j = 0; j < kLanes; ++j) out[i + j] = block[j];
  }
  for (; i < n; ++i) out[i] = fn(a[i], b[i]);
}

// Expr::IntegerFn, or void when Expr has none.
template <typename Expr, typename = void>
struct IntegerFnOf {
  using type = void;
};
template <typename Expr>
struct IntegerFnOf<Expr, std::void_t<typename Expr::IntegerFn>> {
  using type = typename Expr::IntegerFn;
};

// Whether Expr names its float loop in the kernel table
// (`static constexpr FloatUnaryLoop FloatKernelTable::*kFloatLoop`).
template <typename Expr, typename = void>
struct HasFloatLoop : std::false_type {};
template <typename Expr>
struct HasFloatLoop<Expr, std::void_t<decltype(Expr::kFloatLoop)>> : std::true_type {};

// A block as one Eigen expression, `Expr()(input block)`. An Expr may name
// an `IntegerFn` run on integer dtypes instead, element by element (the
// wrapping Neg, Square and Abs of kernel_util.h, where Eigen's would
// overflow), and its float loop in the kernel table, which runs the same
// expression compiled for the CPU's instruction set (cpu_dispatch.h).
template <typename Expr>
struct EigenUnary {
  explicit EigenUnary(OpKernelConstruction*) {}
  template <typename T>
  void operator()(const T* in, T* out, int64_t n) const {
    using IntegerFn = typename IntegerFnOf<Expr>::type;
    if constexpr (std::is_same_v<T, float> && HasFloatLoop<Expr>::value) {
      (ActiveFloatKernels().*Expr::kFloatLoop)(in, out, n);
    } else if constexpr (std::is_integral_v<T> && !std::is_void_v<IntegerFn>) {
      BlockedMap(in, out, n, IntegerFn());
    } else {
      EigenVector<T>(out, n) = Expr()(ConstEigenVector<T>(in, n));
    }
  }
};

// A block element by element with `Fn`, a functor of one value; it is
// built from the kernel's construction when it takes one (to read attrs).
template <typename Fn>
struct ScalarUnary {
  explicit ScalarUnary(OpKernelConstruction* c) : fn(MakeElementFn<Fn>(c)) {}
  template <typename T>
  void operator()(const T* in, T* out, int64_t n) const {
    BlockedMap(in, out, n, fn);
  }
  Fn fn;
};

// y = f(x) elementwise; y has x's shape and may take over x's buffer.
template <typename T, typename Map, int kCycles>
class UnaryOp : public OpKernel {
 public:
  explicit UnaryOp(OpKernelConstruction* c) : OpKernel(c), map_(c) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0}, 0, x.shape(), &y));
    const T* in = x.data<T>();
    T* out = y->data<T>();
    ParallelFor(ctx, x.NumElements(), 2 * sizeof(T), kCycles,
                [&](int64_t begin, int64_t end) { map_(in + begin, out + begin, end - begin); });
  }

 private:
  const Map map_;
};

// A gradient block as one Eigen expression, `Expr()(a block, b block)`.
template <typename Expr>
struct EigenGradient {
  explicit EigenGradient(OpKernelConstruction*) {}
  template <typename T>
  void operator()(const T* a, const T* b, T* out, int64_t n) const {
    EigenVector<T>(out, n) = Expr()(ConstEigenVector<T>(a, n), ConstEigenVector<T>(b, n));
  }
};

// A gradient block element by element with `Fn`, a functor of two values.
template <typename Fn>
struct ScalarGradient {
  explicit ScalarGradient(OpKernelConstruction* c) : fn(MakeElementFn<Fn>(c)) {}
  template <typename T>
  void operator()(const T* a, const T* b, T* out, int64_t n) const {
    BlockedMap2(a, b, out, n, fn);
  }
  Fn fn;
};

// z = f(a, b) elementwise for two inputs of one shape (a gradient and the
// forward op's input or output, in the op's order); INVALID_ARGUMENT naming
// both inputs when the shapes differ. z may take over either buffer.
template <typename T, typename Map, int kCycles>
class UnaryGradientOp : public OpKernel {
 public:
  explicit UnaryGradientOp(OpKernelConstruction* c)
      : OpKernel(c),
        map_(c),
        a_name_(c->op_def().inputs[0].name),
        b_name_(c->op_def().inputs[1].name) {}

  void Compute(OpKernelContext* ctx) override {
    const Tensor& a = ctx->input(0);
    const Tensor& b = ctx->input(1);
    OP_REQUIRES(ctx, a.shape() == b.shape(),
                errors::InvalidArgument(a_name_, " and ", b_name_, " must have the same shape: ",
                                        a.shape().DebugString(), " vs. ", b.shape().DebugString()));
    Tensor* z = nullptr;
    OP_REQUIRES_OK(ctx, ctx->forward_input_or_allocate_output({0, 1}, 0, a.shape(), &z));
    const T* as = a.data<T>();
    const T* bs = b.data<T>();
    T* out = z->data<T>();
    ParallelFor(ctx, a.NumElements(), 3 * sizeof(T), kCycles, [&](int64_t begin, int64_t end) {
      map_(as + begin, bs + begin, out + begin, end - begin);
    });
  }

 private:
  const Map map_;
  const std::string a_name_, b_name_;  // the op's input names, for messages
};

}  // namespace tensorweave

#endif  // TENSORWEAVE_KERNELS_CWISE_UNARY_H_
