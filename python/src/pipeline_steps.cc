// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The builder steps beyond echoing (docs/builder.md): filter, cache, zip,
// interleave, padded_batch, unbatch; and dataecho.interleave() and dataecho.mix() over
// pipelines already built. (No module-level zip: `from dataecho import *` would hide Python's.)
//
// Python has no std::pair element: zip() gives one Example per pair, the
// components of the first element then those of the second (a Record counts
// as one uint8 [size] component), as the C++ docs suggest ("a Map over the
// pair").
#include <pybind11/stl.h>

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bind_stage.h"
#include "elements.h"
#include "options.h"
#include "py_pipeline.h"
#include "status.h"

namespace dataecho::python {

template <>
const OptionsSpec<UnbatchOptions>& Spec<UnbatchOptions>() {
  return NameOnlySpec<UnbatchOptions>("UnbatchOptions");
}

namespace {

std::string Describe(const char* what, const py::handle& fn) {
  return std::string(what) + " " +
         py::str(py::getattr(fn, "__qualname__", py::repr(fn))).cast<std::string>();
}

// TypeError unless `fn` is callable: "<method>(): <what> must be callable".
void CheckCallable(const char* method, const char* what, const py::handle& fn) {
  if (PyCallable_Check(fn.ptr()) == 0) {
    throw py::type_error(absl::StrCat(method, "(): ", what, " must be callable, got ",
                                      py::repr(fn).cast<std::string>()));
  }
}

// A Python predicate for filter(): its truth value decides; the GIL is taken
// around each call only.
template <typename T>
typename FilterStage<T>::Predicate PythonPredicate(py::object fn) {
  const std::string what = Describe("filter predicate", fn);
  GilObject f(std::move(fn));
  return [f, what](const T& x) -> absl::StatusOr<bool> {
    py::gil_scoped_acquire gil;
    try {
      const py::object verdict = f.get()(py::cast(x));
      const int truth = PyObject_IsTrue(verdict.ptr());
      if (truth < 0) throw py::error_already_set();
      return truth != 0;
    } catch (py::error_already_set& e) {
      return StatusFromPythonError(e, what.c_str());
    }
  };
}

// An element of a zipped pair as an Example.
Example AsExample(Example e) { return e; }
Example AsExample(const Record& r) {
  Example e;
  e.components.push_back(
      *Tensor::Make(DType::kUInt8, {static_cast<int64_t>(r.data.size())}, r.data));
  e.source_index = r.source_index;
  e.repeat_index = r.repeat_index;
  e.epoch = r.epoch;
  return e;
}

// The Example of a zipped pair: a's components then b's; the label of the
// first that is an Example; a's source index; the later repeat and epoch.
template <typename A, typename B>
Example Merge(std::pair<A, B> ab) {
  Example out = AsExample(std::move(ab.first));
  Example b = AsExample(std::move(ab.second));
  for (Tensor& t : b.components) out.components.push_back(std::move(t));
  if (!std::is_same_v<A, Example>) out.label = b.label;
  out.repeat_index = std::max(out.repeat_index, b.repeat_index);
  out.epoch = std::max(out.epoch, b.epoch);
  return out;
}

std::shared_ptr<PipelineHandle> Zip(PipelineHandle& a, PipelineHandle& b, const ZipOptions& o) {
  if (&a == &b) throw py::value_error("zip(): a pipeline cannot be zipped with itself");
  for (const PipelineHandle* p : {&a, &b}) {
    if (std::string(p->element_type()) == "Batch") {
      ThrowWrongElement("zip", "Record or Example", "Batch", ": zip before batch()");
    }
  }
  AnyPipeline second = b.TakeForBuilder("zip");
  return Then(a, "zip", [&](auto first) -> AnyPipeline {
    using A = typename std::decay_t<decltype(first)>::value_type;
    return std::visit(
        [&](auto other) -> AnyPipeline {
          using B = typename std::decay_t<decltype(other)>::value_type;
          if constexpr (std::is_same_v<A, Batch> || std::is_same_v<B, Batch>) {
            ThrowWrongElement("zip", "Record or Example", "Batch");
          } else {
            MapOptions merge;
            merge.name = o.name + ".merge";
            return std::move(first)
                .Zip(std::move(other), o)
                .Map([](std::pair<A, B> ab) { return Merge(std::move(ab)); }, merge);
          }
        },
        std::move(second));
  });
}

int TypeIndexOf(const std::string& name) {
  if (name == "Record") return 0;
  if (name == "Example") return 1;
  if (name == "Batch") return 2;
  ThrowStatus(absl::InvalidArgumentError(
      "interleave(): element_type must be 'Record', 'Example' or 'Batch', got '" + name + "'"));
}

using Pipelines = std::vector<std::shared_ptr<PipelineHandle>>;

// make(std::vector<Pipeline<T>>) over `pipelines`, which `method` consumes:
// TypeError unless they all yield one element type T.
template <typename F>
std::shared_ptr<PipelineHandle> OfOneElementType(const char* method, const Pipelines& pipelines,
                                                 F make) {
  const std::string type = pipelines[0]->element_type();
  for (const auto& p : pipelines) {
    if (type != p->element_type()) {
      throw py::type_error(absl::StrCat(method,
                                        "(): the pipelines must yield one element type, got ", type,
                                        "s and ", p->element_type(), "s"));
    }
  }
  std::vector<AnyPipeline> taken;
  for (const auto& p : pipelines) taken.push_back(p->TakeForBuilder(method));
  auto all = [&](auto tag) {
    using T = decltype(tag);
    std::vector<Pipeline<T>> typed;
    for (AnyPipeline& a : taken) typed.push_back(std::get<Pipeline<T>>(std::move(a)));
    return MakeHandle(make(std::move(typed)));
  };
  const int index = TypeIndexOf(type);
  if (index == 0) return all(Record());
  if (index == 1) return all(Example());
  return all(Batch());
}

// Binds dataecho.<name>(pipelines, **the keywords of O): check(pipelines,
// options) raises for what make cannot take, then make(std::vector<Pipeline<T>>,
// options) over the pipelines (consumed), which all yield one element type T.
template <typename O, typename Check, typename Make>
void BindOverPipelines(py::module_& m, const char* name, const char* doc, Check check, Make make) {
  DefSigned(
      m, Signature(name).Arg("pipelines").Options<O>(), doc,
      [name, check, make](const Pipelines& pipelines, const py::kwargs& kwargs) {
        const O options = Spec<O>().FromKwargs(kwargs, name);
        check(pipelines, options);
        return OfOneElementType(name, pipelines,
                                [&](auto typed) { return make(std::move(typed), options); });
      },
      py::arg("pipelines"));
}

// interleave(fn): fn(element) returns a dataecho.Pipeline of U, called with
// the GIL on the consumer's thread.
template <typename T, typename U>
Pipeline<U> InterleaveWith(Pipeline<T> p, GilObject fn, std::string what,
                           const InterleaveStageOptions& o) {
  return std::move(p).Interleave(
      [fn, what](T x) -> absl::StatusOr<StagePtr<U>> {
        py::gil_scoped_acquire gil;
        try {
          const py::object out = fn.get()(py::cast(std::move(x)));
          if (!py::isinstance<PipelineHandle>(out)) {
            return absl::InvalidArgumentError(
                absl::StrCat(what, " returned ", py::repr(out).cast<std::string>(),
                             ", expected a dataecho.Pipeline of ", ElementName<U>(), "s"));
          }
          AnyPipeline built = out.cast<PipelineHandle&>().TakeForBuilder("interleave");
          if (auto* typed = std::get_if<Pipeline<U>>(&built)) return std::move(*typed).Release();
          return absl::InvalidArgumentError(absl::StrCat(
              what, " returned a pipeline of ", out.cast<PipelineHandle&>().element_type(),
              "s; interleave(element_type='", ElementName<U>(), "') expects one of ",
              ElementName<U>(), "s"));
        } catch (py::error_already_set& e) {
          return StatusFromPythonError(e, what.c_str());
        } catch (const std::exception& e) {
          return absl::InvalidArgumentError(absl::StrCat(what, ": ", e.what()));
        }
      },
      o);
}

void BindFilterCache(PipelineClass& cls) {
  DefSigned(
      cls, Signature("filter").Arg("self").Arg("predicate").Options<FilterOptions>(),
      "Keeps the elements for which predicate(element) is true, in order (C++ Filter). "
      "`predicate` is a Python callable taking a Record, Example or Batch; it runs in the "
      "pipeline's thread that pulls this stage, taking the GIL for each call only. Its "
      "exception is raised by next() as it was raised, at that element's position. Stats: "
      "'dropped'.",
      [](PipelineHandle& self, const py::object& predicate, const py::kwargs& kwargs) {
        const FilterOptions options = Spec<FilterOptions>().FromKwargs(kwargs, "filter");
        CheckCallable("filter", "predicate", predicate);
        return Then(self, "filter", [&](auto p) -> AnyPipeline {
          using T = typename decltype(p)::value_type;
          return std::move(p).Filter(PythonPredicate<T>(predicate), options);
        });
      },
      py::arg("predicate"));
  BindStage<CacheOptions>(
      cls, "cache",
      "Reads the input once and keeps its elements (handles: payloads are shared); when a "
      "repeat() above starts a new epoch, replays them from memory instead of reading "
      "again. Put it after the expensive, deterministic work (reading, decoding), before the "
      "random work. Over max_bytes: ResourceExhaustedError (all or nothing).",
      [](auto p, const CacheOptions& o) { return std::move(p).Cache(o); });
}

void BindZipInterleave(py::module_& m, PipelineClass& cls) {
  constexpr char kZipDoc[] =
      "Pairs the elements of two pipelines, one of each per step, until either ends (C++ "
      "Zip), as one Example: the first's components then the second's (a Record gives one "
      "uint8 [size] component), the label of the first that is an Example, the first's "
      "source index. Both are consumed. (C++ dataecho::Zip(a, b) is a.zip(b) here.)";
  DefSigned(
      cls, Signature("zip").Arg("self").Arg("other").Options<ZipOptions>(), kZipDoc,
      [](PipelineHandle& self, PipelineHandle& other, const py::kwargs& kwargs) {
        return Zip(self, other, Spec<ZipOptions>().FromKwargs(kwargs, "zip"));
      },
      py::arg("other"));
  DefSigned(
      cls,
      Signature("interleave")
          .Arg("self")
          .Arg("fn")
          .Options<InterleaveStageOptions>()
          .Keyword("element_type=None"),
      "tf.data's interleave: fn(element) returns a dataecho.Pipeline; cycle_length of them "
      "are open at a time and block_length elements are taken from each in turn (C++ "
      "Interleave). The order depends only on the inputs. `fn` runs with the GIL on the "
      "thread that pulls this stage. element_type: what the pipelines fn returns yield "
      "('Record', 'Example', 'Batch'; None: the same as this one's).",
      [](PipelineHandle& self, const py::object& fn, const py::kwargs& kwargs) {
        KwargsSplit split(kwargs, "interleave");
        const py::object element_type = split.Pop("element_type");
        const auto options = split.Take<InterleaveStageOptions>();
        split.CheckAllUsed();
        CheckCallable("interleave", "fn", fn);
        const int out = TypeIndexOf(element_type.is_none() ? std::string(self.element_type())
                                                           : element_type.cast<std::string>());
        const std::string what = Describe("interleave function", fn);
        const GilObject f(fn);
        return Then(self, "interleave", [&](auto p) -> AnyPipeline {
          using T = typename decltype(p)::value_type;
          if constexpr (std::is_same_v<T, Batch>) {
            ThrowWrongElement("interleave", "Record or Example", "Batch");
          } else {
            if (out == 0) return InterleaveWith<T, Record>(std::move(p), f, what, options);
            if (out == 1) return InterleaveWith<T, Example>(std::move(p), f, what, options);
            return InterleaveWith<T, Batch>(std::move(p), f, what, options);
          }
        });
      },
      py::arg("fn"));
  BindOverPipelines<InterleaveStageOptions>(
      m, "interleave",
      "Pipelines already built, all of one element type, read round-robin: cycle_length of "
      "them open at a time, block_length elements from each in turn (C++ "
      "dataecho::Interleave). End each in a prefetch() to read them in parallel. They are "
      "consumed.",
      [](const Pipelines& pipelines, const InterleaveStageOptions&) {
        if (pipelines.empty()) throw py::value_error("interleave(): no pipelines given");
      },
      [](auto typed, const InterleaveStageOptions& o) { return Interleave(std::move(typed), o); });
}

// dataecho.mix(pipelines, ...): the same element type for all; consumed.
void BindMix(py::module_& m) {
  BindOverPipelines<MixOptions>(
      m, "mix",
      "Mixes pipelines of one element type with weights (C++ dataecho::Mix; docs/mix.md): "
      "each element comes from pipeline i with probability weights[i], drawn from (seed, "
      "epoch, position) only, so the order is deterministic and a state holds each "
      "pipeline's state and the position. Each pipeline may carry its own echo (e.g. "
      ".prefetch().adaptive_echo(...) on a slow one only); weights_of says whether the "
      "weights are shares of the emitted elements or of the fresh items. Stats: "
      "'input{i}_weight', 'input{i}_elements', 'input{i}_fresh', 'input{i}_echoed', "
      "'input{i}_passes'. The pipelines are consumed.",
      [](const Pipelines& pipelines, const MixOptions& o) {
        CheckOk(o.Validate(pipelines.size()));
        for (size_t i = 0; i < pipelines.size(); ++i) {
          for (size_t j = 0; j < i; ++j) {
            if (pipelines[i].get() == pipelines[j].get()) {
              throw py::value_error("mix(): a pipeline cannot be mixed with itself");
            }
          }
        }
      },
      [](auto typed, const MixOptions& o) { return Mix(std::move(typed), o); });
}

// unbatch(): its one option is its name (options.h: a spec beside its only binding).
void BindUnbatch(PipelineClass& cls) {
  static constexpr char kHint[] = ": batch() or padded_batch() first";
  BindStage<UnbatchOptions>(
      cls, "unbatch",
      "Batches back to one Example per row (tf.data's unbatch; C++ Unbatch): row r of "
      "each component (its dtype after a batch()'s cast), the row's label, source_index and "
      "repeat_index (at least k in a batch echo's k-th copy), the batch's epoch. A "
      "malformed batch is InvalidArgumentError naming the column. A row shares its batch's "
      "memory. save_state() works; a shuffle() after it cannot save (shuffle before "
      "batch()). Stats: 'batches'.",
      OnlyOn<Batch>(
          "unbatch", [](auto p, const UnbatchOptions& o) { return std::move(p).Unbatch(o); }, kHint,
          kHint));
}

void BindPaddedBatch(PipelineClass& cls) {
  BindStage<PaddedBatchOptions>(
      cls, "padded_batch",
      "Examples whose components vary in shape (sequences, images of several sizes) to "
      "Batches, each component padded per batch to the longest row (or to padded_shapes). "
      "For n components, batch.components holds the n padded arrays, then (masks=True) n "
      "uint8 masks of the same shapes (1 = data, 0 = padding), then (lengths=True) n int64 "
      "[rows, rank] arrays of each row's unpadded shape: all NumPy arrays. A row longer than "
      "a fixed padded shape, or of another dtype or rank, is InvalidArgumentError naming its "
      "source index. Stats: 'padding_fraction'.",
      OnlyOn<Example>(
          "padded_batch",
          [](auto p, const PaddedBatchOptions& o) { return std::move(p).PaddedBatch(o); },
          ": decode them first"));
}

}  // namespace

void RegisterSteps(py::module_& m, PipelineClass& cls) {
  BindFilterCache(cls);
  BindZipInterleave(m, cls);
  BindPaddedBatch(cls);
  BindUnbatch(cls);
  BindMix(m);
}

}  // namespace dataecho::python
