// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// little_endian.h (internal): the little-endian integers of the TFRecord
// framing (a record's length and its masked CRCs), loaded and stored byte
// by byte whatever the machine's byte order.
#ifndef DATAECHO_SRC_FORMATS_LITTLE_ENDIAN_H_
#define DATAECHO_SRC_FORMATS_LITTLE_ENDIAN_H_

#include <cstdint>

namespace dataecho::internal {

inline uint64_t LoadLE64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline uint32_t LoadLE32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
inline void StoreLE64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void StoreLE32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_FORMATS_LITTLE_ENDIAN_H_
