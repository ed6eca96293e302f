// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// fashion_mnist_trainer: trains a small MLP on Fashion-MNIST through a dataecho
// pipeline, with data echoing, and reports how many fresh examples it needed
// to reach a test accuracy (the data-echoing paper's measure).
//
//   fashion_mnist_trainer --echo=2 --insert=before_augment --fresh_budget=600000 \
//       --json=/tmp/e2.json
//   # upstream 4x slower than a step: shards made by `dataecho convert`, read
//   # over loopback HTTP through a throttled store
//   fashion_mnist_trainer --train_shards='/tmp/fmnist/train-*.tfrecord' \
//       --upstream_ratio=4 --echo=2 --stop_at_target
//   # adaptive: repeat only while the upstream has nothing ready, at most 4x
//   fashion_mnist_trainer --train_shards='/tmp/fmnist/train-*.tfrecord' \
//       --upstream_ratio=4 --insert=adaptive --max_echo=4 --stop_at_target
//   # survives being killed: checkpoints every 50 steps; run the same line
//   # again after a crash and it continues where the last checkpoint left off
//   fashion_mnist_trainer --checkpoint_dir=/tmp/ckpt --checkpoint_every=50 --resume
//
// See docs/results.md for the measurements made with it.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "dataecho/text.h"
#include "dataecho/trace.h"
#include "fmt/format.h"
#include "trainer/flags.h"
#include "trainer/trainer.h"

ABSL_FLAG(int64_t, train_limit, 0, "Use only the first N training examples (0 = all)");
ABSL_FLAG(double, upstream_ratio, 0.0,
          "Upstream R times slower than a training step (shards over loopback HTTP through a "
          "throttled store); 0 = local files at full speed");
ABSL_FLAG(bool, upstream_http, true,
          "With --upstream_ratio: serve the shards over loopback HTTP (else the throttled store "
          "reads the local files)");
ABSL_FLAG(double, step_ms, 0,
          "With --upstream_ratio: the step time R refers to, in ms (0 = measure it at start)");
ABSL_FLAG(double, augment_cpu_ms, 0,
          "A CPU-heavy augmentation: each augmented example also burns this much CPU (ms)");
ABSL_FLAG(int, batch_size, 128, "Rows per training batch");
ABSL_FLAG(bool, stop_at_target, false, "Stop once the target accuracy is reached");
ABSL_FLAG(std::string, json, "", "Write the result as JSON to this file");
ABSL_FLAG(std::string, trace, "",
          "Write a timeline of the run (Chrome trace-event JSON: ui.perfetto.dev) to this file");
ABSL_FLAG(std::string, dump_fresh_indices, "",
          "Write the source index of each fresh row trained to this file, one a line (a resumed "
          "run cuts it back to its checkpoint)");
ABSL_FLAG(bool, no_progress, false,
          "No progress bar (none is drawn when stderr is not a terminal)");

namespace {

// User-chosen text (a path, a flag's value) goes to the terminal through
// dataecho::TerminalSafe: it must not drive the terminal.
int UsageError(std::string_view message) {
  std::fprintf(stderr, "fashion_mnist_trainer: %s\nTry --help for the flags.\n",
               dataecho::TerminalSafe(message).c_str());
  return 2;
}

// The --json file, created before training so that a path that cannot be
// written fails at once; removed again if training fails and it was new.
class JsonOutput {
 public:
  explicit JsonOutput(std::string path) : path_(std::move(path)) {}
  ~JsonOutput() {
    if (created_ && !written_) std::remove(path_.c_str());
  }
  bool Open() {
    if (path_.empty()) return true;
    created_ = access(path_.c_str(), F_OK) != 0;
    std::ofstream probe(path_, std::ios::app);  // creates it; keeps what it holds
    if (!probe) created_ = false;
    return probe.good();
  }
  bool Write(const std::string& text) {
    if (path_.empty()) return true;
    std::ofstream out(path_, std::ios::trunc);
    out << text;
    out.close();
    written_ = true;
    return out.good();
  }

