// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "config.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/flag.h"
#include "common/command_line.h"
#include "dataecho/batch.h"
#include "dataecho/example.h"
#include "dataecho/memory.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

namespace {
// The flags' defaults are those of BenchConfig.
const dataecho::bench::BenchConfig& Defaults() {
  static const auto* defaults = new dataecho::bench::BenchConfig;
  return *defaults;
}
}  // namespace

// A flag whose default is BenchConfig's field of the same name.
#define BENCH_FLAG(type, name, help) ABSL_FLAG(type, name, Defaults().name, help)

BENCH_FLAG(std::string, source,
           "records to read: a path, glob, file://, http(s)://, gs://, s3://\n"
           "(default: Fashion-MNIST converted to TFRecord shards, served\n"
           "over loopback HTTP with added latency)");
BENCH_FLAG(std::string, format,
           "tfrecord (image records, see docs/formats.md) or idx\n"
           "(--source=IMAGES_URI,LABELS_URI)");
BENCH_FLAG(std::string, dataset,
           "fashion_mnist, or imagenet: JPEGs of 300-500 px (made from\n"
           "python3-skimage's photographs) decoded upstream, then\n"
           "RandomResizedCrop 224 + flip + normalize to FP16");
BENCH_FLAG(std::string, data_dir, "cache of the default dataset's shards [~/.cache/dataecho]");
BENCH_FLAG(double, latency_ms, "default source: added latency per HTTP request");
ABSL_FLAG(std::string, echo, fmt::format("{}", fmt::join(Defaults().echo, ",")),
          "echo factors to run (e=1, the baseline, always runs)");
ABSL_FLAG(std::string, insert, std::string(dataecho::bench::InsertName(Defaults().insert)),
          "before_augment | after_augment | batch | adaptive | auto\n"
          "(auto: placement and factor chosen from measured costs)");
ABSL_FLAG(std::string, prefer, "progress",
          "--insert=auto: progress (the most training progress per\n"
          "second, copies weighed by what they are worth), speed or quality\n"
          "(the most example-level placement within 10% of the best step rate)");
ABSL_FLAG(bool, grid, false,
          "run every fixed placement x --echo factor and auto\n"
          "(--max_echo) in one run, rotating; report auto / best\n"
          "fixed steps/s");
BENCH_FLAG(double, max_echo,
           "adaptive: at most M emissions per item (one run per\n"
           "--echo value too, e=1 runs as the baseline); auto: the\n"
           "largest factor it may choose");
BENCH_FLAG(int64_t, batch_size, "rows per batch");
BENCH_FLAG(int64_t, shuffle_buffer, "shuffle buffer after example echoing");
BENCH_FLAG(int, pipeline_threads,
           "--dataset=imagenet: threads of the decode Map and of the augmentation Map each (0: "
           "decode on the CPUs left to the pipeline, augmentation inline)");
BENCH_FLAG(int, cpus,
           "run on the first N of the CPUs it may use (0: all); with\n"
           "one, the trainer's step shares it with the pipeline");
ABSL_FLAG(int64_t, seed, static_cast<int64_t>(Defaults().seed), "seed of every random stage");
BENCH_FLAG(double, step_ms, "time of one training step (busy-wait)");
ABSL_FLAG(bool, no_pin, !Defaults().pin_trainer,
          "do not keep a CPU for the trainer (by default, with two\n"
          "or more CPUs, the busy-wait step runs on a CPU of its own\n"
          "and the pipeline's threads on the others)");
BENCH_FLAG(double, upstream_ratio, "upstream time per batch / step time; 0 = unthrottled");
BENCH_FLAG(double, target_ratio,
           "with --upstream_ratio=0: choose --step_ms so that the\n"
           "measured upstream is R steps per batch (0 = off)");
BENCH_FLAG(int64_t, steps, "measured steps per run");
BENCH_FLAG(int64_t, repeats,
           "runs per factor: every repeat runs the baseline and\n"
           "each factor once, the order rotating per repeat; the\n"
           "table shows medians and their spread");
BENCH_FLAG(double, baseline_tolerance,
           "warn when the baseline's steps/s is further than this\n"
           "(relative) from its nominal 1 / (R x step)");
BENCH_FLAG(double, max_efficiency, "warn when an efficiency is above this");
BENCH_FLAG(double, max_spread,
           "warn when a factor's steps/s over the repeats spread\n"
           "by more than this: (max - min) / median");
BENCH_FLAG(double, max_trainer_lost,
           "warn when the trainer loop was neither waiting nor\n"
           "stepping (other load had its CPU) for more than this\n"
           "part of a run");
