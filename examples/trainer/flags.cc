// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "trainer/flags.h"

#include <cstdint>
#include <string>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "dataecho/echo_planner.h"

ABSL_FLAG(std::string, idx_dir, "/usr/share/datasets/fashion-mnist",
          "Directory of the Fashion-MNIST IDX files (the test set is always read from here)");
ABSL_FLAG(std::string, train_shards, "",
          "TFRecord shards for training (glob); empty: the IDX training files (mpi_trainer "
          "requires shards)");
ABSL_FLAG(int64_t, test_limit, 0, "Evaluate on the first N test examples (0 = all 10,000)");
ABSL_FLAG(double, echo, 1.0, "Echo factor e >= 1 (fractional: per-item draw)");
ABSL_FLAG(
    std::string, insert, "before_augment",
    "Echo placement: before_augment, after_augment or batch; or adaptive (echo before augmentation "
    "only while the upstream has no fresh example ready, at most --max_echo times per example); "
    "or auto (placement and factor, at most --max_echo, chosen from the measured costs)");
ABSL_FLAG(double, max_echo, 4.0,
          "With --insert=adaptive: the most emissions of one example (m >= 1); with --insert=auto: "
          "the largest factor it may choose");
ABSL_FLAG(std::string, prefer, "progress",
          "With --insert=auto: progress (the most training progress per second, a step weighed "
          "by what its copies are worth: the soonest target accuracy), quality (the most "
          "example-level placement within 10% of the best step rate) or speed (the best step "
          "rate)");
ABSL_FLAG(bool, report_loss, false,
          "With --insert=auto or adaptive: report every batch's per-row loss to the echo planner "
          "(Pipeline::ReportLoss), which learns from it what a copy is worth on this model");
ABSL_FLAG(int, shuffle_buffer, 2048,
          "Shuffle buffer (elements) after example echoing (on each rank with mpi_trainer)");
ABSL_FLAG(int64_t, fresh_budget, 600000,
          "Stop after this many fresh examples (with mpi_trainer: all ranks together)");
ABSL_FLAG(int64_t, eval_every, 20000,
          "Evaluate test accuracy every N fresh examples (with mpi_trainer: job-wide)");
ABSL_FLAG(double, target_accuracy, 0.85, "Record the fresh examples needed to reach this");
ABSL_FLAG(double, learning_rate, 0.02, "SGD learning rate");
ABSL_FLAG(double, momentum, 0.9, "SGD momentum");
ABSL_FLAG(std::string, lr_schedule, "constant", "constant, or cosine (to 0 at --fresh_budget)");
ABSL_FLAG(uint64_t, seed, 1,
          "Seed of the model, of every random stage (and of mpi_trainer's epoch plan)");
ABSL_FLAG(std::string, checkpoint_dir, "",
          "Directory of the checkpoints (model, optimizer, loop and pipeline state; the last two "
          "kept; with mpi_trainer rank 0 writes them)");
ABSL_FLAG(int64_t, checkpoint_every, 0, "Write a checkpoint every N steps (0 = never)");
ABSL_FLAG(bool, resume, false,
          "Continue from the newest complete checkpoint in --checkpoint_dir (start fresh if it "
          "holds none); the other flags must be those of the run that wrote it (mpi_trainer "
          "resumes on any number of ranks)");

namespace trainer {

absl::StatusOr<TrainOptions> TrainOptionsFromFlags() {
  TrainOptions o;
  o.idx_dir = absl::GetFlag(FLAGS_idx_dir);
  o.train_shards = absl::GetFlag(FLAGS_train_shards);
  o.test_limit = absl::GetFlag(FLAGS_test_limit);
  o.echo = absl::GetFlag(FLAGS_echo);
  absl::StatusOr<EchoInsert> insert = ParseEchoInsert(absl::GetFlag(FLAGS_insert));
  if (!insert.ok()) return insert.status();
  o.insert = *insert;
  o.max_echo = absl::GetFlag(FLAGS_max_echo);
  if (absl::Status s = dataecho::ParseEchoPrefer(absl::GetFlag(FLAGS_prefer), &o.prefer); !s.ok())
    return s;
  o.report_loss = absl::GetFlag(FLAGS_report_loss);
  o.shuffle_buffer = absl::GetFlag(FLAGS_shuffle_buffer);
  o.fresh_budget = absl::GetFlag(FLAGS_fresh_budget);
  o.eval_every = absl::GetFlag(FLAGS_eval_every);
  o.target_accuracy = absl::GetFlag(FLAGS_target_accuracy);
  o.learning_rate = static_cast<float>(absl::GetFlag(FLAGS_learning_rate));
  o.momentum = static_cast<float>(absl::GetFlag(FLAGS_momentum));
  o.lr_schedule = absl::GetFlag(FLAGS_lr_schedule);
  o.seed = absl::GetFlag(FLAGS_seed);
  o.checkpoint_dir = absl::GetFlag(FLAGS_checkpoint_dir);
  o.checkpoint_every = absl::GetFlag(FLAGS_checkpoint_every);
  o.resume = absl::GetFlag(FLAGS_resume);
  return o;
}

void ListFlagsInHelp(std::string_view program_files) {
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [program = std::string(program_files)](absl::string_view file) {
    return absl::StrContains(file, program) || absl::StrContains(file, "/trainer/flags.cc");
  };
  usage.contains_helpshort_flags = usage.contains_help_flags;
  usage.contains_helppackage_flags = usage.contains_help_flags;
  absl::SetFlagsUsageConfig(std::move(usage));
}

}  // namespace trainer
