// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Echo diagnostics (echo_diagnostics.h) on pipelines whose copies land where
// the construction puts them: batch echo (a copy one step later), example
// echo without a shuffle (copies in the same batch), no echo.
#include "dataecho/echo_diagnostics.h"

#include <string>

#include "dataecho/echo_placement.h"
#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "support/examples.h"

namespace dataecho {
namespace {

using testing::MakeExamples;

constexpr int64_t kItems = 64;
constexpr int64_t kRows = 8;

StageStats Drain(Pipeline<Batch> p) {
  EXPECT_TRUE(p.status().ok()) << p.status();
  while (true) {
    auto b = p.Next();
    EXPECT_TRUE(b.ok()) << b.status();
    if (!b.ok() || !b->has_value()) break;
  }
  return p.Stats().back();
}

EchoedBatchesOptions Options(EchoPlacement placement, double factor) {
  return {.placement = placement,
          .echo = {.factor = factor, .seed = 1},
          .shuffle = {.buffer_size = 1, .seed = 2},  // no spreading: copies stay together
          .batch = {.batch_size = kRows},
          .prefetch = {.depth = 2},
          .diagnostics = true};
}

TEST(EchoDiagnosticsTest, BatchEchoRepeatsABatchOneStepLater) {
  const StageStats s = Drain(EchoedBatches(FromVector(MakeExamples(kItems)).Prefetch({}), nullptr,
                                           Options(EchoPlacement::kBatch, 2)));
  EXPECT_EQ(s.name, "echo_diagnostics");
  EXPECT_EQ(s.elements, 2 * kItems / kRows);
  EXPECT_EQ(s.Extra("dup_rows_per_batch", -1), 0);
  EXPECT_EQ(s.Extra("copy_distance_steps"), 1);
  EXPECT_EQ(s.Extra("fresh_row_fraction"), 0.5);
}

TEST(EchoDiagnosticsTest, UnspreadExampleCopiesShareABatch) {
  const StageStats s = Drain(EchoedBatches(FromVector(MakeExamples(kItems)).Prefetch({}), nullptr,
                                           Options(EchoPlacement::kAfterAugment, 2)));
  // Each item and its copy are back to back: half of every batch repeats.
  EXPECT_EQ(s.Extra("dup_rows_per_batch"), kRows / 2);
  EXPECT_EQ(s.Extra("copy_distance_steps", -1), 0);  // never seen again in a later step
  EXPECT_EQ(s.Extra("fresh_row_fraction"), 0.5);
}

TEST(EchoDiagnosticsTest, WithoutEchoEveryRowIsFreshAndSeenOnce) {
  Pipeline<Batch> p =
      WithEchoDiagnostics(FromVector(MakeExamples(kItems)).Batch({.batch_size = kRows}), "diag");
  const StageStats s = Drain(std::move(p));
  EXPECT_EQ(s.name, "diag");
  EXPECT_EQ(s.Extra("dup_rows_per_batch", -1), 0);
  EXPECT_EQ(s.Extra("copy_distance_steps", -1), 0);
  EXPECT_EQ(s.Extra("fresh_row_fraction"), 1);
  EXPECT_NE(StatsToJson({s}).find("\"fresh_row_fraction\": 1"), std::string::npos);
}

}  // namespace
}  // namespace dataecho
