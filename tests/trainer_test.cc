// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Tests of the example trainer (examples/trainer/trainer.h): short real
// training runs on a subset of Fashion-MNIST (Debian's dataset-fashion-mnist)
// through the library pipeline, locally and over loopback HTTP.
#include "trainer/trainer.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dataecho/formats/image_record.h"
#include "dataecho/formats/tfrecord.h"
#include "fmt/format.h"
#include "gtest/gtest.h"
#include "internal/json_reader.h"
#include "support/examples.h"
#include "trainer/data.h"

namespace trainer {
namespace {

TrainOptions SmallRun() {
  TrainOptions o;
  o.train_limit = 3000;
  o.test_limit = 1000;
  o.fresh_budget = 15000;
  o.eval_every = 5000;
  o.shuffle_buffer = 512;
  o.prefetch_depth = 256;
  o.learning_rate = 0.05f;
  return o;
}

// A small run of `fresh` fresh examples, evaluated once at its end, with echo
// placed by `insert` at most `max_echo` times (adaptive and auto).
TrainOptions CappedRun(EchoInsert insert, double max_echo, int64_t fresh) {
  TrainOptions o = SmallRun();
  o.fresh_budget = fresh;
  o.eval_every = fresh;
  o.insert = insert;
  o.max_echo = max_echo;
  return o;
}

TEST(TrainerTest, ShortRunLearnsWellAboveChance) {
  absl::StatusOr<TrainResult> r = Train(SmallRun());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GE(r->final_test_accuracy, 0.6);  // chance is 0.1
  EXPECT_GE(r->fresh_examples_total, 15000);
  EXPECT_LT(r->fresh_examples_total, 15000 + 128);
  EXPECT_EQ(r->examples_total, r->fresh_examples_total);  // e = 1: every row fresh
  EXPECT_EQ(r->realized_echo_factor, 1.0);
  EXPECT_GE(r->data_wait_seconds, 0.0);
  EXPECT_LE(r->data_wait_seconds, r->seconds_total);
  ASSERT_EQ(r->curve.size(), 3u);
  for (size_t i = 0; i < r->curve.size(); ++i) {
    EXPECT_GE(r->curve[i].fresh_examples, static_cast<int64_t>(5000 * (i + 1)));
    EXPECT_LT(r->curve[i].fresh_examples, static_cast<int64_t>(5000 * (i + 1) + 128));
  }
  EXPECT_EQ(r->curve.back().test_accuracy, r->final_test_accuracy);
}

TEST(TrainerTest, SameSeedSameRunOtherSeedOtherRun) {
  TrainOptions o = SmallRun();
  o.fresh_budget = 3000;
  o.eval_every = 1500;
  o.echo = 1.5;
  absl::StatusOr<TrainResult> a = Train(o);
  absl::StatusOr<TrainResult> b = Train(o);
  o.seed = 2;
  absl::StatusOr<TrainResult> c = Train(o);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->steps_total, b->steps_total);
  EXPECT_EQ(a->final_test_accuracy, b->final_test_accuracy);
  EXPECT_NE(a->final_test_accuracy, c->final_test_accuracy);
  // The same batches in the same order: the same data digest.
  EXPECT_NE(a->data_digest, 0u);
  EXPECT_EQ(a->data_digest, b->data_digest);
  EXPECT_NE(a->data_digest, c->data_digest);
}

TEST(TrainerTest, DataDigestSeesOrderAndRepeatIndices) {
  std::vector<dataecho::Example> rows = dataecho::testing::MakeExamples(8);
  auto batches = [&](std::vector<dataecho::Example> v) {
    std::vector<dataecho::Batch> out;
    auto p = dataecho::FromVector(std::move(v)).Batch({.batch_size = 4});
    while (true) {
      auto b = p.Next();
      if (!b.ok() || !b->has_value()) break;
      out.push_back(**b);
    }
    return out;
  };
  auto digest = [](const std::vector<dataecho::Batch>& bs) {
    uint64_t d = 0;
    for (const dataecho::Batch& b : bs) d = DigestBatch(d, b);
    return d;
  };
  const uint64_t base = digest(batches(rows));
  std::vector<dataecho::Example> swapped = rows;
  std::swap(swapped[0], swapped[5]);  // two rows change batches
  EXPECT_NE(digest(batches(swapped)), base);
  std::vector<dataecho::Example> repeated = rows;
  repeated[2].repeat_index = 1;
  EXPECT_NE(digest(batches(repeated)), base);
  std::vector<dataecho::Batch> reversed = batches(rows);
  std::swap(reversed[0], reversed[1]);  // the same batches in another order
  EXPECT_NE(digest(reversed), base);
  EXPECT_EQ(digest(batches(rows)), base);
}

// Every insertion point repeats data e times: e times the rows per fresh example.
TEST(TrainerTest, EchoMultipliesRowsPerFreshExample) {
  for (EchoInsert insert :
       {EchoInsert::kBeforeAugment, EchoInsert::kAfterAugment, EchoInsert::kBatch}) {
    TrainOptions o = SmallRun();
    o.fresh_budget = 3000;
    o.eval_every = 3000;
    o.echo = 3.0;
    o.insert = insert;
    absl::StatusOr<TrainResult> r = Train(o);
    ASSERT_TRUE(r.ok()) << r.status();
    const double ratio = static_cast<double>(r->examples_total) / r->fresh_examples_total;
    EXPECT_NEAR(ratio, 3.0, 0.1) << EchoInsertName(insert);
    EXPECT_DOUBLE_EQ(r->realized_echo_factor, ratio);
    EXPECT_FALSE(r->max_echo.has_value());
    EXPECT_EQ(r->insert, insert);
  }
}

// Adaptive echoing (--insert=adaptive --max_echo=M): whatever the timing, no
// example is trained on more than M times, so rows / fresh rows stays in
// [1, M] up to the examples still buffered in the pipeline at the end (their
// repeats may have been trained before their fresh copy).
TEST(TrainerTest, AdaptiveEchoStaysWithinItsCap) {
  const TrainOptions o = CappedRun(EchoInsert::kAdaptive, 2.0, 6000);
  absl::StatusOr<TrainResult> r = Train(o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->insert, EchoInsert::kAdaptive);
  ASSERT_TRUE(r->max_echo.has_value());
  EXPECT_EQ(*r->max_echo, 2.0);
  EXPECT_GE(r->fresh_examples_total, 6000);
  EXPECT_DOUBLE_EQ(r->realized_echo_factor, static_cast<double>(r->examples_total) /
                                                static_cast<double>(r->fresh_examples_total));
  EXPECT_GE(r->realized_echo_factor, 1.0);
  // In flight at the end: at most the shuffle buffer, the prefetch depth and a
  // few batches, each repeated at most M - 1 times.
  const double in_flight = o.shuffle_buffer + o.prefetch_depth + 4 * o.batch_size;
  EXPECT_LE(r->examples_total, 2.0 * (r->fresh_examples_total + in_flight));
  EXPECT_GE(r->final_test_accuracy, 0.5);
  const std::string json = ResultToJson(*r);
  EXPECT_NE(json.find("\"insert\": \"adaptive\", \"max_echo\": 2,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"realized_echo_factor\": "), std::string::npos) << json;
}

TEST(TrainerTest, StopsAtTarget) {
  TrainOptions o = SmallRun();
  o.target_accuracy = 0.3;
  o.eval_every = 1000;
  o.stop_at_target = true;
  absl::StatusOr<TrainResult> r = Train(o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->fresh_examples_to_target.has_value());
  EXPECT_EQ(*r->fresh_examples_to_target, r->fresh_examples_total);
  EXPECT_LT(r->fresh_examples_total, o.fresh_budget);
  EXPECT_GT(*r->steps_to_target, 0);
  EXPECT_GE(*r->seconds_to_target, 0.0);
  EXPECT_GE(r->final_test_accuracy, 0.3);
}

TEST(TrainerTest, JsonHasExactlyTheFields) {
  TrainResult r;
  r.echo = 1.5;
  r.insert = EchoInsert::kAfterAugment;
  r.final_test_accuracy = 0.8612;
  r.fresh_examples_total = 600064;
  r.curve = {{20000, 0.75}, {40000, 0.8}};
  r.steps_total = 7032;
  r.seconds_total = 58.5;
  r.data_wait_seconds = 0.25;
  r.realized_echo_factor = 1.5;
  EXPECT_EQ(
      ResultToJson(r),
      "{\"echo\": 1.5, \"insert\": \"after_augment\", \"max_echo\": null, "
      "\"fresh_examples_to_target\": null, "
      "\"steps_to_target\": null, \"seconds_to_target\": null, \"final_test_accuracy\": 0.8612, "
      "\"fresh_examples_total\": 600064, \"steps_total\": 7032, \"seconds_total\": 58.5, "
      "\"data_wait_seconds\": 0.25, \"realized_echo_factor\": 1.5, "
      "\"data_digest\": \"0000000000000000\", "
      "\"curve\": [[20000, 0.75], [40000, 0.8]]}\n");
  r.data_digest = 0x0123456789abcdefull;
  EXPECT_NE(ResultToJson(r).find("\"data_digest\": \"0123456789abcdef\""), std::string::npos);
  r.data_digest = 0;
  r.fresh_examples_to_target = 40000;
  r.steps_to_target = 313;
  r.seconds_to_target = 2.5;
  std::string json = ResultToJson(r);
  EXPECT_NE(json.find("\"fresh_examples_to_target\": 40000, \"steps_to_target\": 313, "
                      "\"seconds_to_target\": 2.5,"),
            std::string::npos)
      << json;
  r.insert = EchoInsert::kAdaptive;
  r.echo = 1;
  r.max_echo = 4;
  r.realized_echo_factor = 3.25;
  json = ResultToJson(r);
  EXPECT_NE(json.find("{\"echo\": 1, \"insert\": \"adaptive\", \"max_echo\": 4, "),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"realized_echo_factor\": 3.25, "), std::string::npos) << json;
  EXPECT_EQ(json.find("\"decisions\""), std::string::npos) << json;
  r.insert = EchoInsert::kAuto;
  r.decisions = {"after 48 batches: batch echo, e = 2.00: \"quoted\"", "second"};
  json = ResultToJson(r);
  EXPECT_NE(json.find("\"curve\": [[20000, 0.75], [40000, 0.8]], \"decisions\": [\"after 48 "
                      "batches: batch echo, e = 2.00: \\\"quoted\\\"\", \"second\"]}\n"),
            std::string::npos)
      << json;
}

