// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Pipeline stats as Python dicts (Pipeline.stats()) and back:
// dataecho.format_stats(stages) prints the table and verdict of a list of
// such dicts, e.g. the stats of several DataLoader workers combined
// (dataecho.torch.DataLoader.format_stats()).
#include "stats.h"

#include <pybind11/stl.h>

#include <string>

#include "absl/time/time.h"
#include "status.h"

namespace dataecho::python {
namespace {

// The keys of a stats dict that are StageStats' own fields.
bool IsField(const std::string& key) {
  return key == "stage" || key == "elements" || key == "bytes" || key == "input_wait_s" ||
         key == "consumer_wait_s" || key == "threads" || key == "decisions";
}

StageStats StatsFromDict(const py::handle& item, size_t index) {
  if (!py::isinstance<py::dict>(item)) {
    ThrowStatus(absl::InvalidArgumentError(
        "format_stats: stage " + std::to_string(index) + " is a " +
        std::string(py::str(item.get_type().attr("__name__"))) + ", not a dict"));
  }
  const auto d = py::reinterpret_borrow<py::dict>(item);
  auto number = [&](const char* key) -> double {
    if (!d.contains(key)) return 0;
    try {
      return d[key].cast<double>();
    } catch (const py::cast_error&) {
      ThrowStatus(absl::InvalidArgumentError("format_stats: stage " + std::to_string(index) +
                                             ": '" + key + "' is not a number"));
    }
  };
  StageStats s;
  s.name = d.contains("stage") ? std::string(py::str(d["stage"])) : "stage";
  s.elements = static_cast<int64_t>(number("elements"));
  s.bytes = static_cast<int64_t>(number("bytes"));
  s.input_wait = absl::Seconds(number("input_wait_s"));
  s.consumer_wait = absl::Seconds(number("consumer_wait_s"));
  s.threads = static_cast<int>(number("threads"));
  for (const auto& [k, v] : d) {
    const std::string key = py::str(k);
    if (IsField(key)) continue;
    if (py::isinstance<py::bool_>(v) ||
        !(py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)))
      continue;  // not a figure
    s.extra.emplace_back(key, v.cast<double>());
  }
  if (d.contains("decisions")) {
    for (const py::handle& n : d["decisions"]) s.notes.push_back(py::str(n));
  }
  return s;
}

std::vector<StageStats> StatsFromList(const py::iterable& stages) {
  std::vector<StageStats> out;
  for (const py::handle& item : stages) out.push_back(StatsFromDict(item, out.size()));
  return out;
}

}  // namespace

py::dict StatsDict(const StageStats& s) {
  py::dict d;
  d["stage"] = s.name;
  d["elements"] = s.elements;
  d["bytes"] = s.bytes;
  d["input_wait_s"] = absl::ToDoubleSeconds(s.input_wait);
  d["consumer_wait_s"] = absl::ToDoubleSeconds(s.consumer_wait);
  d["threads"] = s.threads;
  for (const auto& [key, value] : s.extra) d[py::str(key)] = value;
  if (!s.notes.empty()) {  // auto echo's decisions (stats.h: notes)
    py::list notes;
    for (const std::string& n : s.notes) notes.append(n);
    d["decisions"] = notes;
  }
  return d;
}

void RegisterStats(py::module_& m) {
  m.def(
      "format_stats",
      [](const py::iterable& stages) { return FormatStatsTable(StatsFromList(stages)); },
      py::arg("stages"),
      "The stats table and its verdict lines (as Pipeline.format_stats()) of a list of stage "
      "dicts as Pipeline.stats() gives them, source first: e.g. the combined stats of several "
      "DataLoader workers (dataecho.torch.DataLoader.stats()).");
}

}  // namespace dataecho::python
