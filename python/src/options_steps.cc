// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The specs of the options of the builder steps beyond echoing: filter,
// cache, zip, interleave, padded_batch and mix (docs/builder.md, docs/mix.md). Field docs are
// the C++ headers' comments, shortened.
#include <cstdint>
#include <string>
#include <vector>

#include "options.h"
#include "status.h"

namespace dataecho::python {

template <>
const OptionsSpec<FilterOptions>& Spec<FilterOptions>() {
  return NameOnlySpec<FilterOptions>("FilterOptions");
}

template <>
const OptionsSpec<CacheOptions>& Spec<CacheOptions>() {
  static const auto* spec =
      &(*new OptionsSpec<CacheOptions>("CacheOptions"))
           .Add("max_bytes", &CacheOptions::max_bytes,
                "Cap on the payload bytes kept (ResourceExhaustedError beyond it); 0 = no cap.")
           .Add("name", &CacheOptions::name, "Name shown in stats.");
  return *spec;
}

template <>
const OptionsSpec<ZipOptions>& Spec<ZipOptions>() {
  return NameOnlySpec<ZipOptions>("ZipOptions");
}

template <>
const OptionsSpec<InterleaveStageOptions>& Spec<InterleaveStageOptions>() {
  using O = InterleaveStageOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("InterleaveStageOptions"))
           .Add("cycle_length", &O::cycle_length, "Pipelines open at a time. >= 1.")
           .Add("block_length", &O::block_length,
                "Consecutive elements taken from one pipeline before moving to the next. >= 1.")
           .Add("name", &O::name, "Name shown in stats.");
  return *spec;
}

template <>
const OptionsSpec<PaddedBatchOptions>& Spec<PaddedBatchOptions>() {
  using O = PaddedBatchOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("PaddedBatchOptions"))
           .Add("batch_size", &O::batch_size, "Rows per batch, in [1, 2**31 - 1].")
           .Add("drop_remainder", &O::drop_remainder,
                "Drop a final batch with fewer than batch_size rows.")
           .AddCustom(
               "padded_shapes", "list[list[int] | None]",
               [](O& o, py::handle v) {
                 if (!py::isinstance<py::sequence>(v) || py::isinstance<py::str>(v)) {
                   throw py::cast_error();  // TypeError naming the field
                 }
                 o.padded_shapes.clear();
                 for (const py::handle entry : py::reinterpret_borrow<py::sequence>(v)) {
                   Shape shape;
                   if (!entry.is_none()) {
                     for (const int64_t d : entry.cast<std::vector<int64_t>>()) shape.push_back(d);
                   }
                   o.padded_shapes.push_back(std::move(shape));
                 }
               },
               [](const O& o) {
                 py::list out;
                 for (const Shape& s : o.padded_shapes) {
                   out.append(py::cast(std::vector<int64_t>(s.begin(), s.end())));
                 }
                 return py::object(std::move(out));
               },
               "Per component: the shape to pad to (its rank must be the rows'), -1 = the "
               "longest in the batch. Components past the end, or with None or [], pad every "
               "dimension to the longest.")
           .Add("padding_values", &O::padding_values,
                "Per component: the value of padding cells (converted to its dtype); 0 past "
                "the end.")
           .Add("masks", &O::masks,
                "Append a uint8 mask per component: components[n + i], 1 where a row has data.")
           .Add("lengths", &O::lengths,
                "Append each row's unpadded shape per component: int64 [rows, rank], after "
                "the masks.")
           .Add("alignment", &O::alignment, "Alignment of every buffer, bytes.")
           .Add("max_bytes", &O::max_bytes,
                "Cap on one batch's buffers (ResourceExhaustedError above it); 0 = "
                "DefaultMemoryCap(), half of the memory the process may use.")
           .Add("name", &O::name, "Name shown in stats.");
  return *spec;
}

template <>
const OptionsSpec<MixOptions>& Spec<MixOptions>() {
  using O = MixOptions;
  static const auto* spec =
      &(*new OptionsSpec<O>("MixOptions"))
           .AddCustom(
               "weights", "list[float] | None",
               [](O& o, py::handle v) {
                 if (v.is_none()) {
                   o.weights.clear();
                   return;
                 }
                 if (!py::isinstance<py::sequence>(v) || py::isinstance<py::str>(v)) {
                   throw py::cast_error();  // TypeError naming the field
                 }
                 o.weights = v.cast<std::vector<double>>();
               },
               [](const O& o) -> py::object {
                 if (o.weights.empty()) return py::none();
                 return py::cast(o.weights);
               },
               "One weight per pipeline, finite and >= 0, not all 0; normalized to sum to 1. "
               "None: all alike.")
           .Add("seed", &O::seed, "Seed of the draws (keyed by seed, epoch and position).")
           .AddCustom(
               "on_empty", "str",
               [](O& o, py::handle v) {
                 CheckOk(ParseMixOnEmpty(v.cast<std::string>(), &o.on_empty));
               },
               [](const O& o) { return py::cast(std::string(MixOnEmptyName(o.on_empty))); },
               "When the drawn pipeline has ended: 'stop_on_first_empty' (the mix ends), "
               "'continue_renormalized' (the others go on, renormalized; every element once "
               "per epoch) or 'restart_input' (it starts over as its next epoch; the mix ends "
               "once every pipeline ended once).")
           .AddCustom(
               "weights_of", "str",
               [](O& o, py::handle v) {
                 CheckOk(ParseMixWeightsOf(v.cast<std::string>(), &o.weights_of));
               },
               [](const O& o) { return py::cast(std::string(MixWeightsOfName(o.weights_of))); },
               "'emitted': the weights are shares of the elements emitted, fresh or echoed; "
               "'fresh': of the fresh items (each pipeline's realized echo factor is divided "
               "out).")
           .Add("name", &O::name, "Name shown in stats.");
  return *spec;
}

}  // namespace dataecho::python
