// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// internal/echo_draw.h: the per-item draw of every echo stage. Not part of the
// public API.
//
// With factor e, an item gets floor(e) copies, plus one more with probability
// e - floor(e), drawn per item from the stage's seeded generator (never once
// for the whole pipeline). EchoStage draws its copies with it, adaptive and
// auto echo their per-item budgets, so the same factor and seed give the same
// counts in all three.
//
//   internal::EchoDraw draw(2.5);
//   internal::Rng rng(seed);
//   uint32_t copies = draw(rng);   // 2 or 3
//
// Thread-compatible (a value; the generator is the caller's).
#ifndef DATAECHO_INTERNAL_ECHO_DRAW_H_
#define DATAECHO_INTERNAL_ECHO_DRAW_H_

#include <cmath>
#include <cstdint>

#include "dataecho/internal/random.h"

namespace dataecho::internal {

class EchoDraw {
 public:
  // REQUIRES: factor finite and >= 1 (the options' Validate() checks).
  explicit EchoDraw(double factor = 1.0)
      : whole_(static_cast<uint32_t>(std::floor(factor))), fraction_(factor - std::floor(factor)) {}

  uint32_t whole() const { return whole_; }
  double fraction() const { return fraction_; }

  // The copies of the next item: whole(), or whole() + 1 with probability
  // fraction(). Takes one number from `rng` only if fraction() > 0.
  uint32_t operator()(Rng& rng) const {
    uint32_t copies = whole_;
    if (fraction_ > 0 && rng.Uniform() < fraction_) ++copies;
    return copies;
  }

 private:
  uint32_t whole_;
  double fraction_;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_INTERNAL_ECHO_DRAW_H_
