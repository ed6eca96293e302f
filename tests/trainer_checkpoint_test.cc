// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Tests of the trainers' state layout (train_state.h): the round trip of the
// model, the optimizer and the loop; a payload of another layout or of other
// options is an error. (The files themselves: checkpoint_dir_test.cc; the
// trainers' directories end to end: tools/trainer_kill_test.cc.)
#include "trainer/train_state.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "trainer/data.h"

namespace trainer {
namespace {

TEST(TrainStateTest, ModelOptimizerAndLoopRoundTrip) {
  Mlp model({6, 5, 3}, 1);
  Sgd sgd(model, {.learning_rate = 0.1f, .momentum = 0.9f});
  const float x[12] = {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6};
  const int64_t labels[2] = {0, 2};
  model.ComputeGradients(x, labels, 2);
  sgd.Step(model);
  TrainResult result;
  result.steps_total = 7;
  result.fresh_examples_total = 700;
  result.examples_total = 1400;
  result.data_digest = 0x1234567890abcdefull;
  result.fresh_examples_to_target = 600;
  result.curve = {{300, 0.5}, {600, 0.75}};
  LoopState loop{.next_eval = 900, .accuracy = 0.75, .train_seconds = 2.5};
  TrainOptions options;
  StateWriter w;
  w.String(OptionsFingerprint(options));
  SaveLoop(result, loop, w);
  SaveModel(model, sgd, w);

  Mlp other({6, 5, 3}, 2);
  Sgd other_sgd(other, {.learning_rate = 0.1f, .momentum = 0.9f});
  TrainResult r2;
  LoopState l2;
  StateReader r(w.bytes(), "test");
  ASSERT_TRUE(CheckFingerprint(r, options, "test").ok());
  RestoreLoop(r, r2, l2);
  RestoreModel(r, other, other_sgd);
  ASSERT_TRUE(r.Finish().ok()) << r.status();
  EXPECT_EQ(r2.steps_total, 7);
  EXPECT_EQ(r2.data_digest, result.data_digest);
  EXPECT_EQ(r2.fresh_examples_to_target, 600);
  EXPECT_FALSE(r2.steps_to_target.has_value());
  ASSERT_EQ(r2.curve.size(), 2u);
  EXPECT_EQ(r2.curve[1].test_accuracy, 0.75);
  EXPECT_EQ(l2.next_eval, 900);
  for (size_t l = 0; l < 2; ++l) {
    EXPECT_EQ(other.layers()[l].weights, model.layers()[l].weights);
    EXPECT_EQ(other.layers()[l].bias, model.layers()[l].bias);
    EXPECT_EQ(other_sgd.velocity_weights()[l], sgd.velocity_weights()[l]);
    EXPECT_EQ(other_sgd.velocity_bias()[l], sgd.velocity_bias()[l]);
  }
  // The same step from both: the momentum came along.
  model.ComputeGradients(x, labels, 2);
  sgd.Step(model);
  other.ComputeGradients(x, labels, 2);
  other_sgd.Step(other);
  EXPECT_EQ(other.layers()[0].weights, model.layers()[0].weights);

  // Another model shape, a cut payload, other options: errors, no crash.
  Mlp wider({6, 7, 3}, 1);
  Sgd wider_sgd(wider, {});
  StateReader shape(w.bytes(), "ck");
  (void)shape.String();
  RestoreLoop(shape, r2, l2);
  RestoreModel(shape, wider, wider_sgd);
  EXPECT_EQ(shape.status().code(), absl::StatusCode::kDataLoss);
  for (size_t cut = 0; cut < w.bytes().size(); cut += 97) {
    StateReader part(std::string_view(w.bytes()).substr(0, cut), "ck");
    (void)part.String();
    RestoreLoop(part, r2, l2);
    RestoreModel(part, other, other_sgd);
    EXPECT_FALSE(part.Finish().ok()) << cut;
  }
  TrainOptions changed = options;
  changed.echo = 2;
  StateReader fp(w.bytes(), "ck-file");
  absl::Status s = CheckFingerprint(fp, changed, "ck-file");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("echo=1 there, echo=2 here"), std::string::npos) << s;
}

}  // namespace
}  // namespace trainer
