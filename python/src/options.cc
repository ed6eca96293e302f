// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The specs of the stage options (pipeline stages and echo placement). Field
// docs are the C++ headers' comments, shortened.
#include "options.h"

#include <pybind11/eval.h>

#include "bindings.h"
#include "status.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace dataecho::python {

void ThrowUnknownOption(std::string_view caller, std::string_view key,
                        const std::vector<std::string>& valid) {
  std::string names;
  for (const std::string& n : valid) names += (names.empty() ? "" : ", ") + n;
  throw py::type_error(std::string(caller) + "() got an unexpected keyword argument '" +
                       std::string(key) + "' (options: " + names + ")");
}

void ThrowBadOptionType(std::string_view caller, std::string_view field, py::handle value,
                        std::string_view what) {
  throw py::type_error(std::string(caller) + "(): option '" + std::string(field) + "' takes " +
                       std::string(what) + ", got " +
                       py::str(py::type::of(value).attr("__name__")).cast<std::string>() + " " +
                       py::repr(value).cast<std::string>());
}

void ThrowOptionOutOfRange(std::string_view caller, std::string_view field, py::handle value,
                           std::string_view range, std::string_view doc) {
  ThrowStatus(absl::InvalidArgumentError(
      std::string(caller) + "(): option '" + std::string(field) +
      "' = " + py::repr(value).cast<std::string>() + " is out of range: it takes an integer in " +
      std::string(range) + "; " + std::string(field) + ": " + std::string(doc)));
}

py::object Autotune() {
  static py::object* autotune = [] {
    py::dict scope;
    py::exec(R"(
class Autotune(int):
    """dataecho.AUTOTUNE: let the stage choose (MapOptions' kAutotune)."""
    __slots__ = ()
    def __repr__(self):
        return "AUTOTUNE"
    __str__ = __repr__
)",
             scope);
    return new py::object(scope["Autotune"](std::numeric_limits<int>::min()));
  }();
  return *autotune;
}

std::string DefaultLiteral(py::handle value) {
  if (PyFloat_Check(value.ptr()) != 0 && !std::isfinite(PyFloat_AsDouble(value.ptr()))) {
    // A signature default must be a literal; no option defaults to one of these.
    throw std::logic_error("option default without a Python literal: " +
                           py::repr(value).cast<std::string>());
  }
  return py::repr(value).cast<std::string>();
}

void KwargsSplit::CheckAllUsed() const {
  for (const auto& [key, value] : kwargs_) {
    const std::string k = py::str(key);
    bool used = false;
    for (const std::string& u : used_) used = used || u == k;
    if (!used) ThrowUnknownOption(caller_, k, valid_);
  }
}

template <>
const OptionsSpec<PrefetchOptions>& Spec<PrefetchOptions>() {
  static const auto* spec =
      &(*new OptionsSpec<PrefetchOptions>("PrefetchOptions"))
           .Add("depth", &PrefetchOptions::depth, "Elements buffered ahead of the consumer. >= 1.")
           .Add("name", &PrefetchOptions::name, "Name shown in stats.");
  return *spec;
}

template <>
const OptionsSpec<MapOptions>& Spec<MapOptions>() {
  static const auto* spec =
      &(*new OptionsSpec<MapOptions>("MapOptions"))
           .AddAutotune("parallelism", &MapOptions::parallelism,
                        "Worker threads; 0 = call the function inline in the consumer's "
                        "thread; AUTOTUNE = measure the function, then inline or workers.")
           .Add("deterministic", &MapOptions::deterministic,
                "True: results in input order; False: in completion order.")
           .AddAutotune("buffer", &MapOptions::buffer,
                        "Results buffered ahead of the consumer beyond the calls in flight; "
                        "AUTOTUNE = two batches of work per worker.")
           .Add("name", &MapOptions::name, "Name shown in stats.");
  return *spec;
}

template <>
const OptionsSpec<EchoOptions>& Spec<EchoOptions>() {
  static const auto* spec =
      &(*new OptionsSpec<EchoOptions>("EchoOptions"))
           .Add("factor", &EchoOptions::factor,
                "Echo factor e: finite, >= 1. Each item is emitted floor(e) times, plus once "
                "more with probability e - floor(e), drawn per item.")
           .Add("seed", &EchoOptions::seed, "Seed of the per-item draw for fractional factors.")
           .Add("name", &EchoOptions::name, "Name shown in stats.");
  return *spec;
}

