// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// crc32c.h: CRC-32C (Castagnoli), as TFRecord, LevelDB and iSCSI use it.
//
// `Crc32c()` uses the SSE4.2 `crc32` instruction when the CPU has it (checked
// once at run time) and a table-driven (slicing-by-8) implementation otherwise.
// TFRecord stores CRCs *masked* (rotated and offset) so that a CRC of data that
// itself contains CRCs stays well distributed; `MaskCrc32c()` is TensorFlow's
// mask.
//
//   uint32_t crc = dataecho::Crc32c("123456789", 9);        // 0xE3069283
//   crc = dataecho::Crc32cExtend(crc, more.data(), more.size());
//   // The CRC of a + b from the CRCs of a and b (b's length only: no pass over b):
//   uint32_t ab = dataecho::Crc32cCombine(Crc32c(a), Crc32c(b), b.size());
//   uint32_t stored = dataecho::MaskCrc32c(crc);            // what TFRecord writes
//   assert(dataecho::UnmaskCrc32c(stored) == crc);
//
// All functions are pure and thread-safe.
#ifndef DATAECHO_CRC32C_H_
#define DATAECHO_CRC32C_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "dataecho/export.h"

namespace dataecho {

// The CRC-32C of `data` continued from `crc` (the CRC of the bytes before).
// Crc32cExtend(Crc32c(a), b) == Crc32c(a + b).
DATAECHO_EXPORT uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t size);

inline uint32_t Crc32c(const void* data, size_t size) { return Crc32cExtend(0, data, size); }
inline uint32_t Crc32c(std::string_view bytes) { return Crc32c(bytes.data(), bytes.size()); }

// The CRC-32C of a + b, given crc_a = Crc32c(a), crc_b = Crc32c(b) and the
// length of b, in O(log size_b) steps (zlib's crc32_combine, for CRC-32C:
// crc_a times x^(8 size_b) modulo the polynomial, plus crc_b). A checksum of
// bytes whose parts were checksummed earlier, elsewhere (a pipeline state
// around a snapshot taken on another thread) costs no pass over them.
DATAECHO_EXPORT uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, size_t size_b);

// TensorFlow's / LevelDB's CRC mask: rotate right by 15 bits, add a constant.
inline constexpr uint32_t kCrc32cMaskDelta = 0xa282ead8u;
inline uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kCrc32cMaskDelta; }
inline uint32_t UnmaskCrc32c(uint32_t masked) {
  const uint32_t rot = masked - kCrc32cMaskDelta;
  return (rot >> 17) | (rot << 15);
}

namespace internal {

// The two implementations behind Crc32cExtend(), exposed for tests and
// benchmarks. REQUIRES for Crc32cExtendSse42: Crc32cHardwareAvailable().
DATAECHO_EXPORT uint32_t Crc32cExtendPortable(uint32_t crc, const void* data, size_t size);
DATAECHO_EXPORT uint32_t Crc32cExtendSse42(uint32_t crc, const void* data, size_t size);
// True if this CPU has the SSE4.2 crc32 instruction (and it was compiled in).
DATAECHO_EXPORT bool Crc32cHardwareAvailable();

}  // namespace internal
}  // namespace dataecho

#endif  // DATAECHO_CRC32C_H_
