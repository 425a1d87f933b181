// CRC-32C (Castagnoli), the checksum of TensorFlow's files (checkpoint
// bundles, their index tables, TFRecord/event files) and of ours.
//
//   uint32_t crc = Crc32c(data, n);                  // a whole buffer
//   crc = Crc32cExtend(crc, more, m);                // continued
//   uint32_t stored = MaskCrc32c(crc);               // as TensorFlow writes it
//   if (UnmaskCrc32c(stored) != crc) ... DATA_LOSS
#ifndef TENSORWEAVE_UTIL_CRC32C_H_
#define TENSORWEAVE_UTIL_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace tensorweave {

uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t length);
inline uint32_t Crc32c(const void* data, size_t length) { return Crc32cExtend(0, data, length); }
// The table-driven version Crc32cExtend falls back to without SSE4.2;
// exposed so tests can check that both give the same values.
uint32_t Crc32cExtendPortable(uint32_t crc, const void* data, size_t length);

// TensorFlow's masking of a stored CRC (crc32c::Mask): rotated and offset,
// so a CRC computed over bytes that themselves hold CRCs stays well spread.
uint32_t MaskCrc32c(uint32_t crc);
uint32_t UnmaskCrc32c(uint32_t masked);

}  // namespace tensorweave

#endif  // TENSORWEAVE_UTIL_CRC32C_H_