BENCH_FLAG(bool, strict, "exit with status 3 when there is a warning");
BENCH_FLAG(std::string, json, "write the results as JSON");
BENCH_FLAG(std::string, plot, "write speedup vs echo factor as SVG");
BENCH_FLAG(std::string, trace,
           "write a timeline of the whole run (every factor) as Chrome\n"
           "trace-event JSON: open it in ui.perfetto.dev (docs/stats.md)");
BENCH_FLAG(bool, stats, "print every stage's statistics after each run");
ABSL_FLAG(bool, no_progress, !Defaults().progress,
          "no progress bar (also off when stderr is not a terminal)");

namespace dataecho::bench {
namespace {

absl::Status Bad(std::string_view flag, std::string_view value, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format("--{}={}: {}", flag, value, why));
}

absl::StatusOr<double> ParseDouble(std::string_view flag, const std::string& v) {
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(d))
    return Bad(flag, v, "not a finite number");
  return d;
}

// The flags by section of the usage text.
constexpr tools::FlagSpec kSourceFlags[] = {{"source", "URI"},
                                            {"format", "FORMAT"},
                                            {"dataset", "NAME"},
                                            {"data_dir", "DIR"},
                                            {"latency_ms", "MS"}};
constexpr tools::FlagSpec kPipelineFlags[] = {{"echo", "E1,E2,..."},
                                              {"insert", "WHERE"},
                                              {"max_echo", "M"},
                                              {"prefer", "WHAT"},
                                              {"grid", ""},
                                              {"batch_size", "N"},
                                              {"shuffle_buffer", "N"},
                                              {"seed", "N"},
                                              {"pipeline_threads", "N"},
                                              {"cpus", "N"}};
constexpr tools::FlagSpec kTrainerFlags[] = {{"step_ms", "T"},
                                             {"no_pin", ""},
                                             {"upstream_ratio", "R"},
                                             {"target_ratio", "R"},
                                             {"steps", "N"}};
constexpr tools::FlagSpec kRegimeFlags[] = {{"repeats", "N"},          {"baseline_tolerance", "F"},
                                            {"max_efficiency", "F"},   {"max_spread", "F"},
                                            {"max_trainer_lost", "F"}, {"strict", ""}};
constexpr tools::FlagSpec kOutputFlags[] = {
    {"json", "PATH"}, {"plot", "PATH"}, {"trace", "PATH"}, {"stats", ""}, {"no_progress", ""}};

struct Section {
  std::string_view title;
  absl::Span<const tools::FlagSpec> flags;
};
constexpr Section kSections[] = {{"Source", kSourceFlags},
                                 {"Pipeline", kPipelineFlags},
                                 {"Emulated trainer", kTrainerFlags},
                                 {"Repeats and regime check", kRegimeFlags},
                                 {"Output", kOutputFlags}};

// INVALID_ARGUMENT "--flag=value: must be >= min" unless value >= min.
template <typename T>
absl::Status AtLeast(std::string_view flag, T value, T min) {
  if (value >= min) return absl::OkStatus();
  return Bad(flag, fmt::format("{}", value), fmt::format("must be >= {}", min));
}

