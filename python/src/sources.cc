// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Where pipelines start: object stores, URI patterns, sharding, and the
// file source functions (from_tfrecord, from_fixed_length, from_idx); the
// in-memory ones (from_arrays, from_examples) are in memory_sources.cc.
#include <pybind11/stl.h>

#include <memory>
#include <optional>
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

// A file source's arguments (FileSource's signature), taken from `kwargs`
// in that order: the store, the format's options, the reading threads', this
// worker's share (and the rest of an interrupted epoch, from shard=), and
// every URI the patterns name. Raises for a keyword none of them takes.
template <typename Format>
struct FileSourceArgs {
  std::shared_ptr<ObjectStore> store;
  Format format;
  InterleaveOptions interleave;
  ShardOptions shard;
  std::optional<EpochRest> rest;
  std::vector<std::string> all;
};
template <typename Format>
FileSourceArgs<Format> TakeFileSourceArgs(const py::object& patterns, const py::kwargs& kwargs,
                                          const char* name) {
  KwargsSplit split(kwargs, name);
  FileSourceArgs<Format> a;
  a.store = StoreOf(split.Pop("store"));
  a.format = split.Take<Format>();
  a.interleave = split.Take<InterleaveOptions>();
  a.shard = split.Take<ShardOptions>();
  const py::object shard_arg = split.Pop("shard");
  split.CheckAllUsed();
  a.rest = TakeShardArg(shard_arg, &a.shard, name);
  a.all = AllUris(*a.store, Patterns(patterns));
  return a;
}

// Binds the file source `name` (FileSource's signature): its pipeline from
// its arguments `a`. With the rest of an interrupted epoch (shard=), the
// records it left (RestSource: count(a, uri) gives a file's records,
// ranges(a, uris, ranges) the source over record ranges); else files(a, uris)
// over this worker's share of the files (MyUris, which may set a.interleave).
template <typename Format, typename Count, typename Ranges, typename Files>
void BindFileSource(py::module_& m, const char* name, const char* summary, Count count,
                    Ranges ranges, Files files) {
  DefSigned(
      m, FileSource<Format>(name), summary + std::string(kStoreDoc),
      [name, count, ranges, files](const py::object& patterns, const py::kwargs& kwargs) {
        FileSourceArgs<Format> a = TakeFileSourceArgs<Format>(patterns, kwargs, name);
        if (a.rest) {
          return RestSource(
              std::move(a.all), *a.rest, [&](const std::string& uri) { return count(a, uri); },
              [&](std::vector<std::string> uris, std::vector<RecordRange> r) {
                return ranges(a, std::move(uris), std::move(r));
              });
        }
        return files(a, MyUris(a.all, a.shard, &a.interleave));
      },
      py::arg("patterns"));
}

void BindFileSources(py::module_& m) {
  using TFRecordArgs = FileSourceArgs<TFRecordReaderOptions>;
  BindFileSource<TFRecordReaderOptions>(
      m, "from_tfrecord",
      "A pipeline of the Records in the TFRecord files `patterns` names (a URI, a glob or a "
      "prefix ending in '/', or a list of them), CRC-checked. Errors name uri:offset.",
      [](const TFRecordArgs& a, const std::string& uri) -> absl::StatusOr<uint64_t> {
        absl::StatusOr<int64_t> n = CountTFRecords(*a.store, uri, a.format);
        if (!n.ok()) return n.status();
        return static_cast<uint64_t>(*n);
      },
      [](const TFRecordArgs& a, std::vector<std::string> uris, std::vector<RecordRange> ranges) {
        return MakeTFRecordRangeSource(a.store, std::move(uris), std::move(ranges), nullptr,
                                       a.format, a.interleave);
      },
      [](const TFRecordArgs& a, std::vector<std::string> uris) {
        auto out =
            MakeHandle(Pipeline<Record>(MakeTFRecordSource(a.store, uris, a.format, a.interleave)));
        out->set_length(TFRecordLength(a.store, std::move(uris), a.format));
        return out;
      });
  using FixedLengthArgs = FileSourceArgs<FixedLengthOptions>;
  BindFileSource<FixedLengthOptions>(
      m, "from_fixed_length",
      "A pipeline of the fixed-length Records of the files `patterns` names (e.g. CIFAR-10 "
      "binary: record_bytes=3073; decode with dataecho.FixedImageDecoder()).",
      [](const FixedLengthArgs& a, const std::string& uri) {
        return CountFixedLengthRecords(*a.store, uri, a.format);
      },
      [](const FixedLengthArgs& a, std::vector<std::string> uris, std::vector<RecordRange> ranges) {
        return MakeFixedLengthRangeSource(a.store, std::move(uris), std::move(ranges), a.format,
                                          a.interleave);
      },
      [](const FixedLengthArgs& a, std::vector<std::string> uris) {
        return MakeHandle(Pipeline<Record>(
            MakeFixedLengthSource(a.store, std::move(uris), a.format, a.interleave)));
      });
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

}  // namespace

void RegisterSources(py::module_& m) {
  BindStore(m);
  BindSharding(m);
  BindFileSources(m);
}

}  // namespace dataecho::python
