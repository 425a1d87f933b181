// CRC-32C (the Castagnoli polynomial, reflected: 0x82F63B78), the checksum
// of checkpoints, their index tables and record files (crc32c.h). x86-64 CPUs with SSE4.2 compute
// it in hardware (about ten times faster than tables); elsewhere a slicing-by-8 table version runs.
// Both produce identical values; tests check them against each other and against published check
// values.
#include "runtime/util/crc32c.h"

#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace tensorweave {
namespace {

constexpr uint32_t kCastagnoliReflected = 0x82F63B78u;

// tables[k][b]: the CRC state change of byte b followed by k zero bytes, so
// eight bytes can be folded in with eight independent lookups.
struct Crc32cTables {
  uint32_t t[8][256];
  Crc32cTables() {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t crc = b;
      for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kCastagnoliReflected : 0);
      t[0][b] = crc;
    }
    for (uint32_t b = 0; b < 256; ++b) {
      for (int k = 1; k < 8; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
    }
  }
};

const Crc32cTables& Tables() {
  static const Crc32cTables* tables = new Crc32cTables();
  return *tables;
}

uint64_t LoadLittleEndian64(const uint8_t* p) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | p[i];
  return value;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t HardwareExtend(uint32_t crc, const uint8_t* p,
                                                          size_t length) {
  uint64_t state = ~crc;
  while (length > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    state = _mm_crc32_u8(static_cast<uint32_t>(state), *p++);
    --length;
  }
  while (length >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);  // x86 is little-endian, as the CRC's byte order expects
    state = _mm_crc32_u64(state, word);
    p += 8;
    length -= 8;
  }
  while (length > 0) {
    state = _mm_crc32_u8(static_cast<uint32_t>(state), *p++);
    --length;
  }
  return ~static_cast<uint32_t>(state);
}

bool CpuHasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

}  // namespace

uint32_t Crc32cExtendPortable(uint32_t crc, const void* data, size_t length) {
  const Crc32cTables& tables = Tables();
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t state = ~crc;
  while (length >= 8) {
    const uint64_t word = LoadLittleEndian64(p) ^ state;
    state = tables.t[7][word & 0xff] ^ tables.t[6][(word >> 8) & 0xff] ^
            tables.t[5][(word >> 16) & 0xff] ^ tables.t[4][(word >> 24) & 0xff] ^
            tables.t[3][(word >> 32) & 0xff] ^ tables.t[2][(word >> 40) & 0xff] ^
            tables.t[1][(word >> 48) & 0xff] ^ tables.t[0][word >> 56];
    p += 8;
    length -= 8;
  }
  while (length-- > 0) state = (state >> 8) ^ tables.t[0][(state ^ *p++) & 0xff];
  return ~state;
}

uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t length) {
#if defined(__x86_64__)
  if (CpuHasSse42()) return HardwareExtend(crc, static_cast<const uint8_t*>(data), length);
#endif
  return Crc32cExtendPortable(crc, data, length);
}

// The offset TensorFlow adds after rotating (crc32c::kMaskDelta).
constexpr uint32_t kMaskDelta = 0xa282ead8u;

uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }

uint32_t UnmaskCrc32c(uint32_t masked) {
  const uint32_t rotated = masked - kMaskDelta;
  return (rotated >> 17) | (rotated << 15);
}

}  // namespace tensorweave