// --insert=auto: the planner's decisions, each with its reason, in the
// result and in the JSON ("decisions": [...]); none for a fixed placement.
TEST(TrainerTest, AutoPlacementReportsItsDecisionsInTheJson) {
  absl::StatusOr<TrainResult> r = Train(CappedRun(EchoInsert::kAuto, 3.0, 12000));
  ASSERT_TRUE(r.ok()) << r.status();
  // The first plan comes after 3 x 16 batches; 12,000 fresh rows are 93.
  ASSERT_FALSE(r->decisions.empty());
  absl::StatusOr<dataecho::internal::JsonValue> json =
      dataecho::internal::ParseJson(ResultToJson(*r));
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(json->String("insert"), "auto");
  const dataecho::internal::JsonValue* decisions = json->Find("decisions");
  ASSERT_NE(decisions, nullptr);
  ASSERT_EQ(decisions->type, dataecho::internal::JsonValue::Type::kArray);
  ASSERT_EQ(decisions->items.size(), r->decisions.size());
  for (size_t i = 0; i < r->decisions.size(); ++i) {
    EXPECT_EQ(decisions->items[i].text, r->decisions[i]);
    EXPECT_NE(r->decisions[i].find("after "), std::string::npos) << r->decisions[i];
    EXPECT_NE(r->decisions[i].find(" echo, e = "), std::string::npos) << r->decisions[i];
  }

  TrainResult fixed = *r;
  fixed.insert = EchoInsert::kBatch;
  absl::StatusOr<dataecho::internal::JsonValue> fixed_json =
      dataecho::internal::ParseJson(ResultToJson(fixed));
  ASSERT_TRUE(fixed_json.ok()) << fixed_json.status();
  EXPECT_EQ(fixed_json->Find("decisions"), nullptr);
}

