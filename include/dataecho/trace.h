// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// trace.h: a timeline of the pipeline, written as Chrome trace-event JSON
// (open it in https://ui.perfetto.dev or chrome://tracing). Where the stats
// (stats.h) give totals and a verdict, the timeline shows *when* each thread
// worked and waited (docs/stats.md, "A timeline of the pipeline").
//
//   absl::Status s = dataecho::StartTrace("/tmp/pipeline.json");
//   for (int i = 0; i < 200; ++i) pipeline.Next();   // ... the run to look at
//   s = dataecho::StopTrace();                       // writes the file
//
// What is recorded, one track per thread (named: the consumer, "prefetch",
// "map worker", "decode worker", "checkpoint writer", ...):
//   - "Pipeline::Next" on the consumer's thread, and "consumer step" for the
//     time between two pulls (the training step);
//   - "wait on <stage>": every time a stage (or a Prefetch's producer, a Map's
//     workers) blocked on its input, naming the input stage's type;
//   - "map call": a run of consecutive calls of a parallel Map's function on
//     its worker, those whose results go out together ("args": {"calls": n});
//     a call of 200 us or more is a span of its own;
//   - "read <uri>" for remote reads (HTTP, GCS, S3) and "retry" marks;
//   - "save state" (Pipeline::SaveState, SaveStateCord) and "checkpoint
//     write" (CheckpointDir);
//   - counters: "prefetch queue" (elements waiting in a Prefetch) and
//     "echo factor" (Echo's realized factor so far, from its fresh items),
//     sampled: at most one a millisecond per thread.
//
// COST. Off (the default), each place above costs one relaxed atomic load
// and a branch; nothing is allocated. On, an event costs a clock read and an
// append to the calling thread's own buffer (under that thread's own lock,
// which only StopTrace() ever contends); counters are sampled, at most one a
// millisecond per thread (docs/benchmarks.md has the measured throughput loss).
// Memory is bounded: at most `max_events` events are kept; later ones are
// counted and dropped, and the file says how many ("dropped_events").
//
// For your own stages: TraceEnabled() guards a TraceComplete() with the
// times you measured, a TraceScope, or TraceInstant()/TraceCounter().
// Names and categories must be string literals (they are kept as pointers).
//
// Thread safety: every function is thread-safe. One trace at a time per
// process.
#ifndef DATAECHO_TRACE_H_
#define DATAECHO_TRACE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <typeinfo>

#include "absl/status/status.h"
#include "dataecho/export.h"

namespace dataecho {

struct TraceOptions {
  // Events kept at most (~64 bytes each); later ones are dropped and counted.
  // Threads take the cap in slices of 256 events, so with several threads
  // recording a few hundred fewer may be kept than the cap allows.
  int64_t max_events = int64_t{1} << 20;
};

// Starts recording into memory; the file at `path` is created now (so that
// an unwritable path is an error before the run) and written by StopTrace().
// FAILED_PRECONDITION if a trace is already running; INVALID_ARGUMENT for an
// empty path or max_events < 1; UNAVAILABLE if the file cannot be created.
DATAECHO_EXPORT absl::Status StartTrace(const std::string& path, TraceOptions options = {});

// Stops recording and writes the JSON file. FAILED_PRECONDITION if no trace
// is running; UNAVAILABLE naming the file if it cannot be written.
DATAECHO_EXPORT absl::Status StopTrace();

// Whether a trace is being recorded.
DATAECHO_EXPORT extern std::atomic<bool> trace_on;
inline bool TraceEnabled() { return trace_on.load(std::memory_order_relaxed); }

// What an event may say besides its name: the type of the stage it is about
// (a "wait on <stage>"), a URI, a number.
struct TraceArg {
  const std::type_info* stage = nullptr;
  std::shared_ptr<const std::string> uri;
  int64_t count = 0;  // > 0: a span of that many calls (JSON "args": {"calls": count})
};

// A span of the calling thread from `begin_ns` to `end_ns`
// (internal::NowNanos() times). REQUIRES: `name` and `category` are string
// literals. Cheap to call when no trace runs, but guard the work of
// computing its arguments with TraceEnabled().
DATAECHO_EXPORT void TraceComplete(const char* name, const char* category, int64_t begin_ns,
                                   int64_t end_ns, TraceArg arg = {});
// A mark at this moment on the calling thread.
DATAECHO_EXPORT void TraceInstant(const char* name, const char* category);
// A counter's value at this moment (one track per name), recorded at most
// once a millisecond per thread and name (a value every element would cost
// more than the rest of the trace; the calls in between are skipped).
DATAECHO_EXPORT void TraceCounter(const char* name, double value);
// Names the calling thread's track (a string literal); threads of the
// library name themselves.
DATAECHO_EXPORT void SetTraceThreadName(const char* name);

// A span around a scope, when a trace runs.
class DATAECHO_EXPORT TraceScope {
 public:
  TraceScope(const char* name, const char* category, TraceArg arg = {});
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  const char* name_;
  const char* category_;
  TraceArg arg_;
  int64_t begin_ns_ = 0;  // 0: not recording
};

}  // namespace dataecho

#endif  // DATAECHO_TRACE_H_
