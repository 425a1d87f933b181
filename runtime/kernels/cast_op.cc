// Cast between float, double, the signed and unsigned integers and bool.
//
// Conversions follow C++ except where C++ leaves them undefined: a float
// converted to an integer saturates at the integer's range and NaN becomes
// 0. numpy and TensorFlow on x86 give the hardware's "indefinite" value
// instead (INT_MIN for every out-of-range input, whatever its sign), which
// is neither portable (ARM saturates) nor expressible in C++ without
// undefined behaviour; saturation is defined for every input, the same on
// every CPU, keeps the input's sign, and is what TensorFlow's
// saturate_cast gives. NaN has no nearest integer, so it maps to 0.
// Integer narrowing wraps, and anything converted to bool is "!= 0".
// `Truncate` only matters for half and bfloat16 targets, which have no
// kernels here, so it is accepted and has no effect.
#include <cmath>
#include <limits>
#include <type_traits>

#include "runtime/kernels/kernel_util.h"

namespace tensorweave {
namespace {

template <typename Dst, typename Src>
Dst CastValue(Src value) {
  if constexpr (std::is_same<Dst, bool>::value) {
    return value != Src{0};
  } else if constexpr (std::is_floating_point<Src>::value && std::is_integral<Dst>::value) {
    if (std::isnan(value)) return Dst{0};
    // Dst's lowest value converts to Src exactly and its max converts
    // exactly or rounds up to the next power of two, so whatever passes
    // both tests truncates to a value in range.
    if (value <= static_cast<Src>(std::numeric_limits<Dst>::lowest())) {
      return std::numeric_limits<Dst>::lowest();
    }
    if (value >= static_cast<Src>(std::numeric_limits<Dst>::max())) {
      return std::numeric_limits<Dst>::max();
    }
    return static_cast<Dst>(value);
  } else {
    return static_cast<Dst>(value);
  }
}

using CastFunction = void (*)(const void* in, void* out, int64_t begin, int64_t end);

template <typename Src, typename Dst>
void CastRange(const void* in, void* out, int64_t begin, int64_t end) {
  const Src* src = static_cast<const Src*>(in);
  Dst* dst = static_cast<Dst*>(out);
  for (int64_t i = begin; i < end; ++i) dst[i] = CastValue<Dst>(src[i]);
}

template <typename Src>
CastFunction CastFrom(DataType dst) {
  switch (dst) {
#define TW_CAST_CASE(T)          \
  case DataTypeToEnum<T>::value: \
    return CastRange<Src, T>;
    TW_FOR_EACH_POD(TW_CAST_CASE)
#undef TW_CAST_CASE
    default:
      return nullptr;
  }
}

CastFunction FindCast(DataType src, DataType dst) {
  switch (src) {
#define TW_CAST_CASE(T)          \
  case DataTypeToEnum<T>::value: \
    return CastFrom<T>(dst);
    TW_FOR_EACH_POD(TW_CAST_CASE)
#undef TW_CAST_CASE
    default:
      return nullptr;
  }
}

class CastOp : public OpKernel {
 public:
  explicit CastOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("SrcT", &src_));
    OP_REQUIRES_OK(c, c->GetAttr("DstT", &dst_));
    if (src_ == dst_) return;
    cast_ = FindCast(src_, dst_);
    OP_REQUIRES(c, cast_ != nullptr,
                errors::Unimplemented("Cast ", DataTypeString(src_), " to ", DataTypeString(dst_),
                                      " is not supported"));
  }

  void Compute(OpKernelContext* ctx) override {
    const Tensor& x = ctx->input(0);
    if (cast_ == nullptr) {  // same type: share the buffer
      ctx->set_output(0, x);
      return;
    }
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, x.shape(), &y));
    const void* in = x.raw_data();
    void* out = y->raw_data();
    const double bytes = DataTypeSize(src_) + DataTypeSize(dst_);
    ParallelFor(ctx, x.NumElements(), bytes, kCheapCycles,
                [&](int64_t begin, int64_t end) { cast_(in, out, begin, end); });
  }

 private:
  DataType src_ = DT_INVALID, dst_ = DT_INVALID;
  CastFunction cast_ = nullptr;
};

REGISTER_KERNEL_BUILDER(Name("Cast").Device(DEVICE_CPU), CastOp);

}  // namespace
}  // namespace tensorweave
