// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// mix_bench: a mix of a slow remote input and a fast local one, 50/50 of the
// fresh items (docs/mix.md), with echo placed three ways:
//
//   none       no echo: the consumer waits on the remote input;
//   per_input  AdaptiveEcho on the remote input only (after its Prefetch),
//              Mix with weights_of = kFresh;
//   over_mix   one AdaptiveEcho over the mix (after a Prefetch of it).
//
// The remote input is a TFRecord file served by the loopback HTTP server
// (testing/http_server.h) through a ThrottledStore that adds `ratio` x
// `step_us` of latency per record, so it gives a fresh record `ratio` times
// slower than the consumer takes a step (R = ratio). The local input is the
// same number of records in memory. The consumer spins `step_us` per element
// (one training step). Each mode prints one JSON line: steps/s, and per input
// the elements it gave, its fresh items, its realized factor and its share of
// the fresh items, counted at the consumer.
//
//   mix_bench                              # R = 6, 4,000 steps of 200 us, all modes
//   mix_bench --modes=per_input --steps=20000 --ratio=4
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "bench_main.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/internal/counter.h"
#include "dataecho/pipeline.h"
#include "dataecho/storage/object_store.h"
#include "dataecho/storage/throttled_store.h"
#include "fmt/format.h"
#include "testing/http_server.h"

ABSL_FLAG(std::string, modes, "none,per_input,over_mix", "comma-separated modes to run");
ABSL_FLAG(int64_t, steps, 4000, "consumer steps (elements) per mode");
ABSL_FLAG(int64_t, step_us, 200, "the consumer's time per step, microseconds (spun)");
ABSL_FLAG(double, ratio, 6, "R: the remote input's time per fresh record / step time");
ABSL_FLAG(int64_t, records, 2000, "records per input (each input repeats)");
ABSL_FLAG(int64_t, record_bytes, 4096, "payload bytes per record");