template <>
const OptionsSpec<AdaptiveEchoOptions>& Spec<AdaptiveEchoOptions>() {
  using O = AdaptiveEchoOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("AdaptiveEchoOptions"))
           .Add("max_factor", &O::max_factor,
                "m: the most emissions of one item, the fresh one included. Finite, in "
                "[1, 1e6]; fractional values are realized per item.")
           .Add("pool_size", &O::pool_size, "k: the most recent items kept for repeats. >= 1.")
           .Add("min_fresh_fraction", &O::min_fresh_fraction,
                "Floor on fresh / emitted, in [0, 1]; 0 = no floor.")
           .Add("seed", &O::seed, "Seed of the per-item budget draw for fractional m.")
           .Add("rate_window", &O::rate_window,
                "Fresh items per window of the upstream-rate estimate. >= 1.")
           .Add("rate_smoothing", &O::rate_smoothing,
                "Weight of a new window in the moving estimate, in (0, 1].")
           .Add("replay_decisions", &O::replay_decisions,
                "Debugging: decisions ('F' fresh / 'R' repeat) to follow instead of asking "
                "the upstream; adaptive again once they run out.")
           .Add("gate_poll", &O::gate_poll,
                "Seconds between checks of the input while a demand gate is closed "
                "(echoed_batches placement 'adaptive').")
           .Add("name", &O::name, "Name shown in stats.");
  return *spec;
}

// A list of gains (AutoPlacementOptions::copy_gains_*) from a sequence of numbers.
template <typename O>
auto SetGains(std::vector<double> O::*field) {
  return [field](O& o, py::handle v) { o.*field = v.cast<std::vector<double>>(); };
}
template <typename O>
auto GetGains(std::vector<double> O::*field) {
  return [field](const O& o) { return py::cast(o.*field); };
}

template <>
const OptionsSpec<AutoPlacementOptions>& Spec<AutoPlacementOptions>() {
  using O = AutoPlacementOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("AutoPlacementOptions"))
           .Add("max_factor", &O::max_factor,
                "The largest echo factor a plan may choose. Finite, in [1, 1e6].")
           .AddCustom(
               "prefer", "str",
               [](O& o, py::handle v) {
                 CheckOk(ParseEchoPrefer(v.cast<std::string>(), &o.prefer));
               },
               [](const O& o) { return py::cast(std::string(EchoPreferName(o.prefer))); },
               "'progress' (the default: the most training progress per second, steps/s "
               "weighted by what a step's copies are worth, copy_gains_*: the soonest target "
               "accuracy), 'quality' (the most example-level placement within 10 % of the "
               "best step rate) or 'speed' (the best step rate).")
           .Add("pipeline_cores", &O::pipeline_cores,
                "Cores the pipeline may use; 0 = the CPUs of the process minus trainer_cores.")
           .Add("trainer_cores", &O::trainer_cores, "Cores the trainer keeps. >= 0.")
           .Add("ram_budget_bytes", &O::ram_budget_bytes,
                "The most bytes echo's buffer may hold. > 0.")
           .Add("decide_every", &O::decide_every, "Batches between two plans. >= 2.")
           .Add("decide_every_rows", &O::decide_every_rows,
                "... or fewer when they hold this many rows (at least min(4, decide_every) "
                "batches); 0 = batches only. >= 0.")
           .Add("seed", &O::seed, "Seed of the per-item draws of fractional factors.")
           .Add("name", &O::name, "Name of the planning stage in stats.")
           .AddCustom("copy_gains_before", "list[float]", SetGains(&O::copy_gains_before),
                      GetGains(&O::copy_gains_before),
                      "G(e) = F_1 / F_e at e = 2, 3, ... for echo before augmentation: the "
                      "fresh examples to a target without echo over those at factor e "
                      "(prefer 'progress'; Fashion-MNIST's by default).")
           .AddCustom("copy_gains_after", "list[float]", SetGains(&O::copy_gains_after),
                      GetGains(&O::copy_gains_after), "G(e) for echo after augmentation.")
           .AddCustom("copy_gains_batch", "list[float]", SetGains(&O::copy_gains_batch),
                      GetGains(&O::copy_gains_batch), "G(e) for batch echo.")
           .Add("copy_value_before", &O::copy_value_before,
                "If set, in [0, 1]: every copy echoed before augmentation worth this much of a "
                "fresh example, G(e) = 1 + (e - 1) v, instead of copy_gains_before. None: not "
                "set.")
           .Add("copy_value_after", &O::copy_value_after,
                "If set: G(e) = 1 + (e - 1) v after augmentation. None: not set.")
           .Add("copy_value_batch", &O::copy_value_batch,
                "If set: G(e) = 1 + (e - 1) v for batch echo. None: not set.")
           .Add("loss_gap_scale", &O::loss_gap_scale,
                "Loss feedback (Pipeline.report_loss): a copy is worth v = 1 - loss_gap_scale "
                "x (1 - copy loss / fresh loss), in [0, 1], of a fresh example. Finite, > 0.")
           .Add("loss_min_rows", &O::loss_min_rows,
                "Rows a window's loss reports must cover before the planner learns from them. "
                ">= 1.");
  return *spec;
}

