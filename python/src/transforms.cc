// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Pipeline.map() and echoed_batches(), and the built-in transforms they take:
// decoders (Record -> Example) and augmenters (Example -> Example) that run in
// C++ without the GIL. A Python callable works too, taking the GIL per call.
#include <pybind11/stl.h>

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bind_stage.h"
#include "dataecho/augment.h"
#include "dataecho/echo_placement.h"
#include "dataecho/formats/fixed_length.h"
#include "dataecho/formats/image_record.h"
#include "dataecho/formats/jpeg.h"
#include "dataecho/random_resized_crop.h"
#include "elements.h"
#include "fmt/format.h"
#include "options.h"
#include "py_pipeline.h"
#include "seed_stream.h"
#include "status.h"

namespace dataecho::python {
namespace {

using DecodeFn = std::function<absl::StatusOr<Example>(Record)>;

// A built-in transform: exactly one of `decode`, `augment` is set.
struct Transform {
  std::string repr;
  DecodeFn decode;
  AugmentFn augment;
};
// The Python classes, one per kind (isinstance works); all are Transforms.
struct RandomCropT : Transform {};
struct RandomFlipT : Transform {};
struct NormalizeT : Transform {};
struct CastT : Transform {};
struct DecodeJpegT : Transform {};
struct FixedImageDecoderT : Transform {};
struct ImageRecordDecoderT : Transform {};
struct RandomResizedCropT : Transform {};
struct EncodedImageRecordT : Transform {};

// A Python callable as a map function; it takes the GIL per call.
template <typename In>
std::function<absl::StatusOr<Example>(In)> PythonFunction(py::object fn) {
  const std::string what =
      "map function " + py::str(py::getattr(fn, "__qualname__", py::repr(fn))).cast<std::string>();
  GilObject f(std::move(fn));
  return [f, what](In x) -> absl::StatusOr<Example> {
    py::gil_scoped_acquire gil;
    try {
      const py::object out = f.get()(py::cast(std::move(x)));
      return ExampleFromPython(out, what.c_str());
    } catch (py::error_already_set& e) {
      return StatusFromPythonError(e, what.c_str());
    } catch (const std::exception& e) {
      return absl::UnknownError(absl::StrCat(what, ": ", e.what()));
    }
  };
}

// What map() runs: an optional decoder (Record input), then augmenters.
struct Chain {
  DecodeFn decode;
  std::vector<AugmentFn> steps;

