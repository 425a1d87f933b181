// Sum, Mean, Max, Min and Prod over any set of axes (negative axes count
// from the end, repeats are harmless), for every real dtype (TensorFlow's
// CPU kernels' list); All and Any on bool.
//
// The input is viewed as [outer, reduced, inner] after dropping size-1 dims
// and merging neighbours that are both reduced or both kept. Axes that do
// not fit that pattern (e.g. axes 0 and 2 of four) are first transposed to
// [kept..., reduced...]. So each dtype and reducer needs two Eigen
// expressions: a row reduction (inner == 1) and a running combine of rows.
// Max and Min propagate NaN, as numpy does. Mean of integers sums in 64
// bits and truncates; the mean of nothing is NaN for floats and 0 for
// integers; the max of nothing is -inf (floats) or the lowest integer, the
// min of nothing +inf or the highest, the product of nothing 1, All of
// nothing true, Any false.
#include <algorithm>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "runtime/kernels/cpu_dispatch.h"
#include "runtime/kernels/cwise_binary.h"
#include "runtime/kernels/eigen_helpers.h"
#include "runtime/kernels/transpose_functor.h"
#include "runtime/ops/index_vector.h"
#include "runtime/ops/type_lists.h"

namespace tensorweave {
namespace {

struct ReductionPlan {
  TensorShape output_shape;
  int64_t outer = 1, reduced = 1, inner = 1;
  // Non-empty when the input must first be transposed to
  // [kept..., reduced...]: the permutation of the merged dims, the input
  // viewed with its merged dims, and the transposed shape.
  std::vector<int> perm;
  TensorShape merged_shape, transposed_shape;

