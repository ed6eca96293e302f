// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The per-item echo draw every echo stage uses (internal/echo_draw.h).
#include "dataecho/internal/echo_draw.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "dataecho/echo.h"
#include "dataecho/internal/random.h"
#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/examples.h"

namespace dataecho {
namespace {

using internal::EchoDraw;
using internal::Rng;

TEST(EchoDrawTest, SplitsTheFactorIntoWholeAndFraction) {
  EXPECT_EQ(EchoDraw(1.0).whole(), 1u);
  EXPECT_EQ(EchoDraw(1.0).fraction(), 0.0);
  EXPECT_EQ(EchoDraw(2.5).whole(), 2u);
  EXPECT_DOUBLE_EQ(EchoDraw(2.5).fraction(), 0.5);
  EXPECT_EQ(EchoDraw(7.0).whole(), 7u);
}

TEST(EchoDrawTest, AWholeFactorNeverTouchesTheGenerator) {
  Rng rng(3), untouched(3);
  const EchoDraw draw(4.0);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(draw(rng), 4u);
  EXPECT_EQ(rng(), untouched());
}

TEST(EchoDrawTest, EachItemTakesOneUniformFromTheSeededGenerator) {
  // The documented algorithm: floor(e), plus one if the item's own uniform
  // draw is below e - floor(e).
  const EchoDraw draw(1.3);
  Rng rng(42), reference(42);
  for (int i = 0; i < 1000; ++i) {
    const uint32_t expected = reference.Uniform() < 0.3 ? 2u : 1u;
    ASSERT_EQ(draw(rng), expected) << i;
  }
}

TEST(EchoDrawTest, RealizedFactorConvergesToTheFactor) {
  for (double e : {1.25, 2.5, 3.9}) {
    const EchoDraw draw(e);
    Rng rng(7);
    constexpr int kItems = 200000;
    int64_t copies = 0;
    int low = 0;
    for (int i = 0; i < kItems; ++i) {
      const uint32_t c = draw(rng);
      ASSERT_TRUE(c == draw.whole() || c == draw.whole() + 1) << c;
      copies += c;
      low += c == draw.whole();
    }
    EXPECT_NEAR(static_cast<double>(copies) / kItems, e, 0.01) << e;
    // Per item, not once for all: both outcomes occur in the expected share.
    EXPECT_NEAR(static_cast<double>(low) / kItems, 1 - (e - std::floor(e)), 0.01) << e;
  }
}

TEST(EchoDrawTest, EchoStageEmitsTheDrawnCopies) {
  constexpr int kItems = 500;
  auto p = FromVector(testing::MakeExamples(kItems, 1)).Echo({.factor = 2.25, .seed = 11});
  std::vector<uint32_t> emitted(kItems, 0);
  while (true) {
    auto r = p.Next();
    ASSERT_TRUE(r.ok());
    if (!r->has_value()) break;
    ++emitted[(*r)->source_index];
  }
  const EchoDraw draw(2.25);
  Rng rng(11);
  for (int i = 0; i < kItems; ++i) EXPECT_EQ(emitted[i], draw(rng)) << i;
}

}  // namespace
}  // namespace dataecho
