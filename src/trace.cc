// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/trace.h"

#include <cxxabi.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "dataecho/internal/counter.h"
#include "dataecho/storage/object_store.h"
#include "fmt/format.h"

namespace dataecho {

std::atomic<bool> trace_on{false};

namespace {

struct Event {
  const char* name;
  const char* category;
  char phase;  // 'X' span, 'i' mark, 'C' counter, 'M' thread name
  uint32_t tid;
  int64_t ts_ns;
  int64_t dur_ns;
  double value;  // 'C'
  TraceArg arg;
};

struct Recorder {
  absl::Mutex mu;
  std::vector<Event> events ABSL_GUARDED_BY(mu);
  int64_t max_events ABSL_GUARDED_BY(mu) = 0;
  int64_t dropped ABSL_GUARDED_BY(mu) = 0;
  int64_t start_ns ABSL_GUARDED_BY(mu) = 0;
  uint64_t generation ABSL_GUARDED_BY(mu) = 0;  // of the trace running (or last run)
  std::FILE* file ABSL_GUARDED_BY(mu) = nullptr;
  std::string path ABSL_GUARDED_BY(mu);
};

Recorder& TheRecorder() {
  static Recorder* r = new Recorder;  // never destroyed: threads may record at exit
  return *r;
}

std::atomic<uint32_t> next_tid{1};
thread_local uint32_t tid = 0;
thread_local const char* thread_name = nullptr;
thread_local uint64_t named_in = 0;  // the generation this thread's name was recorded in

// Appends `e` (and, once per trace, the thread's name). REQUIRES: r.mu held.
void Append(Recorder& r, Event e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(r.mu) {
  if (tid == 0) tid = next_tid.fetch_add(1, std::memory_order_relaxed);
  e.tid = tid;
  if (named_in != r.generation) {
    named_in = r.generation;
    if (static_cast<int64_t>(r.events.size()) < r.max_events) {
      r.events.push_back(
          Event{thread_name != nullptr ? thread_name : nullptr, "", 'M', tid, 0, 0, 0, {}});
    }
  }
  if (static_cast<int64_t>(r.events.size()) >= r.max_events) {
    ++r.dropped;
    return;
  }
  r.events.push_back(std::move(e));
}

void Record(Event e) {
  Recorder& r = TheRecorder();
  absl::MutexLock lock(&r.mu);
  if (!TraceEnabled()) return;  // stopped meanwhile
  Append(r, std::move(e));
}

std::string Demangle(const std::type_info& t) {
  int status = 0;
  char* name = abi::__cxa_demangle(t.name(), nullptr, nullptr, &status);
  std::string out = status == 0 && name != nullptr ? name : t.name();
  std::free(name);
  // "dataecho::PrefetchStage<dataecho::Example>" -> "PrefetchStage<Example>"
  for (size_t at; (at = out.find("dataecho::")) != std::string::npos;) out.erase(at, 10);
  for (size_t at; (at = out.find("internal::")) != std::string::npos;) out.erase(at, 10);
  return out;
}

// A JSON string literal.
std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      out += fmt::format("\\u{:04x}", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string ToJson(const std::vector<Event>& events, int64_t start_ns, int64_t dropped,
                   int64_t max_events) {
  const int pid = static_cast<int>(::getpid());
  std::string out = "{\"traceEvents\":[\n";
  bool first = true;
  auto us = [&](int64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns) * 1e-3); };
  for (const Event& e : events) {
    if (!first) out += ",\n";
    first = false;
    if (e.phase == 'M') {
      const std::string name = e.name != nullptr ? e.name : fmt::format("thread {}", e.tid);
      out += fmt::format(
          "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}"
          "}",
          pid, e.tid, Quote(name));
      continue;
    }
    std::string name = e.name;
    if (e.arg.stage != nullptr) name += " " + Demangle(*e.arg.stage);
    if (e.arg.uri != nullptr) name += " " + RedactUri(*e.arg.uri);
    const int64_t ts = e.ts_ns - start_ns;
    if (e.phase == 'X') {
      out += fmt::format(
          "{{\"name\":{},\"cat\":{},\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{}}}",
          Quote(name), Quote(e.category), pid, e.tid, us(ts), us(e.dur_ns));
    } else if (e.phase == 'i') {
      out += fmt::format(
          "{{\"name\":{},\"cat\":{},\"ph\":\"i\",\"s\":\"t\",\"pid\":{},\"tid\":{},\"ts\":{}}}",
          Quote(name), Quote(e.category), pid, e.tid, us(ts));
    } else {
      out += fmt::format(
          "{{\"name\":{},\"ph\":\"C\",\"pid\":{},\"tid\":{},\"ts\":{},\"args\":{{\"value\":{}}}}}",
          Quote(name), pid, e.tid, us(ts), e.value);
    }
  }
  out += fmt::format(
      "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{{\"producer\":\"dataecho\","
      "\"events\":{},\"max_events\":{},\"dropped_events\":{}}}}}\n",
      events.size(), max_events, dropped);
  return out;
}

}  // namespace

absl::Status StartTrace(const std::string& path, TraceOptions options) {
  if (path.empty()) return absl::InvalidArgumentError("StartTrace: empty path");
  if (options.max_events < 1) {
    return absl::InvalidArgumentError(
        fmt::format("StartTrace: max_events must be >= 1, got {}", options.max_events));
  }
  Recorder& r = TheRecorder();
  absl::MutexLock lock(&r.mu);
  if (r.file != nullptr) {
    return absl::FailedPreconditionError(
        fmt::format("StartTrace: a trace into {} is running (StopTrace() first)", r.path));
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    return absl::UnavailableError(
        fmt::format("StartTrace: cannot create {}: {}", path, std::strerror(errno)));
  }
  r.file = f;
  r.path = path;
  r.events.clear();
  r.max_events = options.max_events;
  r.dropped = 0;
  r.start_ns = internal::NowNanos();
  ++r.generation;
  trace_on.store(true, std::memory_order_relaxed);
  return absl::OkStatus();
}

absl::Status StopTrace() {
  Recorder& r = TheRecorder();
  std::vector<Event> events;
  std::FILE* f;
  std::string path;
  int64_t start_ns, dropped, max_events;
  {
    absl::MutexLock lock(&r.mu);
    if (r.file == nullptr) return absl::FailedPreconditionError("StopTrace: no trace is running");
    trace_on.store(false, std::memory_order_relaxed);
    events.swap(r.events);
    f = std::exchange(r.file, nullptr);
    path = std::move(r.path);
    start_ns = r.start_ns;
    dropped = r.dropped;
    max_events = r.max_events;
  }
  const std::string json = ToJson(events, start_ns, dropped, max_events);
  const bool ok = std::fwrite(json.data(), 1, json.size(), f) == json.size();
  if (std::fclose(f) != 0 || !ok) {
    return absl::UnavailableError(
        fmt::format("StopTrace: cannot write {}: {}", path, std::strerror(errno)));
  }
  return absl::OkStatus();
}

void TraceComplete(const char* name, const char* category, int64_t begin_ns, int64_t end_ns,
                   TraceArg arg) {
  if (!TraceEnabled()) return;
  Record(Event{name, category, 'X', 0, begin_ns, end_ns - begin_ns, 0, std::move(arg)});
}

void TraceInstant(const char* name, const char* category) {
  if (!TraceEnabled()) return;
  Record(Event{name, category, 'i', 0, internal::NowNanos(), 0, 0, {}});
}

void TraceCounter(const char* name, double value) {
  if (!TraceEnabled()) return;
  Record(Event{name, "", 'C', 0, internal::NowNanos(), 0, value, {}});
}

void SetTraceThreadName(const char* name) {
  if (name == thread_name) return;
  thread_name = name;
  named_in = 0;  // recorded again with the next event
}

TraceScope::TraceScope(const char* name, const char* category, TraceArg arg)
    : name_(name), category_(category), arg_(std::move(arg)) {
  if (TraceEnabled()) begin_ns_ = internal::NowNanos();
}

TraceScope::~TraceScope() {
  if (begin_ns_ != 0) {
    TraceComplete(name_, category_, begin_ns_, internal::NowNanos(), std::move(arg_));
  }
}

}  // namespace dataecho