template <>
const OptionsSpec<AutoEchoOptions>& Spec<AutoEchoOptions>() {
  using O = AutoEchoOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("AutoEchoOptions"))
           .AddNested("adaptive", &O::adaptive,
                      "The warm-up's adaptive echo; adaptive.max_factor is also the largest "
                      "factor that may be chosen.")
           .Add("warmup", &O::warmup, "Elements emitted (adaptively) before the factor is fixed.")
           .Add("name", &O::name, "Name shown in stats.");
  return *spec;
}

template <>
const OptionsSpec<ShuffleOptions>& Spec<ShuffleOptions>() {
  static const auto* spec =
      &(*new OptionsSpec<ShuffleOptions>("ShuffleOptions"))
           .Add("buffer_size", &ShuffleOptions::buffer_size, "Elements held. >= 1 (1 = none).")
           .Add("seed", &ShuffleOptions::seed, "Seed of the draws.")
           .Add("max_bytes", &ShuffleOptions::max_bytes,
                "Cap on payload bytes held (RESOURCE_EXHAUSTED beyond it); 0 = no cap.")
           .Add("name", &ShuffleOptions::name, "Name shown in stats.");
  return *spec;
}

template <>
const OptionsSpec<BatchOptions>& Spec<BatchOptions>() {
  static const auto* spec =
      &(*new OptionsSpec<BatchOptions>("BatchOptions"))
           .Add("batch_size", &BatchOptions::batch_size,
                "Rows per batch, in [1, 2**31 - 1] (BatchOptions::kMaxBatchSize).")
           .Add("drop_remainder", &BatchOptions::drop_remainder,
                "Drop a final batch with fewer than batch_size rows.")
           .Add("cast", &BatchOptions::cast,
                "Output dtype of every component: None keeps the input dtype; 'float32', "
                "'float16' or 'bfloat16' converts.")
           .Add("scale", &BatchOptions::scale,
                "Normalization with the cast: y = (x * scale - mean[c]) / stddev[c].")
           .Add("mean", &BatchOptions::mean, "Per channel (or one value); empty = 0.")
           .Add("stddev", &BatchOptions::stddev, "Per channel (or one value); empty = 1.")
           .Add("alignment", &BatchOptions::alignment, "Alignment of every fused buffer, bytes.")
           .Add("max_bytes", &BatchOptions::max_bytes,
                "Cap on one batch's buffers (ResourceExhaustedError above it); 0 = "
                "DefaultMemoryCap(), half of the memory the process may use.")
           .Add("threads", &BatchOptions::threads,
                "Threads that copy and convert the rows of one batch, the caller's included "
                "(1..64); used for batches of at least parallel_min_rows rows.")
           .Add("parallel_min_rows", &BatchOptions::parallel_min_rows,
                "Smallest batch whose rows are split among the threads.")
           .Add("name", &BatchOptions::name, "Name shown in stats.");
  return *spec;
}

