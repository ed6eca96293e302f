// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "config.h"

#include <cmath>
#include <cstdlib>
#include <string_view>

#include "fmt/format.h"

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

absl::StatusOr<int64_t> ParseInt(std::string_view flag, const std::string& v, int64_t min) {
  char* end = nullptr;
  const long long i = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || end != v.c_str() + v.size()) return Bad(flag, v, "not an integer");
  if (i < min) return Bad(flag, v, fmt::format("must be >= {}", min));
  return static_cast<int64_t>(i);
}

}  // namespace

std::string Usage() {
  return R"(Usage: echo_bench [FLAG]...
Measures training steps per second with data echoing against the e=1 baseline
and the ideal speedup min(e, R), with a trainer emulated by a busy-wait step.

Source:
  --source=URI        records to read: a path, glob, file://, http(s)://, gs://, s3://
                      (default: Fashion-MNIST converted to TFRecord shards, served
                      over loopback HTTP with added latency)
  --format=FORMAT     tfrecord (image records, see docs/formats.md) or idx
                      (--source=IMAGES_URI,LABELS_URI)                [tfrecord]
  --data_dir=DIR      cache of the default dataset's shards [~/.cache/dataecho]
  --latency_ms=MS     default source: added latency per HTTP request    [5]
Pipeline:
  --echo=E1,E2,...    echo factors to run (e=1 always runs first)   [1,2,3,4,6,8]
  --insert=WHERE      before_augment | after_augment | batch | adaptive
                                                              [before_augment]
  --max_echo=M        adaptive: at most M emissions per item (one run per
                      --echo value too, e=1 runs first as the baseline)   [4]
  --batch_size=N      rows per batch                                    [128]
  --shuffle_buffer=N  shuffle buffer after example echoing             [2048]
  --seed=N            seed of every random stage                          [1]
Emulated trainer:
  --step_ms=T         time of one training step (busy-wait)               [2]
  --no_pin            do not keep a CPU for the trainer (by default, with two
                      or more CPUs, the busy-wait step runs on a CPU of its own
                      and the pipeline's threads on the others)
  --upstream_ratio=R  upstream time per batch / step time; 0 = unthrottled [6]
  --steps=N           measured steps per run                            [300]
Output:
  --json=PATH         write the results as JSON
  --plot=PATH         write speedup vs echo factor as SVG
  --stats             print every stage's statistics after each run
  --no_progress       no progress bar (also off when stderr is not a terminal)
  --help              this text
)";
}

absl::StatusOr<BenchConfig> ParseArgs(int argc, char** argv) {
  BenchConfig c;
  bool echo_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") return absl::CancelledError("help");
    if (arg == "--no_progress") {
      c.progress = false;
      continue;
    }
    if (arg == "--stats") {
      c.stats = true;
      continue;
    }
    if (arg == "--no_pin") {
      c.pin_trainer = false;
      continue;
    }
    if (arg.substr(0, 2) != "--" || arg.find('=') == std::string_view::npos) {
      return absl::InvalidArgumentError(
          fmt::format("unexpected argument '{}' (flags are --name=value; see --help)", arg));
    }
    const size_t eq = arg.find('=');
    const std::string name(arg.substr(2, eq - 2));
    const std::string value(arg.substr(eq + 1));
    if (name == "source") {
      c.source = value;
    } else if (name == "format") {
      if (value != "tfrecord" && value != "idx") return Bad(name, value, "must be tfrecord or idx");
      c.format = value;
    } else if (name == "echo") {
      c.echo.clear();
      echo_given = true;
      size_t start = 0;
      while (start <= value.size()) {
        const size_t comma = value.find(',', start);
        const std::string item =
            value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        absl::StatusOr<double> e = ParseDouble(name, item);
        if (!e.ok()) return Bad(name, value, fmt::format("'{}' is not a number", item));
        if (*e < 1) return Bad(name, value, fmt::format("echo factor {} is below 1", *e));
        c.echo.push_back(*e);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (name == "insert") {
      absl::StatusOr<Insert> insert = ParseEchoPlacement(value);
      if (!insert.ok())
        return Bad(name, value, "must be before_augment, after_augment, batch or adaptive");
      c.insert = *insert;
    } else if (name == "max_echo" || name == "upstream_ratio" || name == "step_ms" ||
               name == "latency_ms") {
      absl::StatusOr<double> d = ParseDouble(name, value);
      if (!d.ok()) return d.status();
      if (name == "max_echo") {
        if (*d < 1) return Bad(name, value, "must be >= 1");
        c.max_echo = *d;
      } else if (name == "upstream_ratio") {
        if (*d < 0) return Bad(name, value, "must be >= 0");
        c.upstream_ratio = *d;
      } else if (name == "step_ms") {
        if (*d <= 0) return Bad(name, value, "must be > 0");
        c.step_ms = *d;
      } else {
        if (*d < 0) return Bad(name, value, "must be >= 0");
        c.latency_ms = *d;
      }
    } else if (name == "batch_size" || name == "shuffle_buffer" || name == "steps" ||
               name == "seed") {
      absl::StatusOr<int64_t> n = ParseInt(name, value, name == "seed" ? 0 : 1);
      if (!n.ok()) return n.status();
      if (name == "batch_size")
        c.batch_size = *n;
      else if (name == "shuffle_buffer")
        c.shuffle_buffer = *n;
      else if (name == "steps")
        c.steps = *n;
      else
        c.seed = static_cast<uint64_t>(*n);
    } else if (name == "data_dir") {
      c.data_dir = value;
    } else if (name == "json") {
      c.json = value;
    } else if (name == "plot") {
      c.plot = value;
    } else {
      return absl::InvalidArgumentError(fmt::format("unknown flag --{} (see --help)", name));
    }
  }
  if (c.insert == Insert::kAdaptive && !echo_given) c.echo = {1};
  if (c.format == "idx" && !c.source.empty() && c.source.find(',') == std::string::npos) {
    return Bad("source", c.source, "--format=idx needs IMAGES_URI,LABELS_URI");
  }
  return c;
}

}  // namespace dataecho::bench
