// StringToHashBucketFast: each string's 64-bit fingerprint modulo
// num_buckets, with TensorFlow's Fingerprint64 (FarmHash's "na" Hash64,
// Fingerprint64 in farmhash.h) so the buckets are TensorFlow's: a model's
// hashed feature columns look up the same rows here.
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "runtime/framework/op_kernel.h"

namespace tensorweave {
namespace {

// FarmHash's multipliers.
constexpr uint64_t kMul0 = 0xc3a5c85c97cb3127ULL;
constexpr uint64_t kMul1 = 0xb492b66fbe98f273ULL;
constexpr uint64_t kMul2 = 0x9ae16a3b2f90404fULL;

// Little-endian loads at any address (the fingerprint is defined on
// little-endian words).
uint64_t Load64(const char* p) {
  uint64_t value;
  std::memcpy(&value, p, sizeof(value));
  return value;
}

uint32_t Load32(const char* p) {
  uint32_t value;
  std::memcpy(&value, p, sizeof(value));
  return value;
}

uint64_t RotateRight(uint64_t value, int shift) {
  return shift == 0 ? value : (value >> shift) | (value << (64 - shift));
}

uint64_t ShiftMix(uint64_t value) { return value ^ (value >> 47); }

// Mixes two words into one with multiplier `mul`.
uint64_t Mix16(uint64_t u, uint64_t v, uint64_t mul) {
  uint64_t a = (u ^ v) * mul;
  a ^= a >> 47;
  uint64_t b = (v ^ a) * mul;
  b ^= b >> 47;
  return b * mul;
}

uint64_t FingerprintUpTo16(const char* s, size_t len) {
  if (len >= 8) {
    const uint64_t mul = kMul2 + len * 2;
    const uint64_t a = Load64(s) + kMul2;
    const uint64_t b = Load64(s + len - 8);
    const uint64_t c = RotateRight(b, 37) * mul + a;
    const uint64_t d = (RotateRight(a, 25) + b) * mul;
    return Mix16(c, d, mul);
  }
  if (len >= 4) {
    const uint64_t mul = kMul2 + len * 2;
    const uint64_t a = Load32(s);
    return Mix16(len + (a << 3), Load32(s + len - 4), mul);
  }
  if (len > 0) {
    const uint8_t first = s[0], middle = s[len >> 1], last = s[len - 1];
    const uint32_t y = static_cast<uint32_t>(first) + (static_cast<uint32_t>(middle) << 8);
    const uint32_t z = static_cast<uint32_t>(len) + (static_cast<uint32_t>(last) << 2);
    return ShiftMix(y * kMul2 ^ z * kMul0) * kMul2;
  }
  return kMul2;
}

uint64_t Fingerprint17To32(const char* s, size_t len) {
  const uint64_t mul = kMul2 + len * 2;
  const uint64_t a = Load64(s) * kMul1;
  const uint64_t b = Load64(s + 8);
  const uint64_t c = Load64(s + len - 8) * mul;
  const uint64_t d = Load64(s + len - 16) * kMul2;
  return Mix16(RotateRight(a + b, 43) + RotateRight(c, 30) + d, a + RotateRight(b + kMul2, 18) + c,
               mul);
}

uint64_t Fingerprint33To64(const char* s, size_t len) {
  const uint64_t mul = kMul2 + len * 2;
  const uint64_t a = Load64(s) * kMul2;
  const uint64_t b = Load64(s + 8);
  const uint64_t c = Load64(s + len - 8) * mul;
  const uint64_t d = Load64(s + len - 16) * kMul2;
  const uint64_t y = RotateRight(a + b, 43) + RotateRight(c, 30) + d;
  const uint64_t z = Mix16(y, a + RotateRight(b + kMul2, 18) + c, mul);
  const uint64_t e = Load64(s + 16) * mul;
  const uint64_t f = Load64(s + 24);
  const uint64_t g = (y + Load64(s + len - 32)) * mul;
  const uint64_t h = (z + Load64(s + len - 24)) * mul;
  return Mix16(RotateRight(e + f, 43) + RotateRight(g, 30) + h, e + RotateRight(f + a, 18) + g,
               mul);
}

// Two words from 32 bytes [w, x, y, z] and two seeds.
std::pair<uint64_t, uint64_t> Weak32(uint64_t w, uint64_t x, uint64_t y, uint64_t z, uint64_t a,
                                     uint64_t b) {
  a += w;
  b = RotateRight(b + a + z, 21);
  const uint64_t c = a;
  a += x + y;
  b += RotateRight(a, 44);
  return {a + z, b + c};
}

std::pair<uint64_t, uint64_t> Weak32(const char* s, uint64_t a, uint64_t b) {
  return Weak32(Load64(s), Load64(s + 8), Load64(s + 16), Load64(s + 24), a, b);
}

uint64_t Fingerprint64(const char* s, size_t len) {
  if (len <= 16) return FingerprintUpTo16(s, len);
  if (len <= 32) return Fingerprint17To32(s, len);
  if (len <= 64) return Fingerprint33To64(s, len);
  // 64-byte blocks into a 56-byte state, then the last 64 bytes (which may
  // overlap the final block).
  constexpr uint64_t kSeed = 81;
  uint64_t x = kSeed * kMul2 + Load64(s);
  uint64_t y = kSeed * kMul1 + 113;
  uint64_t z = ShiftMix(y * kMul2 + 113) * kMul2;
  std::pair<uint64_t, uint64_t> v{0, 0}, w{0, 0};
  const char* const end = s + ((len - 1) / 64) * 64;
  const char* const last64 = s + len - 64;
  do {
    x = RotateRight(x + y + v.first + Load64(s + 8), 37) * kMul1;
    y = RotateRight(y + v.second + Load64(s + 48), 42) * kMul1;
    x ^= w.second;
    y += v.first + Load64(s + 40);
    z = RotateRight(z + w.first, 33) * kMul1;
    v = Weak32(s, v.second * kMul1, x + w.first);
    w = Weak32(s + 32, z + w.second, y + Load64(s + 16));
    std::swap(z, x);
    s += 64;
  } while (s != end);
  const uint64_t mul = kMul1 + ((z & 0xff) << 1);
  s = last64;
  w.first += (len - 1) & 63;
  v.first += w.first;
  w.first += v.first;
  x = RotateRight(x + y + v.first + Load64(s + 8), 37) * mul;
  y = RotateRight(y + v.second + Load64(s + 48), 42) * mul;
  x ^= w.second * 9;
  y += v.first * 9 + Load64(s + 40);
  z = RotateRight(z + w.first, 33) * mul;
  v = Weak32(s, v.second * mul, x + w.first);
  w = Weak32(s + 32, z + w.second, y + Load64(s + 16));
  std::swap(z, x);
  return Mix16(Mix16(v.first, w.first, mul) + ShiftMix(y) * kMul0 + z,
               Mix16(v.second, w.second, mul) + x, mul);
}

class StringToHashBucketFastOp : public OpKernel {
 public:
  explicit StringToHashBucketFastOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("num_buckets", &num_buckets_));
    OP_REQUIRES(c, num_buckets_ >= 1,
                errors::InvalidArgument("num_buckets must be at least 1, got ", num_buckets_));
  }

  void Compute(OpKernelContext* c) override {
    const Tensor& input = c->input(0);
    Tensor* output = nullptr;
    OP_REQUIRES_OK(c, c->allocate_output(0, input.shape(), &output));
    const std::string* in = input.data<std::string>();
    int64_t* out = output->data<int64_t>();
    for (int64_t i = 0; i < input.NumElements(); ++i) {
      out[i] = static_cast<int64_t>(Fingerprint64(in[i].data(), in[i].size()) %
                                    static_cast<uint64_t>(num_buckets_));
    }
  }

 private:
  int64_t num_buckets_ = 1;
};

REGISTER_KERNEL_BUILDER(Name("StringToHashBucketFast").Device(DEVICE_CPU),
                        StringToHashBucketFastOp);

}  // namespace
}  // namespace tensorweave
