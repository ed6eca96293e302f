// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// state_encoding.h: the byte encoding of a pipeline state (checkpoint.h),
// shared by its writer (state_writer.cc) and its reader (checkpoint.cc): the
// magic, varints and little-endian fixed-width integers. Not part of the
// public API.
#ifndef DATAECHO_SRC_STATE_ENCODING_H_
#define DATAECHO_SRC_STATE_ENCODING_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace dataecho::internal {

inline constexpr std::string_view kStateMagic = "DEST";

inline void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

inline void PutFixed(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Reads a varint at *pos of `s` (not past `end`); false if truncated or over 64 bits.
inline bool GetVarint(std::string_view s, size_t* pos, size_t end, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && *pos < end; shift += 7) {
    const auto byte = static_cast<uint8_t>(s[(*pos)++]);
    if (shift == 63 && byte > 1) return false;
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

inline uint64_t GetFixed(std::string_view s, size_t pos, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(s[pos + i])) << (8 * i);
  return v;
}

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_STATE_ENCODING_H_
