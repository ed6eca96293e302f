// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Auto placement's decode workers (internal/decode_workers.h).
#include "internal/decode_workers.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "dataecho/internal/map_tuning.h"
#include "fmt/format.h"

namespace dataecho::internal {

int PlanDecodeWorkers(const DecodeWindow& w, const DecodeContext& c, std::string* reason) {
  auto say = [&](std::string text) {
    if (reason != nullptr) *reason = std::move(text);
    return w.workers;
  };
  const int now = std::max(w.workers, 0);
  if (w.elements < kDecodeMinElements || !(w.wall_s > 0) || !(w.busy_s > 0)) {
    return say(fmt::format("{} items decoded in the window: too few to decide on", w.elements));
  }
  const int cores = std::max(c.cores, 1);
  if (now >= cores) {
    return say(fmt::format("{} workers already, for {} pipeline core{}", now, cores,
                           cores == 1 ? "" : "s"));
  }
  const double slots = static_cast<double>(std::max(now, 1));
  const double per_item = w.busy_s / static_cast<double>(w.elements);
  const double busy = w.busy_s / (w.wall_s * slots);
  const double starved = w.input_wait_s / w.wall_s;
  const double waited = w.consumer_wait_s / w.wall_s;
  if (!c.upstream_bound || busy < 0.7 || starved >= 0.3 || (now > 0 && waited < 0.1)) {
    return say(fmt::format(
        "not the bottleneck (upstream {}; busy {:.0f} %, waited for input {:.0f} %, its "
        "consumer waited {:.0f} %)",
        c.upstream_bound ? "the bottleneck" : "not the bottleneck", 100 * busy, 100 * starved,
        100 * waited));
  }
  // Items per second: the Map's on its workers, the cores' at the pipeline's
  // CPU per fresh item (unknown: as many workers as cores).
  const double map_rate = slots / per_item;
  const double core_rate = c.cpu_per_fresh > 0 ? cores / c.cpu_per_fresh : 1e300;
  if (map_rate >= 0.9 * core_rate) {
    return say(fmt::format(
        "the cores are the limit: {:.3g} ms per item on {} worker{}, {:.3g} ms of CPU per fresh "
        "item on {} core{}",
        per_item * 1e3, now, now == 1 ? "" : "s", c.cpu_per_fresh * 1e3, cores,
        cores == 1 ? "" : "s"));
  }
  int want = cores;
  if (c.cpu_per_fresh > 0) {
    want = static_cast<int>(std::min<double>(cores, std::ceil(per_item * core_rate - 1e-9)));
  }
  // The RAM its window holds: up to two hand-off batches per worker.
  const int64_t per_worker = 2 * int64_t{MapBatchSize(static_cast<int64_t>(per_item * 1e9))} *
                             std::max<int64_t>(w.item_bytes, 0);
  if (per_worker > 0) {
    const int64_t room = std::max<int64_t>(c.ram_left, 0) / per_worker;
    want = static_cast<int>(std::min<int64_t>(want, now + room));
  }
  want = std::min(want, MapParallelism::kMaxWorkers);
  if (now == 0 && want == 1) {
    return say("one worker would decode no faster than the inline Map");
  }
  if (want <= now) {
    return say(
        fmt::format("no room for more workers in the RAM budget ({} bytes left, {} per "
                    "worker)",
                    c.ram_left, per_worker));
  }
  say(fmt::format(
      "decode Map '{}' {} -> {} workers: it is the bottleneck ({:.3g} ms per item, busy {:.0f} "
      "%{}); the {} pipeline core{} could decode {:.0f} items/s at {:.3g} ms of CPU per fresh "
      "item, {} {:.0f}/s",
      w.name, now, want, per_item * 1e3, 100 * busy,
      now > 0 ? fmt::format(", its consumer waited {:.0f} %", 100 * waited) : std::string(), cores,
      cores == 1 ? "" : "s", std::min(core_rate, 1e9), c.cpu_per_fresh * 1e3,
      now == 0 ? std::string("inline") : fmt::format("its {} worker{}", now, now == 1 ? "" : "s"),
      map_rate));
  return want;
}

std::optional<std::string> DecodeWorkersPlanner::Decide(int64_t now_ns,
                                                        const DecodeContext& context) {
  MapParallelism::Reading cur = control_->Read();
  if (!cur.attached) return std::nullopt;
  workers_ = cur.workers;
  if (!last_.has_value() || settling_) {
    last_ = std::move(cur);
    last_ns_ = now_ns;
    settling_ = false;
    return std::nullopt;
  }
  const MapParallelism::Reading& a = *last_;
  DecodeWindow w;
  w.name = cur.name;
  w.workers = cur.workers;
  w.wall_s = static_cast<double>(now_ns - last_ns_) * 1e-9;
  w.elements = cur.elements - a.elements;
  w.busy_s = static_cast<double>(cur.busy_ns - a.busy_ns) * 1e-9;
  w.consumer_wait_s = static_cast<double>(cur.consumer_wait_ns - a.consumer_wait_ns) * 1e-9;
  w.input_wait_s = static_cast<double>(cur.input_wait_ns - a.input_wait_ns) * 1e-9;
  w.item_bytes = cur.elements > 0 ? cur.bytes / cur.elements : 0;
  last_ = std::move(cur);
  last_ns_ = now_ns;
  std::string reason;
  const int want = PlanDecodeWorkers(w, context, &reason);
  if (want <= std::max(w.workers, 0)) return std::nullopt;
  control_->Raise(want);
  workers_ = want;
  settling_ = true;
  return reason;
}

}  // namespace dataecho::internal
