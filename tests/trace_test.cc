// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The pipeline timeline (trace.h): a traced run writes Chrome trace-event
// JSON that parses; the stages and threads appear (the consumer's
// Pipeline::Next, a Prefetch's producer, a parallel Map's workers, the waits
// on inputs naming the stage waited on, the counters); spans on one thread
// nest (never overlap partially); the cap drops events and says so; one
// trace at a time; nothing is recorded when off.
#include "dataecho/trace.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dataecho/pipeline.h"
#include "gtest/gtest.h"
#include "internal/json_reader.h"
#include "support/temp_files.h"
#include "testing/synthetic_images.h"

namespace dataecho {
namespace {

using ::dataecho::testing::ReadFileOrDie;
using ::dataecho::testing::TempDir;

Pipeline<Batch> Build() {
  return FromVector(testing::SyntheticImages(2000, 4, 4))
      .Map([](Example e) -> absl::StatusOr<Example> { return e; }, {.parallelism = 2})
      .Prefetch({.depth = 16})
      .Echo({.factor = 2.0, .seed = 1})
      .Shuffle({.buffer_size = 64, .seed = 2})
      .Batch({.batch_size = 32});
}

internal::JsonValue ParseTrace(const std::string& path) {
  absl::StatusOr<internal::JsonValue> json = internal::ParseJson(ReadFileOrDie(path));
  EXPECT_TRUE(json.ok()) << json.status();
  return json.ok() ? *json : internal::JsonValue();
}

double Num(const internal::JsonValue& v, std::string_view field) {
  return std::stod(v.String(field));
}

TEST(TraceTest, ARunShowsEveryThreadAndStageWithNestedSpans) {
  TempDir tmp;
  const std::string path = tmp.File("trace.json");
  ASSERT_TRUE(StartTrace(path).ok());
  EXPECT_TRUE(TraceEnabled());
  Pipeline<Batch> p = Build();
  int64_t batches = 0;
  for (absl::StatusOr<std::optional<Batch>> b = p.Next(); b.ok() && b->has_value(); b = p.Next()) {
    ++batches;
  }
  ASSERT_TRUE(p.SaveState().ok());
  ASSERT_TRUE(StopTrace().ok());
  EXPECT_FALSE(TraceEnabled());
  EXPECT_EQ(batches, 125);

  const internal::JsonValue json = ParseTrace(path);
  const internal::JsonValue* events = json.Find("traceEvents");
  ASSERT_NE(events, nullptr);
  ASSERT_EQ(events->type, internal::JsonValue::Type::kArray);
  EXPECT_EQ(json.Find("otherData")->String("dropped_events"), "0");

  std::map<std::string, std::string> thread_names;  // tid -> name
  std::set<std::string> names, counters;
  struct Span {
    double begin, end;
    std::string name;
  };
  std::map<std::string, std::vector<Span>> spans;  // by tid
  for (const internal::JsonValue& e : events->items) {
    const std::string ph = e.String("ph"), tid = e.String("tid");
    ASSERT_FALSE(tid.empty());
    ASSERT_FALSE(e.String("pid").empty());
    if (ph == "M") {
      thread_names[tid] = e.Find("args")->String("name");
      continue;
    }
    names.insert(e.String("name"));
    if (ph == "C") counters.insert(e.String("name"));
    if (ph == "X") {
      const double ts = Num(e, "ts"), dur = Num(e, "dur");
      EXPECT_GE(ts, 0);
      EXPECT_GE(dur, 0);
      spans[tid].push_back({ts, ts + dur, e.String("name")});
    }
  }
  // Every thread that recorded has a name; the library's threads name themselves.
  std::set<std::string> thread_kinds;
  for (const auto& [tid, name] : thread_names) thread_kinds.insert(name);
  EXPECT_TRUE(thread_kinds.count("prefetch")) << ::testing::PrintToString(thread_kinds);
  EXPECT_TRUE(thread_kinds.count("map worker")) << ::testing::PrintToString(thread_kinds);
  for (const auto& [tid, s] : spans) EXPECT_TRUE(thread_names.count(tid)) << tid;
  // The consumer's pulls and steps, the Map's calls, the checkpoint's save.
  for (const char* n : {"Pipeline::Next", "consumer step", "map call", "save state"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }
  // Waits name the stage waited on.
  EXPECT_TRUE(std::any_of(names.begin(), names.end(), [](const std::string& n) {
    return n.starts_with("wait on ") && n.find("Stage") != std::string::npos;
  })) << ::testing::PrintToString(names);
  EXPECT_TRUE(counters.count("prefetch queue"));
  EXPECT_TRUE(counters.count("echo factor"));
  // On each thread, two spans are disjoint or one holds the other.
  for (auto& [tid, s] : spans) {
    std::sort(s.begin(), s.end(), [](const Span& a, const Span& b) {
      return a.begin < b.begin || (a.begin == b.begin && a.end > b.end);
    });
    std::vector<const Span*> open;  // the spans holding the current one
    for (const Span& span : s) {
      // (Times are printed to the nanosecond: adjacent spans may differ by a rounding.)
      while (!open.empty() && open.back()->end <= span.begin + 0.002) open.pop_back();
      if (!open.empty()) {
        EXPECT_LE(span.end, open.back()->end + 0.002)
            << thread_names[tid] << ": " << span.name << " [" << span.begin << ", " << span.end
            << "] overlaps " << open.back()->name << " [" << open.back()->begin << ", "
            << open.back()->end << "] partially";
      }
      open.push_back(&span);
    }
  }
}

TEST(TraceTest, TheCapDropsEventsAndSaysSo) {
  TempDir tmp;
  ASSERT_TRUE(StartTrace(tmp.File("t.json"), {.max_events = 50}).ok());
  for (int i = 0; i < 200; ++i) TraceInstant("mark", "test");
  ASSERT_TRUE(StopTrace().ok());
  const internal::JsonValue json = ParseTrace(tmp.File("t.json"));
  EXPECT_EQ(json.Find("traceEvents")->items.size(), 50u);
  EXPECT_EQ(json.Find("otherData")->String("dropped_events"), "151");  // 200 marks + 1 name
}

TEST(TraceTest, OneTraceAtATimeAndBadArgumentsAreRefused) {
  TempDir tmp;
  EXPECT_EQ(StopTrace().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(StartTrace("").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(StartTrace(tmp.File("t.json"), {.max_events = 0}).code(),
            absl::StatusCode::kInvalidArgument);
  absl::Status unwritable = StartTrace(tmp.File("no/such/dir/t.json"));
  EXPECT_EQ(unwritable.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(unwritable.message().find("no/such/dir"), std::string::npos);
  ASSERT_TRUE(StartTrace(tmp.File("t.json")).ok());
  EXPECT_EQ(StartTrace(tmp.File("u.json")).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(StopTrace().ok());
}

TEST(TraceTest, NothingIsRecordedWhenOff) {
  TempDir tmp;
  EXPECT_FALSE(TraceEnabled());
  {
    Pipeline<Batch> p = Build();
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(p.Next().ok());
  }
  // A trace started now holds only what happens after it.
  ASSERT_TRUE(StartTrace(tmp.File("t.json")).ok());
  ASSERT_TRUE(StopTrace().ok());
  const internal::JsonValue json = ParseTrace(tmp.File("t.json"));
  EXPECT_TRUE(json.Find("traceEvents")->items.empty());
}

}  // namespace
}  // namespace dataecho
