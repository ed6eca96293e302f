// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/trace.h"

#include <cxxabi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/option_checks.h"
#include "dataecho/status_macros.h"
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

// Slots of the trace's cap a thread takes at a time (so that threads do not
// meet on one counter for every event).
constexpr int64_t kSlotsPerTake = 256;
// A counter is recorded at most this often per thread and name.
constexpr int64_t kCounterPeriodNs = 1'000'000;

// One thread's events. Only that thread appends; StopTrace() takes them. The
// mutex is the thread's own: uncontended but while a trace stops.
struct ThreadBuffer {
  absl::Mutex mu;
  std::vector<Event> events ABSL_GUARDED_BY(mu);
  uint64_t generation ABSL_GUARDED_BY(mu) = 0;      // of the trace `events` belong to
  int64_t slots ABSL_GUARDED_BY(mu) = 0;            // taken from the cap, not used yet
  const char* named ABSL_GUARDED_BY(mu) = nullptr;  // the thread name recorded in this trace
  uint32_t tid = 0;
  // The last time each counter name was recorded on this thread (a few names).
  struct Sample {
    const char* name = nullptr;
    int64_t ns = 0;
  };
  std::array<Sample, 8> samples{};
  size_t next_sample = 0;

  // Whether counter `name` is due at `now_ns` (and marks it recorded).
  bool Due(const char* counter, int64_t now_ns) {
    for (Sample& s : samples) {
      if (s.name != counter) continue;
      if (now_ns - s.ns < kCounterPeriodNs) return false;
      s.ns = now_ns;
      return true;
    }
    samples[next_sample++ % samples.size()] = {counter, now_ns};
    return true;
  }
};

struct Recorder {
  absl::Mutex mu;
  std::vector<ThreadBuffer*> threads ABSL_GUARDED_BY(mu);  // of the threads alive
  std::vector<Event> retired ABSL_GUARDED_BY(mu);          // of threads that ended during the trace
  std::atomic<uint64_t> generation{0};                     // of the trace running (or last run)
  std::atomic<int64_t> free_slots{0};                      // of the cap, not taken by a thread
  std::atomic<int64_t> dropped{0};
  int64_t max_events ABSL_GUARDED_BY(mu) = 0;
  int64_t start_ns ABSL_GUARDED_BY(mu) = 0;
  std::FILE* file ABSL_GUARDED_BY(mu) = nullptr;
  std::string path ABSL_GUARDED_BY(mu);
};

Recorder& TheRecorder() {
  static Recorder* r = new Recorder;  // never destroyed: threads may record at exit
  return *r;
}

std::atomic<uint32_t> next_tid{1};
// The calling thread's name (SetTraceThreadName), recorded with its next event.
thread_local const char* thread_name = nullptr;

// Moves `b`'s events of the running trace (generation `gen`) to the end of `out`.
void TakeEvents(ThreadBuffer& b, uint64_t gen, std::vector<Event>& out) {
  absl::MutexLock lock(&b.mu);
  if (b.generation == gen) {
    out.insert(out.end(), std::make_move_iterator(b.events.begin()),
               std::make_move_iterator(b.events.end()));
  }
  b.events.clear();
  b.slots = 0;
}

// The calling thread's buffer, registered with the recorder while the thread lives.
class ThreadSlot {
 public:
  ThreadBuffer& Get() {
    if (buffer_ == nullptr) {
      buffer_ = new ThreadBuffer;
      buffer_->tid = next_tid.fetch_add(1, std::memory_order_relaxed);
      Recorder& r = TheRecorder();
      absl::MutexLock lock(&r.mu);
      r.threads.push_back(buffer_);
    }
    return *buffer_;
  }

  ~ThreadSlot() {  // at the thread's end: its events stay in the trace
    if (buffer_ == nullptr) return;
    Recorder& r = TheRecorder();
    absl::MutexLock lock(&r.mu);
    std::erase(r.threads, buffer_);
    if (r.file != nullptr) TakeEvents(*buffer_, r.generation.load(), r.retired);
    delete buffer_;
  }