// What no run can do: durations beyond a minute per step or request, a
// baseline run (steps x max(1, R) steps' time) beyond a day, a batch or a
// shuffle buffer beyond what a batch can have or the memory cap (memory.h:
// the same checks the stages' factories make, so that they fail here, as a
// usage error, instead of after the source was prepared).
absl::Status CheckMagnitudes(const BenchConfig& c) {
  constexpr double kMaxMs = 60'000;  // a minute
  if (c.step_ms > kMaxMs)
    return Bad("step_ms", fmt::format("{}", c.step_ms), "must be at most 60000 (a minute)");
  if (c.latency_ms > kMaxMs)
    return Bad("latency_ms", fmt::format("{}", c.latency_ms), "must be at most 60000 (a minute)");
  const double baseline_ms =
      static_cast<double>(c.steps) * std::max(1.0, c.upstream_ratio) * c.step_ms;
  if (baseline_ms > 24 * 3600 * 1000.0) {
    return absl::InvalidArgumentError(fmt::format(
        "--steps={} x --upstream_ratio={} x --step_ms={}: the e=1 run alone would take {:.3g} "
        "hours (at most 24)",
        c.steps, c.upstream_ratio, c.step_ms, baseline_ms / 3.6e6));
  }
  if (c.max_echo > 1e6) return Bad("max_echo", fmt::format("{}", c.max_echo), "must be <= 1e6");
  for (double e : c.echo) {
    if (e > 1e6) return Bad("echo", fmt::format("{}", e), "echo factors must be <= 1e6");
  }
  if (c.batch_size > BatchOptions::kMaxBatchSize) {
    return Bad("batch_size", fmt::format("{}", c.batch_size),
               fmt::format("must be at most {}", BatchOptions::kMaxBatchSize));
  }
  // The default dataset's rows: 28 x 28 uint8 images, batched as float32.
  const int64_t pixels = c.source.empty() ? 28 * 28 : 0;
  for (const absl::Status& s :
       {CheckMemoryEstimate("batch", "--batch_size", c.batch_size,
                            BatchOptions::kIndexBytesPerRow + 4 * pixels, 0, ""),
        CheckMemoryEstimate("shuffle", "--shuffle_buffer", c.shuffle_buffer,
                            static_cast<int64_t>(sizeof(Example)) + pixels, 0, "")}) {
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

std::string Usage() {
  std::string usage = R"(Usage: echo_bench [FLAG]...
Measures training steps per second with data echoing against the e=1 baseline
and the ideal speedup min(e, R), with a trainer emulated by a busy-wait step.

)";
  for (const Section& section : kSections) {
    usage += fmt::format("{}:\n", section.title);
    usage += tools::FlagsUsage(section.flags, /*help_column=*/22, /*show_defaults=*/true);
  }
  return usage + R"(  --help              this text

Exit status: 0 success; 1 a run failed (data, storage, output); 2 invalid
flags; 3 with --strict, the regime check warned (the results are still
printed and written).
)";
}