// The suggested `--echo=2` without a slow upstream: the loop hardly waits for
// data, and the trainer says that echoing cannot help.
TEST(TrainerTest, SaysWhenTheUpstreamIsNotTheBottleneck) {
  TrainResult r;
  r.seconds_total = 10;
  r.data_wait_seconds = 0.2;  // 2 %
  r.realized_echo_factor = 2;
  const std::string note = UpstreamNote(r);
  EXPECT_NE(note.find("upstream is not the bottleneck here: echoing cannot help"),
            std::string::npos)
      << note;
  EXPECT_NE(note.find("2.0 %"), std::string::npos) << note;
  EXPECT_NE(note.find("2.00 rows per fresh example only repeat data"), std::string::npos) << note;
  r.data_wait_seconds = 0.6;  // 6 %: the upstream may be the bottleneck
  EXPECT_EQ(UpstreamNote(r), "");
  r.seconds_total = 0;
  EXPECT_EQ(UpstreamNote(r), "");
}

// The data pipeline runs epoch after epoch: batches carry the epoch, and the
// source's row counts every epoch.
TEST(TrainerTest, TrainingDataRunsNumberedEpochs) {
  TrainOptions o = SmallRun();
  o.train_limit = 200;
  o.shuffle_buffer = 16;
  absl::StatusOr<std::unique_ptr<TrainData>> data = MakeTrainData(o, 0);
  ASSERT_TRUE(data.ok()) << data.status();
  uint32_t epoch = 0;
  for (int i = 0; i < 8; ++i) {  // 1,024 rows: five epochs of 200
    absl::StatusOr<std::optional<dataecho::Batch>> b = (*data)->Next();
    ASSERT_TRUE(b.ok() && b->has_value()) << b.status();
    EXPECT_GE((*b)->epoch, epoch);
    epoch = (*b)->epoch;
  }
  EXPECT_GE(epoch, 3u);
  const std::vector<dataecho::StageStats> stats = (*data)->Stats();
  ASSERT_FALSE(stats.empty());
  EXPECT_EQ(stats[0].name, "idx_source");  // the IDX files, read by reference
  EXPECT_GE(stats[0].elements, 1000);
}

