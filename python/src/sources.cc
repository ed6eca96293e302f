// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Where pipelines start: object stores, URI patterns, sharding, and the
// source functions (from_tfrecord, from_fixed_length, from_idx, from_arrays,
// from_examples).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dataecho/formats/fixed_length.h"
#include "dataecho/formats/idx.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/formats/tfrecord_index.h"
#include "dataecho/storage/glob.h"
#include "dataecho/storage/object_store.h"
#include "dataecho/storage/sharding.h"
#include "dataecho/storage/throttled_store.h"
#include "elements.h"
#include "epoch_rest.h"
#include "options.h"
#include "paths.h"
#include "py_pipeline.h"
#include "status.h"
#include "tfrecord_length.h"

namespace dataecho::python {
namespace {

// dataecho.ObjectStore: a store shared by the sources made with it.
struct StoreHandle {
  std::shared_ptr<ObjectStore> store;
  std::string repr;
};

std::shared_ptr<ObjectStore> StoreOf(const py::object& store) {
  if (store.is_none()) return std::shared_ptr<ObjectStore>(OpenObjectStore());
  return store.cast<const StoreHandle&>().store;
}

std::vector<std::string> Patterns(const py::handle& patterns) {
  return PathList(patterns, "patterns");
}

// The URIs `patterns` name, in order.
std::vector<std::string> AllUris(ObjectStore& store, const std::vector<std::string>& patterns) {
  absl::StatusOr<std::vector<std::string>> uris;
  {
    py::gil_scoped_release nogil;
    uris = ExpandUris(store, patterns);
  }
  return ValueOrThrow(std::move(uris));
}

// This worker's share of `all`, numbered (in `*interleave`) as in the whole
// list: source_index is unique across the job.
std::vector<std::string> MyUris(const std::vector<std::string>& all,
                                const ShardOptions& shard_options, InterleaveOptions* interleave) {
  const Shard shard = ValueOrThrow(ResolveShard(shard_options));
  SetShardFileNumbering(shard, interleave);
  return ValueOrThrow(ShardUris(all, shard));  // FAILED_PRECONDITION for an empty share
}

py::dict InfoDict(const ObjectInfo& info) {
  py::dict d;
  d["uri"] = PathStr(RedactUri(info.uri));
  d["size"] = info.size;
  d["version"] = info.version;
  return d;
}

void BindStore(py::module_& m) {
  py::class_<StoreHandle> cls(
      m, "ObjectStore",
      Signature("ObjectStore")
          .Options<ObjectStoreOptions>()
          .Doc("Where bytes come from: local paths, file://, http(s)://, gs://bucket/key, "
               "s3://bucket/key (endpoints and credentials from the usual environment "
               "variables unless given). Pass it to a source as store=; by default each source "
               "opens its own."));
  DefSignedInit(
      cls, Signature("__init__").Arg("self").Options<ObjectStoreOptions>(),
      "A store with these options.", py::init([](const py::kwargs& kwargs) {
        const ObjectStoreOptions options =
            Spec<ObjectStoreOptions>().FromKwargs(kwargs, "ObjectStore");
        return StoreHandle{std::shared_ptr<ObjectStore>(OpenObjectStore(options)), "ObjectStore()"};
      }));
  DefSigned(cls, Signature("throttled").Arg("self").Options<ThrottledStoreOptions>(),
            "This store with added latency and a bandwidth cap (emulates a remote store).",
            [](const StoreHandle& self, const py::kwargs& kwargs) {
              const ThrottledStoreOptions options =
                  Spec<ThrottledStoreOptions>().FromKwargs(kwargs, "throttled");
              return StoreHandle{
                  NewThrottledStore(self.store, options),
                  Spec<ThrottledStoreOptions>().Repr(self.repr + ".throttled", options)};
            });
  cls.def(
         "stat",
         [](const StoreHandle& self, const py::object& uri_arg) {
           const std::string uri = PathBytes(uri_arg, "stat(): uri");
           absl::StatusOr<ObjectInfo> info;
           {
             py::gil_scoped_release nogil;
             info = self.store->Stat(uri);
           }
           return InfoDict(ValueOrThrow(std::move(info)));
         },
         py::arg("uri"), "{'uri', 'size', 'version'} of one object.")
      .def(
          "list",
          [](const StoreHandle& self, const py::object& prefix_arg) {
            const std::string prefix = PathBytes(prefix_arg, "list(): prefix");
            absl::StatusOr<std::vector<ObjectInfo>> infos;
            {
              py::gil_scoped_release nogil;
              infos = self.store->List(prefix);
            }
            py::list out;
            for (const ObjectInfo& i : ValueOrThrow(std::move(infos))) out.append(InfoDict(i));
            return out;
          },
          py::arg("prefix"), "The objects whose URI starts with `prefix`, sorted.")
      .def(
          "read",
          [](const StoreHandle& self, const py::object& uri_arg, uint64_t offset, int64_t length) {
            const std::string uri = PathBytes(uri_arg, "read(): uri");
            absl::StatusOr<Buffer> bytes;
            {
              py::gil_scoped_release nogil;
              bytes = self.store->ReadRange(
                  uri, offset, length < 0 ? UINT64_MAX : static_cast<uint64_t>(length));
            }
            return py::bytes(std::string(ValueOrThrow(std::move(bytes)).view()));
          },
          py::arg("uri"), py::arg("offset") = 0, py::arg("length") = -1,
          "Bytes [offset, offset + length) of an object (to its end if length < 0).")
      .def(
          "expand",
          [](const StoreHandle& self, const py::object& patterns) {
            const std::vector<std::string> p = Patterns(patterns);
            absl::StatusOr<std::vector<std::string>> uris;
            {
              py::gil_scoped_release nogil;
              uris = ExpandUris(*self.store, p);
            }
            py::list out;
            for (const std::string& u : ValueOrThrow(std::move(uris))) out.append(PathStr(u));
            return out;
          },
          py::arg("patterns"),
          "The sorted URIs that glob patterns ('gs://b/train-*'), prefixes ending in '/' or "
          "exact URIs name. Matching nothing is NotFoundError.")
      .def("__repr__", [](const StoreHandle& self) { return self.repr; });
}

void BindSharding(py::module_& m) {
  py::class_<Shard>(m, "Shard",
                    "A worker's share of a job: rank of world_size, and where "
                    "they came from ('options', 'RANK', ...).")
      .def(py::init([](int rank, int world_size) {
             return Shard{rank, world_size, "options"};
           }),
           py::arg("rank"), py::arg("world_size"))
      .def_readonly("rank", &Shard::rank)
      .def_readonly("world_size", &Shard::world_size)
      .def_readonly("source", &Shard::source)
      .def("__repr__", [](const Shard& s) {
        return absl::StrCat("Shard(rank=", s.rank, ", world_size=", s.world_size, ", source='",
                            s.source, "')");
      });
  DefSigned(
      m, Signature("resolve_shard").Options<ShardOptions>(),
      "This worker's Shard: from the arguments, else from the launcher's environment "
      "(RANK/WORLD_SIZE of torchrun, Open MPI, Slurm), else rank 0 of 1.",
      [](const py::kwargs& kwargs) {
        return ValueOrThrow(ResolveShard(Spec<ShardOptions>().FromKwargs(kwargs, "resolve_shard")));
      });
  DefSigned(
      m, Signature("shard_uris").Arg("uris").Arg("rank").Arg("world_size").Arg("allow_empty=False"),
      "URIs rank, rank + world_size, ... of `uris` (in their order). FailedPreconditionError "
      "for an empty share unless allow_empty (a data-parallel job hangs when one rank runs out "
      "first).",
      [](const std::vector<std::string>& uris, int rank, int world_size, bool allow_empty) {
        return ValueOrThrow(ShardUris(uris, Shard{rank, world_size, "options", allow_empty}));
      },
      py::arg("uris"), py::arg("rank"), py::arg("world_size"), py::arg("allow_empty") = false);
}

// The signature of a file source: patterns, the format's options, the
// reading threads', this worker's share, the store.
template <typename Format>
Signature FileSource(const char* name) {
  Signature sig(name);
  sig.Arg("patterns");
  sig.Options<Format>();
  sig.Options<InterleaveOptions>();
  sig.Options<ShardOptions>();
  return sig.Keyword("store=None").Keyword("shard=None");
}
constexpr char kStoreDoc[] =
    " store: a dataecho.ObjectStore (None: a new one for every scheme). rank, world_size: "
    "this worker's share of the files (from the environment by default). shard: a "
    "dataecho.Shard instead of rank and world_size; pass dataecho.torch's shard itself, so "
    "that a DataLoader resumed with another number of workers or ranks reads the rest of "
    "the interrupted epoch (shard.rest).";

void BindFileSources(py::module_& m) {
  DefSigned(
      m, FileSource<TFRecordReaderOptions>("from_tfrecord"),
      "A pipeline of the Records in the TFRecord files `patterns` names (a URI, a glob or a "
      "prefix ending in '/', or a list of them), CRC-checked. Errors name uri:offset." +
          std::string(kStoreDoc),
      [](const py::object& patterns, const py::kwargs& kwargs) {
        KwargsSplit split(kwargs, "from_tfrecord");
        const std::shared_ptr<ObjectStore> store = StoreOf(split.Pop("store"));
        const auto reader = split.Take<TFRecordReaderOptions>();
        auto interleave = split.Take<InterleaveOptions>();
        auto shard = split.Take<ShardOptions>();
        const py::object shard_arg = split.Pop("shard");
        split.CheckAllUsed();
        const std::optional<EpochRest> rest = TakeShardArg(shard_arg, &shard, "from_tfrecord");
        std::vector<std::string> all = AllUris(*store, Patterns(patterns));
        if (rest) {
          return RestSource(
              std::move(all), *rest,
              [&](const std::string& uri) -> absl::StatusOr<uint64_t> {
                absl::StatusOr<int64_t> n = CountTFRecords(*store, uri, reader);
                if (!n.ok()) return n.status();
                return static_cast<uint64_t>(*n);
              },
              [&](std::vector<std::string> uris, std::vector<RecordRange> ranges) {
                return MakeTFRecordRangeSource(store, std::move(uris), std::move(ranges), nullptr,
                                               reader, interleave);
              });
        }
        std::vector<std::string> uris = MyUris(all, shard, &interleave);
        auto out =
            MakeHandle(Pipeline<Record>(MakeTFRecordSource(store, uris, reader, interleave)));
        out->set_length(TFRecordLength(store, std::move(uris), reader));
        return out;
      },
      py::arg("patterns"));
  DefSigned(
      m, FileSource<FixedLengthOptions>("from_fixed_length"),
      "A pipeline of the fixed-length Records of the files `patterns` names (e.g. CIFAR-10 "
      "binary: record_bytes=3073; decode with dataecho.FixedImageDecoder())." +
          std::string(kStoreDoc),
      [](const py::object& patterns, const py::kwargs& kwargs) {
        KwargsSplit split(kwargs, "from_fixed_length");
        const std::shared_ptr<ObjectStore> store = StoreOf(split.Pop("store"));
        const auto format = split.Take<FixedLengthOptions>();
        auto interleave = split.Take<InterleaveOptions>();
        auto shard = split.Take<ShardOptions>();
        const py::object shard_arg = split.Pop("shard");
        split.CheckAllUsed();
        const std::optional<EpochRest> rest = TakeShardArg(shard_arg, &shard, "from_fixed_length");
        std::vector<std::string> all = AllUris(*store, Patterns(patterns));
        if (rest) {
          return RestSource(
              std::move(all), *rest,
              [&](const std::string& uri) { return CountFixedLengthRecords(*store, uri, format); },
              [&](std::vector<std::string> uris, std::vector<RecordRange> ranges) {
                return MakeFixedLengthRangeSource(store, std::move(uris), std::move(ranges), format,
                                                  interleave);
              });
        }
        std::vector<std::string> uris = MyUris(all, shard, &interleave);
        return MakeHandle(
            Pipeline<Record>(MakeFixedLengthSource(store, std::move(uris), format, interleave)));
      },
      py::arg("patterns"));
  DefSigned(
      m,
      Signature("from_idx").Arg("images").Arg("labels").Options<IdxOptions>().Keyword("store=None"),
      "A pipeline of Examples from an IDX image file and its label file (MNIST, "
      "Fashion-MNIST; plain or .gz): uint8 [28, 28, 1] images, labels, source_index = row. "
      "store: a dataecho.ObjectStore (None: a new one).",
      [](const py::object& images_path, const py::object& labels_path, const py::kwargs& kwargs) {
        const std::string images = PathBytes(images_path, "from_idx(): images");
        const std::string labels = PathBytes(labels_path, "from_idx(): labels");
        KwargsSplit split(kwargs, "from_idx");
        const std::shared_ptr<ObjectStore> store = StoreOf(split.Pop("store"));
        const auto options = split.Take<IdxOptions>();
        split.CheckAllUsed();
        return MakeHandle(Pipeline<Example>(MakeIdxSource(store, images, labels, options)));
      },
      py::arg("images"), py::arg("labels"));
}

// from_arrays()'s labels as int64, one per row (0s without labels). Integer
// and bool arrays as they are; floats only when every value is a whole number
// within int64 (labels read as floats); anything else raises
// InvalidArgumentError naming the first bad index, never a truncated or
// wrapped label.
std::vector<int64_t> LabelValues(const py::object& labels, int64_t rows) {
  std::vector<int64_t> out(static_cast<size_t>(rows), 0);
  if (labels.is_none()) return out;
  const py::array a = py::module_::import("numpy").attr("asarray")(labels);
  if (a.ndim() != 1 || a.shape(0) != rows) {
    ThrowStatus(absl::InvalidArgumentError(
        absl::StrCat("from_arrays(): labels must be 1-D with one value per image row (", rows,
                     " rows), got shape ", py::repr(a.attr("shape")).cast<std::string>())));
  }
  auto bad = [](int64_t i, const py::object& value, const char* why) {
    ThrowStatus(absl::InvalidArgumentError(absl::StrCat(
        "from_arrays(): labels[", i, "] = ", py::repr(value).cast<std::string>(), " ", why)));
  };
  constexpr int kFlags = py::array::c_style | py::array::forcecast;
  switch (a.dtype().kind()) {
    case 'b':
    case 'i': {
      const auto l = py::array_t<int64_t, kFlags>::ensure(a);
      std::memcpy(out.data(), l.data(), static_cast<size_t>(rows) * sizeof(int64_t));
      return out;
    }
    case 'u': {
      const auto l = py::array_t<uint64_t, kFlags>::ensure(a);
      for (int64_t i = 0; i < rows; ++i) {
        const uint64_t v = l.data()[i];
        if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          bad(i, py::int_(v), "is out of range for an int64 label");
        }
        out[static_cast<size_t>(i)] = static_cast<int64_t>(v);
      }
      return out;
    }
    case 'f': {
      const auto l = py::array_t<double, kFlags>::ensure(a);
      for (int64_t i = 0; i < rows; ++i) {
        const double v = l.data()[i];
        if (!std::isfinite(v) || v != std::trunc(v)) {
          bad(i, py::float_(v), "is not an integer label");
        }
        // [-2^63, 2^63): exactly the doubles that convert to int64.
        if (v < -0x1p63 || v >= 0x1p63) bad(i, py::float_(v), "is out of range for an int64 label");
        out[static_cast<size_t>(i)] = static_cast<int64_t>(v);
      }
      return out;
    }
    default:
      ThrowStatus(absl::InvalidArgumentError(
          absl::StrCat("from_arrays(): labels must be integers, got an array of dtype ",
                       py::str(a.dtype()).cast<std::string>())));
  }
}

void BindMemorySources(py::module_& m) {
  DefSigned(
      m, Signature("from_arrays").Arg("images").Arg("labels=None"),
      "A pipeline of Examples from in-memory arrays: row i of `images` (copied once, then "
      "shared: rows are slices of one buffer, freed when the pipeline is closed or deleted) "
      "with label labels[i] (0 without labels) and "
      "source_index i. Labels are integers (any integer dtype, or floats holding whole numbers "
      "within int64); a fractional, NaN, infinite or out-of-range label raises "
      "InvalidArgumentError naming its index.",
      [](const py::object& images, const py::object& labels) {
        const Tensor all = TensorFromArray(images);  // one copy of every row
        if (all.rank() < 1) throw py::value_error("from_arrays(): images need a row dimension");
        const int64_t rows = all.dim(0);
        const std::vector<int64_t> label_values = LabelValues(labels, rows);
        const Shape row_shape(all.shape().begin() + 1, all.shape().end());
        const size_t row_bytes = rows == 0 ? 0 : all.byte_size() / static_cast<size_t>(rows);
        std::vector<Example> examples(static_cast<size_t>(rows));
        for (int64_t i = 0; i < rows; ++i) {
          Example& e = examples[static_cast<size_t>(i)];
          e.components.push_back(ValueOrThrow(
              Tensor::Make(all.dtype(), row_shape,
                           all.buffer().Slice(static_cast<size_t>(i) * row_bytes, row_bytes))));
          e.label = label_values[static_cast<size_t>(i)];
          e.source_index = static_cast<uint64_t>(i);
        }
        auto out = MakeHandle(FromVector(std::move(examples)));
        out->set_length(Length::Known(rows));
        out->KeepUntilClosed(all.buffer());
        return out;
      },
      py::arg("images"), py::arg("labels") = py::none());
  DefSigned(
      m, Signature("from_examples").Arg("examples"),
      "A pipeline of the given dataecho.Example objects, in order.",
      [](const std::vector<Example>& examples) {
        auto out = MakeHandle(FromVector(examples));
        out->set_length(Length::Known(static_cast<int64_t>(examples.size())));
        return out;
      },
      py::arg("examples"));
}

}  // namespace

void RegisterSources(py::module_& m) {
  BindStore(m);
  BindSharding(m);
  BindFileSources(m);
  BindMemorySources(m);
}

}  // namespace dataecho::python