 private:
  ThreadBuffer* buffer_ = nullptr;
};

thread_local ThreadSlot my_slot;

// Takes one slot of the cap for `b`; false if the cap is reached.
bool TakeSlot(Recorder& r, ThreadBuffer& b) ABSL_EXCLUSIVE_LOCKS_REQUIRED(b.mu) {
  if (b.slots == 0) {
    int64_t free = r.free_slots.load(std::memory_order_relaxed);
    int64_t take = 0;
    do {
      take = std::min(free, kSlotsPerTake);
      if (take <= 0) return false;
    } while (!r.free_slots.compare_exchange_weak(free, free - take, std::memory_order_relaxed));
    b.slots = take;
  }
  --b.slots;
  return true;
}

// Appends `e` to the calling thread's buffer (and, once per trace, the thread's name).
void RecordEvent(Event e) {
  Recorder& r = TheRecorder();
  ThreadBuffer& b = my_slot.Get();
  e.tid = b.tid;
  absl::MutexLock lock(&b.mu);
  // Stopped meanwhile? (Acquire: a trace seen running is seen with its generation.)
  if (!trace_on.load(std::memory_order_acquire)) return;
  const uint64_t gen = r.generation.load(std::memory_order_relaxed);
  if (b.generation != gen) {  // the first event of this trace
    b.events.clear();
    b.generation = gen;
    b.slots = 0;
    b.named = nullptr;
  }
  static constexpr char kUnnamed[] = "";
  if (const char* name = thread_name != nullptr ? thread_name : kUnnamed; b.named != name) {
    b.named = name;  // once per trace, and again if the thread renames itself
    if (TakeSlot(r, b)) {
      b.events.push_back(Event{thread_name, "", 'M', b.tid, 0, 0, 0, {}});
    } else {
      r.dropped.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (!TakeSlot(r, b)) {
    r.dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  b.events.push_back(std::move(e));
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
      const std::string args =
          e.arg.count > 0 ? fmt::format(",\"args\":{{\"calls\":{}}}", e.arg.count) : "";
      out += fmt::format(
          "{{\"name\":{},\"cat\":{},\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":{},\"dur\":{}{}}}",
          Quote(name), Quote(e.category), pid, e.tid, us(ts), us(e.dur_ns), args);
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
  DATAECHO_RETURN_IF_ERROR(internal::CheckAtLeast("StartTrace: max_events", options.max_events, 1));
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
  r.retired.clear();
  r.max_events = options.max_events;
  r.free_slots.store(options.max_events);
  r.dropped.store(0);
  r.start_ns = internal::NowNanos();
  r.generation.fetch_add(1, std::memory_order_release);
  trace_on.store(true, std::memory_order_release);
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
    const uint64_t gen = r.generation.load();
    events.swap(r.retired);
    for (ThreadBuffer* b : r.threads) TakeEvents(*b, gen, events);
    f = std::exchange(r.file, nullptr);
    path = std::move(r.path);
    start_ns = r.start_ns;
    dropped = r.dropped.load();
    max_events = r.max_events;
  }
  // Thread names first, then by time (each thread's buffer is in order already).
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return (a.phase == 'M') != (b.phase == 'M') ? a.phase == 'M' : a.ts_ns < b.ts_ns;
  });
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
  RecordEvent(Event{name, category, 'X', 0, begin_ns, end_ns - begin_ns, 0, std::move(arg)});
}

void TraceInstant(const char* name, const char* category) {
  if (!TraceEnabled()) return;
  RecordEvent(Event{name, category, 'i', 0, internal::NowNanos(), 0, 0, {}});
}

void TraceCounter(const char* name, double value) {
  if (!TraceEnabled()) return;
  const int64_t now = internal::NowNanos();
  if (!my_slot.Get().Due(name, now)) return;
  RecordEvent(Event{name, "", 'C', 0, now, 0, value, {}});
}

void SetTraceThreadName(const char* name) { thread_name = name; }  // recorded with the next event

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
