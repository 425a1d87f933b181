// Exact counts and sums of dimensions computed from values a graph or a
// user supplies, shared by shape functions and kernels so that both agree:
// every result is either exact and at most kMaxElements, or an
// INVALID_ARGUMENT. (TensorShape::Build and MultiplyWithoutOverflow in
// runtime/framework/tensor_shape.h cover products; this covers sums and
// Range's count.)
#ifndef TENSORWEAVE_OPS_CHECKED_COUNT_H_
#define TENSORWEAVE_OPS_CHECKED_COUNT_H_

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "runtime/framework/status.h"
#include "runtime/framework/tensor_shape.h"

namespace tensorweave {

// a + b for two dimension sizes; false when either is negative or the sum
// exceeds kMaxElements (so it can never wrap).
inline bool AddWithoutOverflow(int64_t a, int64_t b, int64_t* sum) {
  if (a < 0 || b < 0 || a > kMaxElements || b > kMaxElements - a) return false;
  *sum = a + b;
  return true;
}

// An integer value as its two's-complement bit pattern in 64 bits, so that
// differences of any two values of any integer type are exact modulo 2^64.
template <typename T>
uint64_t AsUnsigned64(T value) {
  if constexpr (std::is_signed_v<T>) {
    return static_cast<uint64_t>(static_cast<int64_t>(value));
  } else {
    return static_cast<uint64_t>(value);
  }
}

// The number of elements of Range(start, limit, delta): ceil((limit -
// start) / delta), with TensorFlow's checks on delta's sign. Integers are
// counted exactly in unsigned 64-bit arithmetic (limit - start of two
// int64 values needs 64 unsigned bits); floating types in double, as
// TensorFlow does. A count above kMaxElements is INVALID_ARGUMENT.
template <typename T>
Status RangeCount(T start, T limit, T delta, int64_t* count) {
  if (delta == T(0)) return errors::InvalidArgument("Requires delta != 0: ", delta);
  if (!(delta < T(0) || start <= limit)) {
    return errors::InvalidArgument("Requires start <= limit when delta > 0: ", start, "/", limit);
  }
  if (!(delta > T(0) || start >= limit)) {
    return errors::InvalidArgument("Requires start >= limit when delta < 0: ", start, "/", limit);
  }
  if constexpr (std::is_integral_v<T>) {
    const bool up = delta > T(0);
    // Both differences are in [0, 2^64): exact in uint64_t.
    const uint64_t span =
        up ? AsUnsigned64(limit) - AsUnsigned64(start) : AsUnsigned64(start) - AsUnsigned64(limit);
    const uint64_t step = up ? AsUnsigned64(delta) : uint64_t{0} - AsUnsigned64(delta);
    const uint64_t n = span / step + (span % step != 0 ? 1 : 0);
    if (n > static_cast<uint64_t>(kMaxElements)) {
      return errors::InvalidArgument("Range of ", n, " elements is too large (start ", start,
                                     ", limit ", limit, ", delta ", delta, ")");
    }
    *count = static_cast<int64_t>(n);
  } else {
    const double n = std::ceil(std::fabs((static_cast<double>(limit) - static_cast<double>(start)) /
                                         static_cast<double>(delta)));
    if (!(n <= static_cast<double>(kMaxElements))) {  // also catches NaN
      return errors::InvalidArgument("Range of ", n, " elements is too large (start ", start,
                                     ", limit ", limit, ", delta ", delta, ")");
    }
    *count = static_cast<int64_t>(n);
  }
  return Status::OK();
}

// Element i of Range(start, _, delta) for i < RangeCount: start + i * delta
// computed in wrapping unsigned arithmetic for integers, because i * delta
// alone may overflow T (Range(INT64_MIN, INT64_MAX, INT64_MAX)) while the
// element itself always lies between start and limit.
template <typename T>
T RangeElement(T start, T delta, int64_t i) {
  if constexpr (std::is_integral_v<T>) {
    const uint64_t bits = AsUnsigned64(start) + static_cast<uint64_t>(i) * AsUnsigned64(delta);
    return static_cast<T>(static_cast<int64_t>(bits));
  } else {
    return static_cast<T>(start + static_cast<T>(i) * delta);
  }
}

}  // namespace tensorweave

#endif  // TENSORWEAVE_OPS_CHECKED_COUNT_H_
