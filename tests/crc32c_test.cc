// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/crc32c.h"

#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace dataecho {
namespace {

using Impl = uint32_t (*)(uint32_t, const void*, size_t);

std::vector<std::pair<const char*, Impl>> Impls() {
  std::vector<std::pair<const char*, Impl>> impls = {{"portable", &internal::Crc32cExtendPortable},
                                                     {"dispatch", &Crc32cExtend}};
  if (internal::Crc32cHardwareAvailable()) impls.push_back({"sse42", &internal::Crc32cExtendSse42});
  return impls;
}

// RFC 3720 (iSCSI), appendix B.4, and the classic check value.
TEST(Crc32cTest, KnownVectors) {
  for (auto [name, crc] : Impls()) {
    SCOPED_TRACE(name);
    EXPECT_EQ(crc(0, "123456789", 9), 0xe3069283u);
    std::string zeros(32, '\0');
    EXPECT_EQ(crc(0, zeros.data(), 32), 0x8a9136aau);
    std::string ones(32, '\xff');
    EXPECT_EQ(crc(0, ones.data(), 32), 0x62a8ab43u);
    std::string inc(32, 0), dec(32, 0);
    for (int i = 0; i < 32; ++i) {
      inc[i] = static_cast<char>(i);
      dec[i] = static_cast<char>(31 - i);
    }
    EXPECT_EQ(crc(0, inc.data(), 32), 0x46dd794eu);
    EXPECT_EQ(crc(0, dec.data(), 32), 0x113fdb5cu);
    const uint8_t iscsi_read[48] = {0x01, 0xc0, 0, 0,    0,    0, 0, 0,    0,    0, 0,    0,
                                    0,    0,    0, 0,    0x14, 0, 0, 0,    0,    0, 0x04, 0,
                                    0,    0,    0, 0x14, 0,    0, 0, 0x18, 0x28, 0, 0,    0,
                                    0,    0,    0, 0,    0x02, 0, 0, 0,    0,    0, 0,    0};
    EXPECT_EQ(crc(0, iscsi_read, 48), 0xd9963a56u);
    EXPECT_EQ(crc(0, "", 0), 0u);
  }
}

TEST(Crc32cTest, ImplementationsAgreeOnEveryLengthAndAlignment) {
  std::mt19937 rng(7);
  std::vector<uint8_t> data(4096 + 16);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  for (size_t align = 0; align < 8; ++align) {
    for (size_t len = 0; len < 300; ++len) {
      const uint32_t want = internal::Crc32cExtendPortable(0, data.data() + align, len);
      for (auto [name, crc] : Impls()) {
        ASSERT_EQ(crc(0, data.data() + align, len), want)
            << name << " len=" << len << " align=" << align;
      }
    }
  }
  const uint32_t whole = internal::Crc32cExtendPortable(0, data.data(), 4096);
  for (auto [name, crc] : Impls()) EXPECT_EQ(crc(0, data.data(), 4096), whole) << name;
}

TEST(Crc32cTest, ExtendEqualsWhole) {
  const std::string a = "hello, ", b = "world";
  for (auto [name, crc] : Impls()) {
    EXPECT_EQ(crc(crc(0, a.data(), a.size()), b.data(), b.size()), Crc32c(a + b)) << name;
  }
}

// Crc32cCombine(Crc32c(a), Crc32c(b), |b|) == Crc32c(a + b), against the direct
// CRC: every split of random bytes up to 300, empty parts, parts of a few MB
// (the combine's table of powers past 2^20 bits), and a chain of combines.
TEST(Crc32cTest, CombineEqualsTheDirectCrc) {
  std::mt19937 rng(7);
  std::string data(300, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  for (size_t n = 0; n <= data.size(); n += 1 + n / 16) {
    for (size_t cut = 0; cut <= n; ++cut) {
      const std::string_view all(data.data(), n);
      ASSERT_EQ(Crc32cCombine(Crc32c(all.substr(0, cut)), Crc32c(all.substr(cut)), n - cut),
                Crc32c(all))
          << "n " << n << " cut " << cut;
    }
  }
  EXPECT_EQ(Crc32cCombine(Crc32c("abc"), Crc32c(""), 0), Crc32c("abc"));
  EXPECT_EQ(Crc32cCombine(Crc32c(""), Crc32c("abc"), 3), Crc32c("abc"));
  EXPECT_EQ(Crc32cCombine(0, 0, 0), 0u);

  std::string big((5 << 20) + 13, '\0');
  for (char& c : big) c = static_cast<char>(rng());
  for (size_t cut : {size_t{1}, size_t{4096}, big.size() / 3, big.size() - 1}) {
    const std::string_view all(big);
    EXPECT_EQ(Crc32cCombine(Crc32c(all.substr(0, cut)), Crc32c(all.substr(cut)), big.size() - cut),
              Crc32c(all))
        << "cut " << cut;
  }
  // A chain: the CRC of 7 parts from theirs, as a state's is from its sections'.
  uint32_t crc = 0;
  size_t at = 0;
  for (size_t part :
       {size_t{0}, size_t{5}, size_t{100000}, size_t{1}, size_t{77}, size_t{4096}, size_t{3}}) {
    const std::string_view piece = std::string_view(big).substr(at, part);
    crc = Crc32cCombine(crc, Crc32c(piece), piece.size());
    at += part;
  }
  EXPECT_EQ(crc, Crc32c(big.data(), at));
}

TEST(Crc32cTest, MaskMatchesTensorFlow) {
  // An empty TFRecord written by TensorFlow is the 16 bytes
  // 00*8, 29 03 98 07 (masked CRC of the length), d8 ea 82 a2 (masked CRC of "").
  const uint64_t zero_len = 0;
  EXPECT_EQ(MaskCrc32c(Crc32c(&zero_len, 8)), 0x07980329u);
  EXPECT_EQ(MaskCrc32c(Crc32c("", 0)), 0xa282ead8u);
  EXPECT_EQ(MaskCrc32c(Crc32c("foo")), 0xfebe8a61u);
  for (uint32_t v : {0u, 1u, 0xe3069283u, 0xffffffffu, 0x12345678u}) {
    EXPECT_EQ(UnmaskCrc32c(MaskCrc32c(v)), v);
  }
  EXPECT_NE(MaskCrc32c(MaskCrc32c(Crc32c("foo"))), Crc32c("foo"));
}

}  // namespace
}  // namespace dataecho