  Status Init(const TensorShape& input, const Tensor& axes_tensor, bool keep_dims) {
    std::vector<int64_t> axes;
    TW_RETURN_IF_ERROR(ReadIndexVector(axes_tensor, "reduction_indices", &axes));
    const int rank = input.dims();
    std::vector<bool> is_reduced(rank, false);
    for (int64_t axis : axes) {
      if (axis < -rank || axis >= rank) {
        return errors::InvalidArgument("Invalid reduction dimension ", axis, " for input with ",
                                       rank, " dimensions");
      }
      is_reduced[axis < 0 ? axis + rank : axis] = true;
    }
    for (int i = 0; i < rank; ++i) {
      if (!is_reduced[i]) {
        TW_RETURN_IF_ERROR(output_shape.AddDim(input.dim_size(i)));
      } else if (keep_dims) {
        TW_RETURN_IF_ERROR(output_shape.AddDim(1));
      }
    }
    // Merge neighbours of the same kind; size-1 dims change nothing.
    std::vector<int64_t> sizes;
    std::vector<bool> kinds;
    for (int i = 0; i < rank; ++i) {
      const int64_t size = input.dim_size(i);
      if (size == 1) continue;
      if (!kinds.empty() && kinds.back() == is_reduced[i]) {
        sizes.back() *= size;
      } else {
        sizes.push_back(size);
        kinds.push_back(is_reduced[i]);
      }
    }
    const size_t n = sizes.size();
    if (n == 0) return Status::OK();  // a single element
    if (n == 1) {
      (kinds[0] ? reduced : outer) = sizes[0];
    } else if (n == 2) {
      if (kinds[0]) {
        reduced = sizes[0];
        inner = sizes[1];
      } else {
        outer = sizes[0];
        reduced = sizes[1];
      }
    } else if (n == 3 && !kinds[0]) {
      outer = sizes[0];
      reduced = sizes[1];
      inner = sizes[2];
    } else {
      // Kept dims first, reduced dims last; then reduce rows.
      std::vector<int> kept_first, reduced_last;
      for (size_t i = 0; i < n; ++i) (kinds[i] ? reduced_last : kept_first).push_back(i);
      perm = kept_first;
      perm.insert(perm.end(), reduced_last.begin(), reduced_last.end());
      std::vector<int64_t> transposed;
      for (int p : perm) transposed.push_back(sizes[p]);
      TW_RETURN_IF_ERROR(TensorShape::Build(sizes, &merged_shape));
      TW_RETURN_IF_ERROR(TensorShape::Build(transposed, &transposed_shape));
      for (int p : kept_first) outer *= sizes[p];
      for (int p : reduced_last) reduced *= sizes[p];
    }
    return Status::OK();
  }
};

// The wrapping sum of `values[0, count)`. Accumulates in kLanes unsigned
// lanes of fixed count so that GCC vectorizes the loop at -O2 (its cheap
// cost model leaves a plain running sum scalar, measured 2x slower).
template <typename T>
T WrappingSum(const T* values, int64_t count) {
  using U = WrappingUnsigned<T>;
  constexpr int kLanes = 16;
  U lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lanes[j] += static_cast<U>(values[i + j]);
  }
  U total = 0;
  for (int j = 0; j < kLanes; ++j) total += lanes[j];
  for (; i < count; ++i) total += static_cast<U>(values[i]);
  return static_cast<T>(total);
}

// Each row is reduced with a full (rank-0) Eigen reduction: Eigen's
// partial reduction over the inner dim of a 2-D map measured 5-9x slower
// (0.86 ns against 0.10 ns per float for rows of 64).
//
// Sum, Max and Min of float name their row reduction (kFloatRow) and
// their combine of rows (kFloatCombine) in the CPU's float kernel table
// (cpu_dispatch.h), the same Eigen expressions built for AVX2 or AVX-512.
//
// Integer Sum, Mean and Prod wrap in two's complement, as TensorFlow's do,
// instead of overflowing: `kWraps` reducers reduce a row with a plain loop
// (WrappingSum, or WrappingMul for Prod) rather than Eigen's sum() and
// prod(), whose scalar paths overflow.
template <typename T>
struct SumReducer {
  static constexpr bool kWraps = std::is_integral_v<T>;
  static constexpr FloatRowReduction FloatKernelTable::*kFloatRow = &FloatKernelTable::sum;
  static constexpr FloatBinaryLoops FloatKernelTable::*kFloatCombine = &FloatKernelTable::add;
  static T Identity() { return T{0}; }
  template <typename Row>
  static auto ReduceAll(const Row& row) {
    return row.sum();
  }
  static T ReduceWrapping(const T* row, int64_t length) { return WrappingSum(row, length); }
  template <typename A, typename B>
  static auto Combine(const A& a, const B& b) {
    return AddExpr()(a, b);
  }
  static T Combine(T a, T b) { return WrappingAdd(a, b); }
};

template <typename T>
struct MaxReducer {
  static constexpr bool kWraps = false;
  static constexpr FloatRowReduction FloatKernelTable::*kFloatRow = &FloatKernelTable::max;
  static constexpr FloatBinaryLoops FloatKernelTable::*kFloatCombine = &FloatKernelTable::maximum;
  static T Identity() {
    return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::lowest();
  }
  template <typename Row>
  static auto ReduceAll(const Row& row) {
    return row.template maximum<Eigen::PropagateNaN>();
  }
  template <typename A, typename B>
  static auto Combine(const A& a, const B& b) {
    return a.template cwiseMax<Eigen::PropagateNaN>(b);
  }
  static T Combine(T a, T b) { return a != a ? a : (b != b ? b : std::max(a, b)); }
};

template <typename T>
struct MinReducer {
  static constexpr bool kWraps = false;
  static constexpr FloatRowReduction FloatKernelTable::*kFloatRow = &FloatKernelTable::min;
  static constexpr FloatBinaryLoops FloatKernelTable::*kFloatCombine = &FloatKernelTable::minimum;
  static T Identity() {
    return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::max();
  }
  template <typename Row>
  static auto ReduceAll(const Row& row) {
    return row.template minimum<Eigen::PropagateNaN>();
  }
  template <typename A, typename B>
  static auto Combine(const A& a, const B& b) {
    return a.template cwiseMin<Eigen::PropagateNaN>(b);
  }
  static T Combine(T a, T b) { return a != a ? a : (b != b ? b : std::min(a, b)); }
};

template <typename T>
struct ProdReducer {
  static constexpr bool kWraps = std::is_integral_v<T>;
  static T Identity() { return T{1}; }
  template <typename Row>
  static auto ReduceAll(const Row& row) {
    return row.prod();
  }
  static T ReduceWrapping(const T* row, int64_t length) {
    T total = T{1};
    for (int64_t i = 0; i < length; ++i) total = WrappingMul(total, row[i]);
    return total;
  }
  template <typename A, typename B>
  static auto Combine(const A& a, const B& b) {
    if constexpr (kWraps) {
      return a.binaryExpr(b, WrappingMulFn());
    } else {
      return a * b;
    }
  }
  static T Combine(T a, T b) { return WrappingMul(a, b); }
};

struct AllReducer {
  static constexpr bool kWraps = false;
  static bool Identity() { return true; }
  template <typename Row>
  static auto ReduceAll(const Row& row) {
    return row.all();
  }
  template <typename A, typename B>
  static auto Combine(const A& a, const B& b) {
    return a && b;
  }
  static bool Combine(bool a, bool b) { return a && b; }
};

struct AnyReducer {
  static constexpr bool kWraps = false;
  static bool Identity() { return false; }
  template <typename Row>
  static auto ReduceAll(const Row& row) {
    return row.any();
  }
  template <typename A, typename B>
  static auto Combine(const A& a, const B& b) {
    return a || b;
  }
  static bool Combine(bool a, bool b) { return a || b; }
};

// Whether Reducer reduces float rows with the kernel table (kFloatRow and
// kFloatCombine).
template <typename T, typename Reducer, typename = void>
struct ReducesFromTable : std::false_type {};
template <typename Reducer>
struct ReducesFromTable<float, Reducer, std::void_t<decltype(Reducer::kFloatRow)>>
    : std::true_type {};

// out[o] = reduce(in[o, :]) for o in [0, outer); a lone long row is split
// into chunks whose partial results are combined.
template <typename T, typename Reducer>
void ReduceRows(const OpKernelContext* ctx, const T* in, T* out, int64_t outer, int64_t reduced) {
  auto reduce_row = [](const T* row, int64_t length, T* result) {
    if constexpr (ReducesFromTable<T, Reducer>::value) {
      *result = (ActiveFloatKernels().*Reducer::kFloatRow)(row, length);
    } else if constexpr (Reducer::kWraps) {
      *result = Reducer::ReduceWrapping(row, length);
    } else {
      EigenScalar<T> destination(result);
      destination = Reducer::ReduceAll(ConstEigenVector<T>(row, length));
    }
  };
  constexpr int64_t kMinChunk = 16 * 1024;
  if (outer == 1 && reduced >= 2 * kMinChunk) {
    const int64_t chunks = std::min<int64_t>(64, reduced / kMinChunk);
    const int64_t chunk = (reduced + chunks - 1) / chunks;
    // (An array, not std::vector, whose bool specialization has no
    // addressable elements.)
    std::unique_ptr<T[]> partial(new T[chunks]);
    std::fill(partial.get(), partial.get() + chunks, Reducer::Identity());
    ParallelFor(ctx, chunks, chunk * sizeof(T), chunk, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const int64_t first = c * chunk;
        reduce_row(in + first, std::min(chunk, reduced - first), &partial[c]);
      }
    });
    T total = partial[0];
    for (int64_t c = 1; c < chunks; ++c) total = Reducer::Combine(total, partial[c]);
    *out = total;
    return;
  }
  ParallelFor(ctx, outer, reduced * sizeof(T), reduced, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) reduce_row(in + o * reduced, reduced, out + o);
  });
}