  AugmentFn Augment() const {
    if (steps.empty()) return nullptr;
    if (steps.size() == 1) return steps[0];
    return [steps = steps](Example e) -> absl::StatusOr<Example> {
      for (const AugmentFn& s : steps) {
        absl::StatusOr<Example> next = s(std::move(e));
        if (!next.ok()) return next.status();
        e = *std::move(next);
      }
      return e;
    };
  }
  DecodeFn Decode() const {
    AugmentFn rest = Augment();
    if (!rest) return decode;
    return [decode = decode, rest = std::move(rest)](Record r) -> absl::StatusOr<Example> {
      absl::StatusOr<Example> e = decode(std::move(r));
      if (!e.ok()) return e.status();
      return rest(*std::move(e));
    };
  }
};

// The chain for `fn` (a transform, a callable or a list of them) applied to
// elements of type `in` ("Record" or "Example").
Chain BuildChain(const py::handle& fn, const char* method, const std::string& in) {
  std::vector<py::handle> items;
  if (py::isinstance<py::list>(fn) || py::isinstance<py::tuple>(fn)) {
    for (const py::handle item : fn) items.push_back(item);
  } else {
    items.push_back(fn);
  }
  if (items.empty()) throw py::type_error(std::string(method) + "(): no function given");
  Chain chain;
  bool records = in == "Record";
  for (const py::handle item : items) {
    if (py::isinstance<Transform>(item)) {
      const auto& t = item.cast<const Transform&>();
      if (t.decode) {
        if (!records)
          ThrowWrongElement(method, "Record", "Example",
                            (": " + t.repr + " decodes Records").c_str());
        chain.decode = t.decode;
        records = false;
      } else {
        if (records) {
          ThrowWrongElement(method, "Example", "Record",
                            ": decode them first, e.g. .map([dataecho.decode_image_record, ...])");
        }
        chain.steps.push_back(t.augment);
      }
    } else if (PyCallable_Check(item.ptr()) != 0) {
      if (records) {
        chain.decode = PythonFunction<Record>(py::reinterpret_borrow<py::object>(item));
        records = false;
      } else {
        chain.steps.push_back(PythonFunction<Example>(py::reinterpret_borrow<py::object>(item)));
      }
    } else {
      throw py::type_error(std::string(method) +
                           "(): expected a dataecho transform or a callable, got " +
                           py::repr(item).cast<std::string>());
    }
  }
  return chain;
}

// A decoder without options: the class `name` (T, made with no arguments)
// and its instance dataecho.<instance>.
template <typename T>
void BindRecordDecoder(py::module_& m, const char* name, const char* instance, const char* doc,
                       DecodeFn decode) {
  auto make = [decode](std::string repr) {
    T t;
    t.repr = std::move(repr);
    t.decode = decode;
    return t;
  };
  py::class_<T, Transform>(m, name, doc).def(py::init([make, name] {
    return make(std::string(name) + "()");
  }));
  m.attr(instance) = py::cast(make(std::string("dataecho.") + instance));
}

template <typename T, typename O, typename F>
void BindTransform(py::module_& m, const char* name, const char* summary, F make) {
  // The class's text signature (its docstring's first line) lists O's fields.
  py::class_<T, Transform> cls(m, name, Signature(name).Options<O>().Doc(summary));
  DefSignedInit(cls, Signature("__init__").Arg("self").Options<O>(), summary,
                py::init([name, make](const py::kwargs& kwargs) {
                  const O options = Spec<O>().FromKwargs(kwargs, name);
                  T t;
                  make(options, &t);
                  t.repr = Spec<O>().Repr(name, options);
                  return t;
                }));
}

void BindTransforms(py::module_& m) {
  py::class_<Transform>(m, "Transform", R"(A built-in decoder or augmenter for Pipeline.map().

It runs in C++ on the map's threads without taking the GIL. Call it on a Record
or an Example to try it: `dataecho.RandomFlip(seed=1)(example)`.)")
      .def("__call__",
           [](const Transform& t, const py::object& element) -> Example {
             if (t.decode) return ValueOrThrow(t.decode(element.cast<Record>()));
             return ValueOrThrow(t.augment(element.cast<Example>()));
           })
      .def_property_readonly("decodes_records", [](const Transform& t) { return bool(t.decode); })
      .def("__repr__", [](const Transform& t) { return t.repr; });

  BindTransform<RandomCropT, RandomCropOptions>(
      m, "RandomCrop",
      "A uniformly placed height x width window of the (zero-padded) image; the draw depends "
      "on (seed, source_index, repeat_index), so echoed copies get different crops.",
      [](const RandomCropOptions& o, Transform* t) { t->augment = RandomCrop(o); });
  BindTransform<RandomFlipT, RandomFlipOptions>(
      m, "RandomFlip", "Mirrors the image left-right with the given probability.",
      [](const RandomFlipOptions& o, Transform* t) { t->augment = RandomFlip(o); });
  BindTransform<NormalizeT, NormalizeOptions>(
      m, "Normalize", "Converts an image to normalized floats: (x * scale - mean) / stddev.",
      [](const NormalizeOptions& o, Transform* t) { t->augment = Normalize(o); });
  BindTransform<CastT, CastOptions>(
      m, "Cast", "Converts a component to float32, float16 or bfloat16 (times scale).",
      [](const CastOptions& o, Transform* t) { t->augment = Cast(o); });
  BindTransform<DecodeJpegT, JpegDecodeOptions>(
      m, "DecodeJpeg",
      "Decodes Records whose payload is a bare JPEG into uint8 [H, W, C] Examples (label 0, "
      "indices from the record). Corrupt data is DATA_LOSS naming uri:offset.",
      [](const JpegDecodeOptions& o, Transform* t) {
        t->decode = [o](Record r) -> absl::StatusOr<Example> {
          absl::StatusOr<Tensor> image =
              DecodeJpeg(r.data.view(), o, fmt::format("{}:{}", r.uri(), r.offset));
          if (!image.ok()) return image.status();
          Example e;
          e.components.push_back(*std::move(image));
          e.source_index = r.source_index;
          e.repeat_index = r.repeat_index;
          return e;
        };
      });
  BindTransform<FixedImageDecoderT, FixedImageLayout>(
      m, "FixedImageDecoder",
      "Decodes fixed-length labelled image records (CIFAR-10 layout by default) into uint8 "
      "[H, W, C] Examples.",
      [](const FixedImageLayout& o, Transform* t) {
        t->decode = [d = FixedImageDecoder(o)](Record r) { return d(r); };
      });
  BindRecordDecoder<ImageRecordDecoderT>(
      m, "ImageRecordDecoder", "decode_image_record",
      "Decodes the image-record layout `dataecho convert` writes (raw or JPEG) into uint8 "
      "[H, W, C] Examples with their labels. dataecho.decode_image_record is one.",
      [](Record r) { return DecodeImageRecord(r); });
  BindTransform<RandomResizedCropT, RandomResizedCropOptions>(
      m, "RandomResizedCrop",
      "torchvision's RandomResizedCrop (random area and aspect ratio, bilinear resize to "
      "height x width), optional flip, normalize and cast, in one pass. Input: a decoded uint8 "
      "[H, W, C] image, or a JPEG's bytes (uint8 [N], from encoded_image_record), of which "
      "only the window is decoded. Draws depend on (seed, source_index, repeat_index, "
      "epoch). Bad options raise InvalidArgumentError here.",
      [](const RandomResizedCropOptions& o, Transform* t) {
        RandomResizedCrop crop(o);
        CheckOk(crop.Validate());
        t->augment = [crop = std::move(crop)](Example e) { return crop(std::move(e)); };
      });
  BindRecordDecoder<EncodedImageRecordT>(
      m, "EncodedImageRecord", "encoded_image_record",
      "Image-record layout records to Examples without decoding: a JPEG record's component "
      "0 is its stream (uint8 [N], sharing the record's bytes) for RandomResizedCrop to "
      "decode only its window; raw records give their pixels. dataecho.encoded_image_record "
      "is one.",
      [](Record r) { return EncodedImageRecord(r); });
}

}  // namespace

void RegisterTransforms(py::module_& m, PipelineClass& cls) {
  BindTransforms(m);
  DefSigned(
      cls, Signature("map").Arg("self").Arg("fn").Options<MapOptions>(),
      "Applies `fn` to every element on `parallelism` threads, results in input order "
      "unless deterministic=False. `fn` is a dataecho transform (decode_image_record, "
      "encoded_image_record, DecodeJpeg, FixedImageDecoder, RandomCrop, RandomResizedCrop, "
      "RandomFlip, Normalize, Cast: C++, no GIL), a Python callable, or a list of them applied "
      "in order. On Records the first must decode (return an Example); on Examples each "
      "returns an Example. A Python callable takes the GIL for every call, so its calls run "
      "one at a time whatever the parallelism; its exception is raised by next() as it was "
      "raised.",
      [](PipelineHandle& self, const py::object& fn, const py::kwargs& kwargs) {
        const MapOptions options = Spec<MapOptions>().FromKwargs(kwargs, "map");
        const std::string in = self.element_type();
        if (in == "Batch") {
          ThrowWrongElement("map", "Record or Example", "Batch", ": iterate the batches instead");
        }
        const Chain chain = BuildChain(fn, "map", in);
        return Then(self, "map", [&](auto p) -> AnyPipeline {
          using T = typename decltype(p)::value_type;
          if constexpr (std::is_same_v<T, Record>) {
            return std::move(p).Map(chain.Decode(), options);
          } else if constexpr (std::is_same_v<T, Example>) {
            return std::move(p).Map(chain.Augment(), options);
          } else {
            ThrowWrongElement("map", "Record or Example", "Batch");
          }
        });
      },
      py::arg("fn"));

  DefSigned(
      cls, Signature("echoed_batches").Arg("self").Arg("fn=None").Options<EchoedBatchesOptions>(),
      "The rest of a training input after the decoded upstream's prefetch, with echo where "
      "`placement` says (C++ EchoedBatches): augmentation `fn` (a transform, a callable or a "
      "list; None = none), shuffle, batch, the final prefetch.",
      [](PipelineHandle& self, const py::object& fn, const py::kwargs& kwargs) {
        EchoedBatchesOptions options =
            Spec<EchoedBatchesOptions>().FromKwargs(kwargs, "echoed_batches");
        for (uint64_t* seed : {&options.echo.seed, &options.adaptive.seed, &options.shuffle.seed,
                               &options.auto_placement.seed}) {
          *seed = ForSeedStream(*seed);  // seed_stream.h
        }
        if (PlannerMemory().has_value()) {  // seed_stream.h: the last epoch's planner
          EchoPlannerMemory memory = *PlannerMemory();
          const double max = options.placement == EchoPlacement::kAdaptive
                                 ? options.adaptive.max_factor
                                 : options.auto_placement.max_factor;
          memory.factor = std::max(1.0, std::min(memory.factor, max));
          options.auto_placement.start_from = memory;
        }
        if (std::string(self.element_type()) != "Example") {
          ThrowWrongElement("echoed_batches", "Example", self.element_type());
        }
        const AugmentFn augment =
            fn.is_none() ? nullptr : BuildChain(fn, "echoed_batches", "Example").Augment();
        return Then(self, "echoed_batches",
                    OnlyOn<Example>("echoed_batches", [&](Pipeline<Example> p) {
                      return EchoedBatches(std::move(p), augment, options);
                    }));
      },
      py::arg("fn") = py::none());
}

}  // namespace dataecho::python
