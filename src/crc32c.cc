// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define DATAECHO_HAVE_X86_CRC 1
#endif

namespace dataecho {
namespace internal {
namespace {

constexpr uint32_t kPoly = 0x82f63b78u;  // Castagnoli, reflected

// Slicing-by-8 tables: kTables[k][b] is the CRC of byte b followed by k zero bytes.
constexpr std::array<std::array<uint32_t, 256>, 8> MakeTables() {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int i = 0; i < 8; ++i) c = (c >> 1) ^ ((c & 1u) ? kPoly : 0u);
    t[0][b] = c;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xffu];
  }
  return t;
}
constexpr auto kTables = MakeTables();

inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;  // little-endian hosts only (x86, arm64 as configured by Debian)
}

}  // namespace

uint32_t Crc32cExtendPortable(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  while (size > 0 && (reinterpret_cast<uintptr_t>(p) & 7u) != 0) {
    c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xffu];
    --size;
  }
  while (size >= 8) {
    const uint64_t v = Load64(p) ^ c;
    c = kTables[7][v & 0xff] ^ kTables[6][(v >> 8) & 0xff] ^ kTables[5][(v >> 16) & 0xff] ^
        kTables[4][(v >> 24) & 0xff] ^ kTables[3][(v >> 32) & 0xff] ^ kTables[2][(v >> 40) & 0xff] ^
        kTables[1][(v >> 48) & 0xff] ^ kTables[0][v >> 56];
    p += 8;
    size -= 8;
  }
  while (size-- > 0) c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xffu];
  return ~c;
}

#if DATAECHO_HAVE_X86_CRC
__attribute__((target("sse4.2"))) uint32_t Crc32cExtendSse42(uint32_t crc, const void* data,
                                                             size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t c = ~crc;
  while (size > 0 && (reinterpret_cast<uintptr_t>(p) & 7u) != 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --size;
  }
  while (size >= 32) {
    c = _mm_crc32_u64(c, Load64(p));
    c = _mm_crc32_u64(c, Load64(p + 8));
    c = _mm_crc32_u64(c, Load64(p + 16));
    c = _mm_crc32_u64(c, Load64(p + 24));
    p += 32;
    size -= 32;
  }
  while (size >= 8) {
    c = _mm_crc32_u64(c, Load64(p));
    p += 8;
    size -= 8;
  }
  while (size-- > 0) c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
  return ~static_cast<uint32_t>(c);
}

bool Crc32cHardwareAvailable() {
  static const bool available = __builtin_cpu_supports("sse4.2");
  return available;
}
#else
uint32_t Crc32cExtendSse42(uint32_t crc, const void* data, size_t size) {
  return Crc32cExtendPortable(crc, data, size);
}
bool Crc32cHardwareAvailable() { return false; }
#endif

}  // namespace internal

namespace {

// Polynomials modulo the CRC's, reflected as the CRC is: bit 31 is x^0, bit 0
// is x^31. The product of a and b modulo the polynomial.
constexpr uint32_t MultModP(uint32_t a, uint32_t b) {
  uint32_t m = 1u << 31;
  uint32_t product = 0;
  while (true) {
    if ((a & m) != 0) {
      product ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = (b & 1u) != 0 ? (b >> 1) ^ internal::kPoly : b >> 1;
  }
  return product;
}

// kX2n[k] = x^(2^k) modulo the polynomial.
constexpr std::array<uint32_t, 32> MakeX2n() {
  std::array<uint32_t, 32> t{};
  uint32_t p = 1u << 30;  // x^1
  t[0] = p;
  for (int k = 1; k < 32; ++k) t[k] = p = MultModP(p, p);
  return t;
}
constexpr auto kX2n = MakeX2n();

// x^(n * 2^k) modulo the polynomial.
uint32_t X2nModP(uint64_t n, unsigned k) {
  uint32_t p = 1u << 31;  // x^0
  while (n != 0) {
    if ((n & 1) != 0) p = MultModP(kX2n[k & 31], p);
    n >>= 1;
    ++k;
  }
  return p;
}

}  // namespace

uint32_t Crc32cCombine(uint32_t crc_a, uint32_t crc_b, size_t size_b) {
  return MultModP(X2nModP(size_b, 3), crc_a) ^ crc_b;  // x^(8 size_b) = x^(size_b 2^3)
}

uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t size) {
  static const auto impl = internal::Crc32cHardwareAvailable() ? &internal::Crc32cExtendSse42
                                                               : &internal::Crc32cExtendPortable;
  return impl(crc, data, size);
}

}  // namespace dataecho