// out[o, k] = reduce_r(in[o, r, k]): rows of `inner` elements combined in
// order, parallel over (o, k) blocks.
template <typename T, typename Reducer>
void ReduceColumns(const OpKernelContext* ctx, const T* in, T* out, int64_t outer, int64_t reduced,
                   int64_t inner) {
  ParallelFor(ctx, outer * inner, reduced * sizeof(T), reduced, [&](int64_t begin, int64_t end) {
    for (int64_t at = begin; at < end;) {
      const int64_t o = at / inner, k = at % inner;
      const int64_t length = std::min(inner - k, end - at);
      const T* base = in + o * reduced * inner + k;
      if constexpr (ReducesFromTable<T, Reducer>::value) {
        const auto combine = (ActiveFloatKernels().*Reducer::kFloatCombine).vector_vector;
        std::copy(base, base + length, out + at);
        for (int64_t r = 1; r < reduced; ++r) combine(out + at, base + r * inner, out + at, length);
      } else {
        EigenVector<T> acc(out + at, length);
        acc = ConstEigenVector<T>(base, length);
        for (int64_t r = 1; r < reduced; ++r) {
          acc = Reducer::Combine(acc, ConstEigenVector<T>(base + r * inner, length));
        }
      }
      at += length;
    }
  });
}

// Reduces `input` (any dtype of the reduction's T) into `out`, which holds
// the plan's output elements: transposes the reduced axes together first
// when the plan needs it.
template <typename T, typename Reducer>
void Reduce(OpKernelContext* ctx, const ReductionPlan& plan, const Tensor& input, T* out) {
  const T* in = input.data<T>();
  Tensor transposed;
  if (!plan.perm.empty()) {
    OP_REQUIRES_OK(ctx, Tensor::Allocate(input.dtype(), plan.transposed_shape, &transposed));
    Tensor merged;
    merged.CopyFrom(input, plan.merged_shape);
    TransposeTensor(ctx, merged, plan.perm, &transposed);
    in = transposed.data<T>();
  }
  if (plan.inner == 1) {
    ReduceRows<T, Reducer>(ctx, in, out, plan.outer, plan.reduced);
  } else {
    ReduceColumns<T, Reducer>(ctx, in, out, plan.outer, plan.reduced, plan.inner);
  }
}