namespace dataecho {
namespace {

std::string Payload(int64_t i, int64_t bytes) {
  std::string p(static_cast<size_t>(bytes), '\0');
  for (int64_t j = 0; j < bytes; ++j) p[j] = static_cast<char>((i * 31 + j) % 251);
  return p;
}

struct Setup {
  std::string remote_url;
  std::shared_ptr<ObjectStore> remote_store;
  std::vector<Record> local;
};

// The remote input, endless, reading ahead on its own thread.
Pipeline<Record> Remote(const Setup& s) {
  return From(MakeTFRecordSource(s.remote_store, {s.remote_url}))
      .Repeat(-1)
      .Prefetch({.depth = 64});
}
Pipeline<Record> Local(const Setup& s) { return FromVector(s.local).Repeat(-1); }

Pipeline<Record> Build(const Setup& s, const std::string& mode, double ratio) {
  std::vector<Pipeline<Record>> inputs;
  MixOptions mix{.weights = {0.5, 0.5}, .seed = 1, .weights_of = MixWeightsOf::kFresh};
  if (mode == "per_input") {
    inputs.push_back(Remote(s).AdaptiveEcho({.max_factor = ratio, .seed = 2}));
    inputs.push_back(Local(s));
    return Mix(std::move(inputs), mix);
  }
  inputs.push_back(Remote(s));
  inputs.push_back(Local(s));
  Pipeline<Record> mixed = Mix(std::move(inputs), mix);
  if (mode == "over_mix") {
    return std::move(mixed).Prefetch({.depth = 64}).AdaptiveEcho({.max_factor = ratio, .seed = 2});
  }
  return mixed;
}

absl::Status RunMode(const Setup& s, const std::string& mode) {
  const int64_t steps = absl::GetFlag(FLAGS_steps);
  const int64_t step_ns = absl::GetFlag(FLAGS_step_us) * 1000;
  Pipeline<Record> p = Build(s, mode, absl::GetFlag(FLAGS_ratio));
  if (!p.status().ok()) return p.status();
  int64_t emitted[2] = {0, 0}, fresh[2] = {0, 0};
  const int64_t t0 = internal::NowNanos();
  for (int64_t i = 0; i < steps; ++i) {
    absl::StatusOr<std::optional<Record>> r = p.Next();
    if (!r.ok()) return r.status();
    if (!r->has_value()) return absl::InternalError("the mix ended");
    const int k = (*r)->uri().starts_with("http") ? 0 : 1;
    ++emitted[k];
    fresh[k] += (*r)->fresh() ? 1 : 0;
    const int64_t until = internal::NowNanos() + step_ns;
    while (internal::NowNanos() < until) {
    }
  }
  const double seconds = static_cast<double>(internal::NowNanos() - t0) * 1e-9;
  const double all_fresh = static_cast<double>(fresh[0] + fresh[1]);
  auto factor = [&](int k) {
    return fresh[k] > 0 ? static_cast<double>(emitted[k]) / static_cast<double>(fresh[k]) : 0.0;
  };
  std::printf(
      "%s\n",
      fmt::format("{{\"mode\": \"{}\", \"ratio\": {}, \"steps\": {}, \"steps_per_second\": {:.1f}, "
                  "\"ideal_steps_per_second\": {:.1f}, "
                  "\"remote\": {{\"elements\": {}, \"fresh\": {}, \"realized_factor\": {:.3f}, "
                  "\"fresh_share\": {:.3f}}}, "
                  "\"local\": {{\"elements\": {}, \"fresh\": {}, \"realized_factor\": {:.3f}, "
                  "\"fresh_share\": {:.3f}}}}}",
                  mode, absl::GetFlag(FLAGS_ratio), steps, static_cast<double>(steps) / seconds,
                  1e9 / static_cast<double>(step_ns), emitted[0], fresh[0], factor(0),
                  all_fresh > 0 ? fresh[0] / all_fresh : 0.0, emitted[1], fresh[1], factor(1),
                  all_fresh > 0 ? fresh[1] / all_fresh : 0.0)
          .c_str());
  std::fflush(stdout);
  return absl::OkStatus();
}

absl::Status Run() {
  const int64_t n = absl::GetFlag(FLAGS_records);
  const int64_t bytes = absl::GetFlag(FLAGS_record_bytes);
  const double ratio = absl::GetFlag(FLAGS_ratio);
  if (n < 1 || bytes < 1 || !(ratio >= 1) || absl::GetFlag(FLAGS_steps) < 1) {
    return absl::InvalidArgumentError("--records, --record_bytes, --steps >= 1, --ratio >= 1");
  }
  absl::StatusOr<std::unique_ptr<testing::HttpServer>> server = testing::HttpServer::Start({});
  if (!server.ok()) return server.status();
  std::string file;
  Setup s;
  auto local_uri = std::make_shared<const std::string>("memory://local");
  for (int64_t i = 0; i < n; ++i) {
    const std::string payload = Payload(i, bytes);
    AppendTFRecord(&file, payload);
    Record r;
    r.data = Buffer::CopyOf(payload);
    r.source = local_uri;
    r.source_index = static_cast<uint64_t>(i);
    s.local.push_back(std::move(r));
  }
  (*server)->Put("/remote.tfrecord", std::move(file));
  s.remote_url = (*server)->url() + "/remote.tfrecord";
  // Every framed record (payload + 16 bytes) pays the latency once.
  s.remote_store = NewThrottledStore(
      OpenObjectStore(), {.latency = absl::Nanoseconds(
                              ratio * static_cast<double>(absl::GetFlag(FLAGS_step_us)) * 1000),
                          .request_bytes = static_cast<uint64_t>(bytes + 16)});
  for (absl::string_view mode : absl::StrSplit(absl::GetFlag(FLAGS_modes), ',')) {
    if (mode != "none" && mode != "per_input" && mode != "over_mix") {
      return absl::InvalidArgumentError(
          fmt::format("--modes: unknown mode '{}' (none, per_input, over_mix)", std::string(mode)));
    }
    if (absl::Status status = RunMode(s, std::string(mode)); !status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace dataecho

int main(int argc, char** argv) {
  return dataecho::bench::Main(argc, argv, "mix_bench", dataecho::Run);
}