 private:
  std::string path_;
  bool created_ = false, written_ = false;
};

// One line, redrawn in place on stderr.
void DrawProgress(int64_t fresh, int64_t budget, double accuracy) {
  static int last_permille = -1;
  const int permille = static_cast<int>(1000 * std::min<int64_t>(fresh, budget) / budget);
  if (permille == last_permille) return;
  last_permille = permille;
  constexpr int kWidth = 30;
  const int filled = permille * kWidth / 1000;
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(kWidth, '.');
  const std::string acc = accuracy < 0 ? "-" : fmt::format("{:.4f}", accuracy);
  std::fprintf(stderr, "\r[%s] %5.1f%%  fresh %lld/%lld  test acc %s ", bar.c_str(),
               permille / 10.0, static_cast<long long>(fresh), static_cast<long long>(budget),
               acc.c_str());
  std::fflush(stderr);
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("Trains an MLP on Fashion-MNIST through a data-echoing pipeline.");
  trainer::ListFlagsInHelp("fashion_mnist_trainer");
  const std::vector<char*> positional = absl::ParseCommandLine(argc, argv);

  absl::StatusOr<trainer::TrainOptions> flags = trainer::TrainOptionsFromFlags();
  if (!flags.ok()) return UsageError(std::string(flags.status().message()));
  trainer::TrainOptions& o = *flags;
  o.train_limit = absl::GetFlag(FLAGS_train_limit);
  o.upstream_ratio = absl::GetFlag(FLAGS_upstream_ratio);
  o.upstream_over_http = absl::GetFlag(FLAGS_upstream_http);
  o.step_seconds = absl::GetFlag(FLAGS_step_ms) * 1e-3;
  o.augment_cpu_ms = absl::GetFlag(FLAGS_augment_cpu_ms);
  o.batch_size = absl::GetFlag(FLAGS_batch_size);
  o.stop_at_target = absl::GetFlag(FLAGS_stop_at_target);
  o.dump_fresh_indices = absl::GetFlag(FLAGS_dump_fresh_indices);
  if (positional.size() > 1)
    return UsageError(fmt::format("unexpected argument '{}'", positional[1]));
  if (absl::Status s = trainer::ValidateOptions(o); !s.ok())
    return UsageError(std::string(s.message()));
  const std::string json_path = absl::GetFlag(FLAGS_json);
  JsonOutput json(json_path);
  if (!json.Open()) {
    return UsageError(
        fmt::format("--json={}: cannot write it: {}", json_path, std::strerror(errno)));
  }

  const std::string trace_path = absl::GetFlag(FLAGS_trace);
  if (!trace_path.empty()) {
    if (absl::Status s = dataecho::StartTrace(trace_path); !s.ok()) {
      return UsageError(fmt::format("--trace: {}", std::string(s.message())));
    }
  }
  const bool progress = !absl::GetFlag(FLAGS_no_progress) && isatty(STDERR_FILENO);
  absl::StatusOr<trainer::TrainResult> result =
      trainer::Train(o, progress ? trainer::ProgressFn(DrawProgress) : trainer::ProgressFn());
  if (!trace_path.empty()) {
    if (absl::Status s = dataecho::StopTrace(); !s.ok()) {
      std::fprintf(stderr, "%s\n", dataecho::TerminalSafe(s.ToString()).c_str());
      return 1;
    }
  }
  if (progress) std::fprintf(stderr, "\n");
  if (!result.ok()) {
    std::fprintf(stderr, "training failed: %s\n",
                 dataecho::TerminalSafe(result.status().ToString()).c_str());
    return 1;
  }
  const trainer::TrainResult& r = *result;
  if (r.resumed_from_step) {
    std::fprintf(stderr, "resumed from %s (step %lld)\n",
                 dataecho::TerminalSafe(r.resumed_from).c_str(),
                 static_cast<long long>(*r.resumed_from_step));
  }
  const std::string echo =
      r.max_echo ? fmt::format("max_echo {:g}", *r.max_echo) : fmt::format("echo {:g}", r.echo);
  std::printf(
      "%s (%s): final test accuracy %.4f after %lld fresh examples, %lld steps, %.1f s "
      "(%.0f examples/s; evaluation %.1f s extra)\n",
      echo.c_str(), std::string(trainer::EchoInsertName(r.insert)).c_str(), r.final_test_accuracy,
      static_cast<long long>(r.fresh_examples_total), static_cast<long long>(r.steps_total),
      r.seconds_total, r.seconds_total > 0 ? r.examples_total / r.seconds_total : 0.0,
      r.eval_seconds);
  std::printf(
      "realized echo factor %.3f (rows / fresh rows); waited for data %.1f s of %.1f s (%.0f%%)\n",
      r.realized_echo_factor, r.data_wait_seconds, r.seconds_total,
      r.seconds_total > 0 ? 100 * r.data_wait_seconds / r.seconds_total : 0.0);
  if (const std::string note = trainer::UpstreamNote(r); !note.empty()) {
    std::printf("%s\n", note.c_str());
  }
  if (r.upstream_examples_per_second > 0) {
    std::printf("upstream capped at %.0f fresh examples/s (%.2f ms per step measured, ratio %g)\n",
                r.upstream_examples_per_second, r.step_seconds * 1e3, o.upstream_ratio);
  }
  for (const std::string& d : r.decisions)
    std::printf("auto: %s\n", dataecho::TerminalSafe(d).c_str());
  if (r.fresh_examples_to_target) {
    std::printf("reached %.3f after %lld fresh examples, %lld steps, %.1f s\n", o.target_accuracy,
                static_cast<long long>(*r.fresh_examples_to_target),
                static_cast<long long>(*r.steps_to_target), *r.seconds_to_target);
  } else {
    std::printf("did not reach %.3f\n", o.target_accuracy);
  }
  if (!json.Write(trainer::ResultToJson(r))) {
    std::fprintf(stderr, "cannot write %s\n", dataecho::TerminalSafe(json_path).c_str());
    return 1;
  }
  return 0;
}
