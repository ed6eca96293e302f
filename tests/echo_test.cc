// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/echo.h"

#include <cmath>
#include <limits>
#include <map>

#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/examples.h"

namespace dataecho {
namespace {

using testing::Drain;
using testing::MakeExamples;

std::vector<Example> EchoAll(std::vector<Example> in, double factor, uint64_t seed = 0) {
  auto p = FromVector(std::move(in)).Echo({.factor = factor, .seed = seed});
  EXPECT_TRUE(p.status().ok()) << p.status();
  auto stage = std::move(p).Release();
  return *Drain(**stage);
}

TEST(EchoTest, IntegerFactorRepeatsEveryItemBackToBack) {
  std::vector<Example> out = EchoAll(MakeExamples(100), 3.0);
  ASSERT_EQ(out.size(), 300u);
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].source_index, i / 3);
    EXPECT_EQ(out[i].repeat_index, i % 3);
  }
  std::map<uint64_t, int> counts;
  for (const Example& e : out) ++counts[e.source_index];
  for (const auto& [index, n] : counts) EXPECT_EQ(n, 3) << index;
}

TEST(EchoTest, CopiesSharePayloadBytes) {
  std::vector<Example> out = EchoAll(MakeExamples(4, 784), 4.0);
  ASSERT_EQ(out.size(), 16u);
  for (size_t i = 0; i < out.size(); i += 4) {
    for (size_t k = 1; k < 4; ++k) {
      EXPECT_EQ(out[i].components[0].buffer().data(), out[i + k].components[0].buffer().data());
    }
  }
}

TEST(EchoTest, FractionalFactorDrawsPerItem) {
  constexpr int64_t kItems = 100000;
  auto p = FromVector(MakeExamples(kItems, 1)).Echo({.factor = 2.5, .seed = 17});
  std::map<uint64_t, int> counts;
  int64_t emitted = 0;
  while (true) {
    auto r = p.Next();
    ASSERT_TRUE(r.ok());
    if (!r->has_value()) break;
    ++counts[(*r)->source_index];
    ++emitted;
  }
  ASSERT_EQ(counts.size(), static_cast<size_t>(kItems));
  int twos = 0;
  for (const auto& [index, n] : counts) {
    ASSERT_TRUE(n == 2 || n == 3) << index << " emitted " << n << " times";
    twos += n == 2;
  }
  const double realized = static_cast<double>(emitted) / kItems;
  EXPECT_NEAR(realized, 2.5, 0.025);
  EXPECT_GT(twos, kItems / 3);               // both outcomes occur often: the draw is per item
  const StageStats echo = p.Stats().back();  // a copy: Stats() returns a temporary
  EXPECT_EQ(echo.elements, emitted);
  EXPECT_EQ(echo.Extra("fresh"), kItems);
  EXPECT_DOUBLE_EQ(echo.Extra("realized_factor"), realized);
}

TEST(EchoTest, FactorOneIsIdentity) {
  std::vector<Example> out = EchoAll(MakeExamples(50), 1.0);
  ASSERT_EQ(out.size(), 50u);
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].source_index, i);
    EXPECT_TRUE(out[i].fresh());
  }
}

TEST(EchoTest, InvalidFactorsAreRejected) {
  for (double bad : {0.99, 0.0, -2.0, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    auto p = FromVector(MakeExamples(3)).Echo({.factor = bad});
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(p.Next().status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(EchoTest, SameSeedSameDrawsDifferentSeedDifferent) {
  auto counts = [](uint64_t seed) {
    std::vector<uint32_t> c;
    for (const Example& e : EchoAll(MakeExamples(2000, 1), 1.5, seed)) {
      if (e.repeat_index == 1) c.push_back(static_cast<uint32_t>(e.source_index));
    }
    return c;
  };
  EXPECT_EQ(counts(5), counts(5));
  EXPECT_NE(counts(5), counts(6));
}

TEST(EchoTest, BatchEchoMarksRepeatsWithNoFreshRows) {
  auto p = FromVector(MakeExamples(10)).Batch({.batch_size = 4}).Echo({.factor = 2});
  auto stage = std::move(p).Release();
  std::vector<Batch> out = *Drain(**stage);
  ASSERT_EQ(out.size(), 6u);  // 3 batches (4, 4, 2 rows), each twice
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].repeat_index, i % 2);
    EXPECT_EQ(out[i].fresh_rows, i % 2 == 0 ? out[i].num_rows : 0);
    EXPECT_EQ(out[i].components[0].buffer().data(), out[i - i % 2].components[0].buffer().data());
  }
  EXPECT_EQ(out[4].num_rows, 2);
}

}  // namespace
}  // namespace dataecho