template <>
const OptionsSpec<ThrottleOptions>& Spec<ThrottleOptions>() {
  static const auto* spec =
      &(*new OptionsSpec<ThrottleOptions>("ThrottleOptions"))
           .Add("latency", &ThrottleOptions::latency, "Added delay per element, seconds.")
           .Add("bytes_per_second", &ThrottleOptions::bytes_per_second, "Bandwidth cap; 0 = none.")
           .Add("spin", &ThrottleOptions::spin,
                "The last part of every wait is a busy-wait of at most this long, seconds.")
           .Add("catch_up", &ThrottleOptions::catch_up,
                "A request this soon after the previous scheduled release continues the "
                "schedule, seconds.")
           .Add("min_sleep", &ThrottleOptions::min_sleep,
                "Release without sleeping while the schedule is less than this far ahead, "
                "seconds; 0 = sleep for every element.")
           .Add("name", &ThrottleOptions::name, "Name shown in stats.");
  return *spec;
}

template <>
const OptionsSpec<EchoedBatchesOptions>& Spec<EchoedBatchesOptions>() {
  using O = EchoedBatchesOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("EchoedBatchesOptions"))
           .Add("placement", &O::placement,
                "Where echo goes: 'before_augment' (example echoing, then augmentation), "
                "'after_augment', 'batch' (whole batches after Batch), 'adaptive' or 'auto' "
                "(placement and factor chosen from measured costs: auto_placement).")
           .AddNested("echo", &O::echo, "The fixed placements' echo.")
           .AddNested("adaptive", &O::adaptive,
                      "Placement 'adaptive': its echo (max_factor, pool_size, seed, ...).")
           .Add("gate_below", &O::gate_below,
                "Placement 'adaptive': repeat only while fewer than this many batches wait in "
                "the final prefetch; 0 = no gate.")
           .AddNested("augment", &O::augment, "The Map that runs the augmentation.")
           .AddNested("shuffle", &O::shuffle, "The shuffle after echo.")
           .AddNested("batch", &O::batch, "The batch stage.")
           .AddNested("prefetch", &O::prefetch, "The final prefetch (the consumer's queue).")
           .AddNested("auto_placement", &O::auto_placement,
                      "Placement 'auto': max_factor, prefer ('quality' | 'speed' | 'progress'), "
                      "pipeline_cores, ...")
           .Add("diagnostics", &O::diagnostics,
                "Fixed placements: add an echo_diagnostics stage at the top (duplicate rows per "
                "batch, distance between copies, fresh rows per step).");
  return *spec;
}

void RegisterOptionClasses(py::module_& m) {
  m.attr("AUTOTUNE") = Autotune();
  // Nested options first: the docs of the others show their defaults.
  Spec<EchoOptions>().BindClass(m, "EchoOptions", "Options of Pipeline.echo().");
  Spec<AdaptiveEchoOptions>().BindClass(m, "AdaptiveEchoOptions",
                                        "Options of Pipeline.adaptive_echo().");
  Spec<AutoEchoOptions>().BindClass(m, "AutoEchoOptions", "Options of Pipeline.auto_echo().");
  Spec<AutoPlacementOptions>().BindClass(m, "AutoPlacementOptions",
                                         "Options of echoed_batches(placement='auto').");
  Spec<MapOptions>().BindClass(m, "MapOptions", "Options of Pipeline.map().");
  Spec<PrefetchOptions>().BindClass(m, "PrefetchOptions", "Options of Pipeline.prefetch().");
  Spec<ShuffleOptions>().BindClass(m, "ShuffleOptions", "Options of Pipeline.shuffle().");
  Spec<BatchOptions>().BindClass(m, "BatchOptions", "Options of Pipeline.batch().");
  Spec<ThrottleOptions>().BindClass(m, "ThrottleOptions", "Options of Pipeline.throttle().");
  Spec<EchoedBatchesOptions>().BindClass(m, "EchoedBatchesOptions",
                                         "Options of Pipeline.echoed_batches().");
  Spec<RetryOptions>().BindClass(m, "RetryOptions", "ObjectStore(retry=...).");
  Spec<HttpOptions>().BindClass(m, "HttpOptions", "ObjectStore(http=...).");
  Spec<GcsOptions>().BindClass(m, "GcsOptions", "ObjectStore(gcs=...).");
  Spec<S3Options>().BindClass(m, "S3Options", "ObjectStore(s3=...).");
  Spec<JpegCropOptions>().BindClass(m, "JpegCropOptions", "RandomResizedCrop(jpeg=...).");
}

}  // namespace dataecho::python
