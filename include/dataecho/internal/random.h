// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/random.h: the seeded generator every random stage uses.
//
// Output is fully specified (SplitMix64 seeding, xoshiro256** steps, our own
// float and range conversions), so the same seed gives the same stream on
// every platform and standard library. Not part of the public API.
#ifndef DATAECHO_INTERNAL_RANDOM_H_
#define DATAECHO_INTERNAL_RANDOM_H_

#include <array>
#include <cstdint>

namespace dataecho::internal {

// One SplitMix64 step: a strong 64-bit mix, also used to derive seeds.
inline uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A seed derived from several values, e.g. (seed, source_index, repeat_index).
inline uint64_t MixSeed(uint64_t a, uint64_t b, uint64_t c = 0) {
  uint64_t s = a;
  uint64_t h = SplitMix64(s);
  s = h ^ b;
  h = SplitMix64(s);
  s = h ^ c;
  return SplitMix64(s);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (uint64_t& w : s_) w = SplitMix64(seed);
  }

  uint64_t operator()() {  // xoshiro256**
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // The generator's whole state, and a generator from it (checkpoints).
  std::array<uint64_t, 4> state() const { return {s_[0], s_[1], s_[2], s_[3]}; }
  static Rng FromState(const std::array<uint64_t, 4>& state) {
    Rng r(0);
    for (int i = 0; i < 4; ++i) r.s_[i] = state[i];
    return r;
  }

  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }

  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias < n / 2^64).
  uint64_t Below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>((*this)()) * n) >> 64);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_RANDOM_H_