absl::StatusOr<BenchConfig> ParseArgs(int argc, char** argv) {
  const std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  std::vector<tools::FlagSpec> flags;
  for (const Section& section : kSections)
    flags.insert(flags.end(), section.flags.begin(), section.flags.end());
  absl::StatusOr<tools::CommandLine> cl = tools::ParseFlags(args, flags);
  if (!cl.ok()) return cl.status();
  if (cl->help) return absl::CancelledError("help");
  if (!cl->positional.empty()) {
    return absl::InvalidArgumentError(fmt::format(
        "unexpected argument '{}' (flags are --name=value; see --help)", cl->positional[0]));
  }
  BenchConfig c;
  c.source = absl::GetFlag(FLAGS_source);
  c.format = absl::GetFlag(FLAGS_format);
  if (c.format != "tfrecord" && c.format != "idx")
    return Bad("format", c.format, "must be tfrecord or idx");
  c.dataset = absl::GetFlag(FLAGS_dataset);
  if (c.dataset != "fashion_mnist" && c.dataset != "imagenet")
    return Bad("dataset", c.dataset, "must be fashion_mnist or imagenet");
  if (c.dataset == "imagenet" && c.format != "tfrecord")
    return Bad("format", c.format, "--dataset=imagenet reads tfrecord image records");
  c.data_dir = absl::GetFlag(FLAGS_data_dir);
  c.latency_ms = absl::GetFlag(FLAGS_latency_ms);
  const std::string echo = absl::GetFlag(FLAGS_echo);
  c.echo.clear();
  size_t start = 0;
  while (start <= echo.size()) {
    const size_t comma = echo.find(',', start);
    const std::string item =
        echo.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    absl::StatusOr<double> e = ParseDouble("echo", item);
    if (!e.ok()) return Bad("echo", echo, fmt::format("'{}' is not a number", item));
    if (*e < 1) return Bad("echo", echo, fmt::format("echo factor {} is below 1", *e));
    c.echo.push_back(*e);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const std::string insert = absl::GetFlag(FLAGS_insert);
  absl::StatusOr<Insert> placement = ParseEchoPlacement(insert);
  if (!placement.ok())
    return Bad("insert", insert, "must be before_augment, after_augment, batch, adaptive or auto");
  c.insert = *placement;
  const std::string prefer = absl::GetFlag(FLAGS_prefer);
  if (!ParseEchoPrefer(prefer, &c.prefer).ok())
    return Bad("prefer", prefer, "must be speed, quality or progress");
  c.grid = absl::GetFlag(FLAGS_grid);
  if (c.grid && cl->given.count("insert"))
    return Bad("insert", insert, "--grid runs every placement (leave --insert out)");
  c.max_echo = absl::GetFlag(FLAGS_max_echo);
  c.batch_size = absl::GetFlag(FLAGS_batch_size);
  c.shuffle_buffer = absl::GetFlag(FLAGS_shuffle_buffer);
  c.pipeline_threads = absl::GetFlag(FLAGS_pipeline_threads);
  if (c.pipeline_threads < 0 || c.pipeline_threads > 64) {
    return Bad("pipeline_threads", fmt::format("{}", c.pipeline_threads), "must be in [0, 64]");
  }
  c.cpus = absl::GetFlag(FLAGS_cpus);
  if (c.cpus < 0) return Bad("cpus", fmt::format("{}", c.cpus), "must be >= 0");
  const int64_t seed = absl::GetFlag(FLAGS_seed);
  c.seed = static_cast<uint64_t>(seed);
  c.step_ms = absl::GetFlag(FLAGS_step_ms);
  c.pin_trainer = !absl::GetFlag(FLAGS_no_pin);
  c.upstream_ratio = absl::GetFlag(FLAGS_upstream_ratio);
  c.target_ratio = absl::GetFlag(FLAGS_target_ratio);
  c.steps = absl::GetFlag(FLAGS_steps);
  const int64_t repeats = absl::GetFlag(FLAGS_repeats);
  if (repeats < 1 || repeats > 1000)
    return Bad("repeats", fmt::format("{}", repeats), "must be in [1, 1000]");
  c.repeats = static_cast<int>(repeats);
  c.baseline_tolerance = absl::GetFlag(FLAGS_baseline_tolerance);
  c.max_efficiency = absl::GetFlag(FLAGS_max_efficiency);
  c.max_spread = absl::GetFlag(FLAGS_max_spread);
  c.max_trainer_lost = absl::GetFlag(FLAGS_max_trainer_lost);
  c.strict = absl::GetFlag(FLAGS_strict);
  if (c.max_efficiency <= 0)
    return Bad("max_efficiency", fmt::format("{}", c.max_efficiency), "must be > 0");
  for (const absl::Status& s :
       {AtLeast("latency_ms", c.latency_ms, 0.0), AtLeast("max_echo", c.max_echo, 1.0),
        AtLeast<int64_t>("batch_size", c.batch_size, 1),
        AtLeast<int64_t>("shuffle_buffer", c.shuffle_buffer, 1), AtLeast<int64_t>("seed", seed, 0),
        AtLeast("upstream_ratio", c.upstream_ratio, 0.0),
        AtLeast("target_ratio", c.target_ratio, 0.0), AtLeast<int64_t>("steps", c.steps, 1),
        AtLeast("baseline_tolerance", c.baseline_tolerance, 0.0),
        AtLeast("max_spread", c.max_spread, 0.0),
        AtLeast("max_trainer_lost", c.max_trainer_lost, 0.0)}) {
    if (!s.ok()) return s;
  }
  if (c.step_ms <= 0) return Bad("step_ms", fmt::format("{}", c.step_ms), "must be > 0");
  if (c.target_ratio > 0 && c.upstream_ratio > 0) {
    return Bad("target_ratio", fmt::format("{}", c.target_ratio),
               "needs --upstream_ratio=0 (an unthrottled upstream)");
  }
  c.json = absl::GetFlag(FLAGS_json);
  c.plot = absl::GetFlag(FLAGS_plot);
  c.trace = absl::GetFlag(FLAGS_trace);
  c.stats = absl::GetFlag(FLAGS_stats);
  c.progress = !absl::GetFlag(FLAGS_no_progress);
  // An empty value given on purpose is a mistake, not "the default".
  for (const auto& [flag, value] : {std::pair<const char*, const std::string*>{"source", &c.source},
                                    {"json", &c.json},
                                    {"plot", &c.plot},
                                    {"trace", &c.trace},
                                    {"data_dir", &c.data_dir}}) {
    if (cl->given.count(flag) && value->empty())
      return Bad(flag, "",
                 std::string(flag) == "source"
                     ? "is empty (leave --source out for the built-in dataset)"
                     : "is empty");
  }
  if (absl::Status s = CheckMagnitudes(c); !s.ok()) return s;

  if ((c.insert == Insert::kAdaptive || c.insert == Insert::kAuto) && !cl->given.count("echo"))
    c.echo = {1};
  if (c.grid && !cl->given.count("echo")) c.echo = {2, 3, 4};
  if (c.format == "idx" && !c.source.empty() && c.source.find(',') == std::string::npos) {
    return Bad("source", c.source, "--format=idx needs IMAGES_URI,LABELS_URI");
  }
  return c;
}

}  // namespace dataecho::bench