// The integer type TensorFlow sums an integer mean in: 64 bits of T's
// signedness, so the mean of int8, int16, int32 or uint32 values never
// wraps (the mean of [100, 100, 100] as int8 is 100) while int64 and
// uint64 sums wrap as their Sum does.
template <typename T>
using MeanAccumulator = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;

template <typename T, typename Reducer, bool kMean>
class ReductionOp : public OpKernel {
 public:
  explicit ReductionOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("keep_dims", &keep_dims_));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    ReductionPlan plan;
    OP_REQUIRES_OK(ctx, plan.Init(input.shape(), ctx->input(1), keep_dims_));
    Tensor* output = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, plan.output_shape, &output));
    T* out = output->data<T>();
    const int64_t count = output->NumElements();
    if (count == 0) return;
    if (plan.reduced == 0 || input.NumElements() == 0) {
      // Nothing to reduce: every output is the reduction of no elements.
      const T empty = kMean ? EmptyMean() : Reducer::Identity();
      std::fill(out, out + count, empty);
      return;
    }
    if constexpr (kMean && std::is_integral_v<T>) {
      IntegerMean(ctx, plan, input, out);
      return;
    }
    Reduce<T, Reducer>(ctx, plan, input, out);
    if constexpr (kMean) {
      const T divisor = static_cast<T>(plan.reduced);
      ParallelFor(ctx, count, 2 * sizeof(T), kCheapCycles, [&](int64_t begin, int64_t end) {
        EigenVector<T> values(out + begin, end - begin);
        values = values / values.constant(divisor);
      });
    }
  }

 private:
  static T EmptyMean() {
    return std::numeric_limits<T>::has_quiet_NaN ? std::numeric_limits<T>::quiet_NaN() : T{0};
  }

  // Sums in MeanAccumulator<T>, then divides (truncating, as C and
  // TensorFlow do) by the count, which need not fit T.
  static void IntegerMean(OpKernelContext* ctx, const ReductionPlan& plan, const Tensor& input,
                          T* out) {
    using Wide = MeanAccumulator<T>;
    const DataType wide_type = DataTypeToEnum<Wide>::value;
    Tensor wide, sums;
    OP_REQUIRES_OK(ctx, Tensor::Allocate(wide_type, input.shape(), &wide));
    OP_REQUIRES_OK(ctx, Tensor::Allocate(wide_type, plan.output_shape, &sums));
    std::copy(input.data<T>(), input.data<T>() + input.NumElements(), wide.data<Wide>());
    Reduce<Wide, SumReducer<Wide>>(ctx, plan, wide, sums.data<Wide>());
    const Wide* totals = sums.data<Wide>();
    const Wide divisor = static_cast<Wide>(plan.reduced);
    for (int64_t i = 0; i < sums.NumElements(); ++i) out[i] = static_cast<T>(totals[i] / divisor);
  }

  bool keep_dims_ = false;
};

#define TW_REGISTER_REDUCTIONS(T)                                         \
  TW_REGISTER_CPU_KERNEL("Sum", T, ReductionOp<T, SumReducer<T>, false>); \
  TW_REGISTER_CPU_KERNEL("Mean", T, ReductionOp<T, SumReducer<T>, true>); \
  TW_REGISTER_CPU_KERNEL("Max", T, ReductionOp<T, MaxReducer<T>, false>); \
  TW_REGISTER_CPU_KERNEL("Min", T, ReductionOp<T, MinReducer<T>, false>); \
  TW_REGISTER_CPU_KERNEL("Prod", T, ReductionOp<T, ProdReducer<T>, false>);

TW_FOR_EACH_NUMBER(TW_REGISTER_REDUCTIONS)
REGISTER_KERNEL_BUILDER(Name("All").Device(DEVICE_CPU), ReductionOp<bool, AllReducer, false>);
REGISTER_KERNEL_BUILDER(Name("Any").Device(DEVICE_CPU), ReductionOp<bool, AnyReducer, false>);

#undef TW_REGISTER_REDUCTIONS

}  // namespace
}  // namespace tensorweave