TEST(TrainerTest, RejectsBadOptions) {
  TrainOptions o = SmallRun();
  o.echo = 0.5;
  EXPECT_EQ(Train(o).status().code(), absl::StatusCode::kInvalidArgument);
  o = SmallRun();
  o.upstream_ratio = 2;  // needs shards
  EXPECT_EQ(Train(o).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseEchoInsert("middle").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*ParseEchoInsert("batch"), EchoInsert::kBatch);
  EXPECT_EQ(*ParseEchoInsert("adaptive"), EchoInsert::kAdaptive);
  EXPECT_EQ(EchoInsertName(EchoInsert::kAdaptive), "adaptive");
  o = SmallRun();
  o.insert = EchoInsert::kAdaptive;
  o.max_echo = 0.5;
  EXPECT_EQ(Train(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.max_echo = 2;
  o.echo = 2;  // adaptive takes its cap from max_echo
  EXPECT_EQ(Train(o).status().code(), absl::StatusCode::kInvalidArgument);
  o = SmallRun();
  o.idx_dir = "/nonexistent";
  EXPECT_EQ(Train(o).status().code(), absl::StatusCode::kNotFound);
}

// Numbers that parse but mean nothing are refused before anything is read.
TEST(TrainerTest, RejectsMeaninglessNumbers) {
  const auto inf = std::numeric_limits<float>::infinity();
  const auto nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<std::pair<std::string, std::function<void(TrainOptions&)>>> cases = {
      {"learning_rate", [&](TrainOptions& o) { o.learning_rate = inf; }},
      {"learning_rate", [&](TrainOptions& o) { o.learning_rate = nan; }},
      {"learning_rate", [](TrainOptions& o) { o.learning_rate = 0; }},
      {"target_accuracy", [](TrainOptions& o) { o.target_accuracy = 5; }},
      {"target_accuracy", [](TrainOptions& o) { o.target_accuracy = 0; }},
      {"target_accuracy", [](TrainOptions& o) { o.target_accuracy = std::nan(""); }},
      {"step_seconds", [](TrainOptions& o) { o.step_seconds = 1e305; }},
      {"echo", [](TrainOptions& o) { o.echo = 1e300; }},
      {"weight_decay", [&](TrainOptions& o) { o.weight_decay = inf; }},
      {"upstream_ratio", [](TrainOptions& o) { o.upstream_ratio = 1e300; }},
  };
  for (const auto& [name, change] : cases) {
    TrainOptions o = SmallRun();
    o.idx_dir = "/nonexistent";  // never reached
    change(o);
    absl::Status s = Train(o).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << name << ": " << s;
    EXPECT_NE(s.message().find(name), absl::string_view::npos) << s;
  }
}

// Shards written from the IDX subset, read back over loopback HTTP through
// the throttled store: the run trains on them and counts fresh examples the same.
TEST(TrainerTest, TrainsFromShardsOverHttp) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("trainer_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  TrainOptions o = SmallRun();
  o.test_limit = 3000;  // the shards hold the first 3,000 test images
  absl::StatusOr<TestSet> images = LoadTestSet(o);
  ASSERT_TRUE(images.ok()) << images.status();
  // Undo the standardization: the records hold raw pixels.
  for (int shard = 0; shard < 2; ++shard) {
    auto writer =
        dataecho::TFRecordWriter::Create((dir / fmt::format("train-{}.tfrecord", shard)).string());
    ASSERT_TRUE(writer.ok()) << writer.status();
    for (int64_t i = shard; i < images->size; i += 2) {
      dataecho::MutableBuffer pixels(784);
      for (int p = 0; p < 784; ++p) {
        const float raw = (images->images[i * 784 + p] * kPixelStddev + kPixelMean) * 255.0f;
        pixels.data()[p] = static_cast<uint8_t>(std::lround(raw));
      }
      auto tensor =
          dataecho::Tensor::Make(dataecho::DType::kUInt8, {28, 28, 1}, std::move(pixels).Freeze());
      ASSERT_TRUE(tensor.ok());
      auto payload = dataecho::EncodeImageRecord(*tensor, images->labels[i]);
      ASSERT_TRUE(payload.ok()) << payload.status();
      ASSERT_TRUE((*writer)->Write(*payload).ok());
    }
    ASSERT_TRUE((*writer)->Close().ok());
  }
  o.train_shards = (dir / "train-*.tfrecord").string();
  o.test_limit = 1000;
  o.fresh_budget = 8000;
  o.eval_every = 4000;
  o.echo = 2.0;
  o.upstream_ratio = 2.0;
  absl::StatusOr<TrainResult> r = Train(o);
  std::filesystem::remove_all(dir);
  if (r.status().code() == absl::StatusCode::kUnimplemented) {
    GTEST_SKIP() << "this build has no HTTP object store: " << r.status();
  }
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GE(r->fresh_examples_total, 8000);
  EXPECT_NEAR(static_cast<double>(r->examples_total) / r->fresh_examples_total, 2.0, 0.1);
  EXPECT_GE(r->final_test_accuracy, 0.5);  // trained on the test images themselves
}

}  // namespace
}  // namespace trainer
