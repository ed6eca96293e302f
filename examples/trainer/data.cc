// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "trainer/data.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <utility>

#include "dataecho/augment.h"
#include "dataecho/glob.h"
#include "dataecho/image_record.h"
#include "dataecho/object_store.h"
#include "dataecho/pipeline.h"
#include "dataecho/tfrecord.h"
#include "fmt/format.h"
#include "support/http_server.h"
#include "trainer/slow_upstream.h"

namespace trainer {
namespace {

constexpr int kSide = 28;
constexpr int kPixels = kSide * kSide;

// Independent seeds for the random stages, all derived from --seed.
uint64_t DeriveSeed(uint64_t seed, uint64_t stage) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + stage * 0xBF58476D1CE4E5B9ull + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// An IDX file (gzip-compressed or not): the bytes after its header, and its
// dimensions.
struct Idx {
  std::vector<int64_t> dims;
  std::string data;
};

absl::StatusOr<Idx> ReadIdx(const std::string& path, int expected_rank, int64_t limit) {
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files as they are, too
  if (f == nullptr) return absl::NotFoundError(fmt::format("cannot open {}", path));
  std::string bytes;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) bytes.append(buf, static_cast<size_t>(n));
  const bool failed = n < 0;
  gzclose(f);
  if (failed) return absl::DataLossError(fmt::format("{}: corrupt gzip stream", path));
  auto be32 = [&](size_t off) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + off);
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
  };
  if (bytes.size() < 4 || be32(0) != 0x800u + static_cast<uint32_t>(expected_rank) ||
      bytes.size() < 4 + 4 * static_cast<size_t>(expected_rank)) {
    return absl::DataLossError(fmt::format("{}:0: not a uint8 IDX file of rank {}", path, expected_rank));
  }
  Idx idx;
  int64_t count = 1;
  for (int i = 0; i < expected_rank; ++i) {
    idx.dims.push_back(be32(4 + 4 * static_cast<size_t>(i)));
    count *= idx.dims.back();
  }
  const size_t header = 4 + 4 * static_cast<size_t>(expected_rank);
  if (bytes.size() - header != static_cast<size_t>(count)) {
    return absl::DataLossError(fmt::format("{}:{}: {} data bytes, header promises {}", path, header,
                                           bytes.size() - header, count));
  }
  if (limit > 0 && limit < idx.dims[0]) {
    count = count / idx.dims[0] * limit;
    idx.dims[0] = limit;
  }
  idx.data = bytes.substr(header, static_cast<size_t>(count));
  return idx;
}

struct ImagesAndLabels {
  dataecho::Buffer pixels;  // [n, 28, 28] uint8
  std::vector<int64_t> labels;
};

absl::StatusOr<ImagesAndLabels> ReadImagesAndLabels(const std::string& dir, const std::string& prefix,
                                                    int64_t limit) {
  absl::StatusOr<Idx> images = ReadIdx(fmt::format("{}/{}-images-idx3-ubyte.gz", dir, prefix), 3, limit);
  if (!images.ok()) return images.status();
  absl::StatusOr<Idx> labels = ReadIdx(fmt::format("{}/{}-labels-idx1-ubyte.gz", dir, prefix), 1, limit);
  if (!labels.ok()) return labels.status();
  if (images->dims[1] != kSide || images->dims[2] != kSide || labels->dims[0] != images->dims[0]) {
    return absl::InvalidArgumentError(fmt::format("{}/{}: expected N 28x28 images and N labels", dir, prefix));
  }
  ImagesAndLabels out;
  out.pixels = dataecho::Buffer::CopyOf(images->data);
  for (char c : labels->data) out.labels.push_back(static_cast<unsigned char>(c));
  return out;
}

class PipelineData final : public TrainData {
 public:
  PipelineData(std::unique_ptr<dataecho::testing::HttpServer> server, dataecho::Pipeline<dataecho::Batch> p)
      : server_(std::move(server)), pipeline_(std::move(p)) {}
  absl::StatusOr<std::optional<dataecho::Batch>> Next() override { return pipeline_.Next(); }
  std::vector<dataecho::StageStats> Stats() const override { return pipeline_.Stats(); }

 private:
  // Declared first: destroyed after the pipeline that reads from it.
  std::unique_ptr<dataecho::testing::HttpServer> server_;
  dataecho::Pipeline<dataecho::Batch> pipeline_;
};

// The IDX training set in memory, as an endless stream of Examples: each
// epoch in a new seeded order, and with source indices unique across epochs
// (epoch * N + i) so that augmentations differ from epoch to epoch.
dataecho::StagePtr<dataecho::Example> IdxSource(ImagesAndLabels train, uint64_t seed) {
  const int64_t n = static_cast<int64_t>(train.labels.size());
  struct State {
    ImagesAndLabels data;
    std::vector<int64_t> order;
    std::mt19937_64 gen;
    int64_t epoch = -1;
    int64_t pos = 0;
  };
  auto state = std::make_shared<State>();
  state->data = std::move(train);
  state->order.resize(static_cast<size_t>(n));
  state->gen.seed(seed);
  state->pos = n;
  return dataecho::GeneratorSource<dataecho::Example>(
      [state, n]() -> absl::StatusOr<std::optional<dataecho::Example>> {
        State& s = *state;
        if (n == 0) return std::nullopt;
        if (s.pos == n) {
          std::iota(s.order.begin(), s.order.end(), 0);
          std::shuffle(s.order.begin(), s.order.end(), s.gen);
          ++s.epoch;
          s.pos = 0;
        }
        const int64_t i = s.order[static_cast<size_t>(s.pos++)];
        absl::StatusOr<dataecho::Tensor> image = dataecho::Tensor::Make(
            dataecho::DType::kUInt8, {kSide, kSide, 1}, s.data.pixels.Slice(static_cast<size_t>(i) * kPixels, kPixels));
        if (!image.ok()) return image.status();
        dataecho::Example ex;
        ex.components.push_back(*std::move(image));
        ex.label = s.data.labels[static_cast<size_t>(i)];
        ex.source_index = static_cast<uint64_t>(s.epoch * n + i);
        return ex;
      });
}

// TFRecord shards of `dataecho convert`, endless: every epoch reopens them;
// the epoch goes into the top bits of the source index (see IdxSource).
dataecho::StagePtr<dataecho::Record> ShardSource(std::shared_ptr<dataecho::ObjectStore> store,
                                                 std::vector<std::string> uris) {
  auto epoch = std::make_shared<uint64_t>(0);
  return dataecho::RepeatSource<dataecho::Record>(
      [store, uris, epoch]() -> dataecho::StagePtr<dataecho::Record> {
        const uint64_t offset = (*epoch)++ << 50;
        auto tag = [offset](dataecho::Record r) {
          r.source_index += offset;
          return r;
        };
        absl::StatusOr<dataecho::StagePtr<dataecho::Record>> tagged =
            dataecho::From(dataecho::MakeTFRecordSource(store, uris))
                .Map(std::move(tag), {.parallelism = 0, .name = "epoch_tag"})
                .Release();
        return tagged.ok() ? *std::move(tagged) : nullptr;
      },
      /*epochs=*/-1);
}

}  // namespace

absl::StatusOr<TestSet> LoadTestSet(const TrainOptions& o) {
  absl::StatusOr<ImagesAndLabels> test = ReadImagesAndLabels(o.idx_dir, "t10k", o.test_limit);
  if (!test.ok()) return test.status();
  TestSet out;
  out.size = static_cast<int64_t>(test->labels.size());
  out.labels = std::move(test->labels);
  out.images.resize(test->pixels.size());
  const uint8_t* p = test->pixels.data();
  for (size_t i = 0; i < out.images.size(); ++i) {
    out.images[i] = (p[i] * (1.0f / 255.0f) - kPixelMean) / kPixelStddev;
  }
  return out;
}

absl::StatusOr<std::unique_ptr<TrainData>> MakeTrainData(const TrainOptions& o,
                                                        double upstream_examples_per_second) {
  using dataecho::Example;
  std::unique_ptr<dataecho::testing::HttpServer> server;
  dataecho::Pipeline<Example> upstream(absl::UnknownError("unset"));
  if (o.train_shards.empty()) {
    absl::StatusOr<ImagesAndLabels> train = ReadImagesAndLabels(o.idx_dir, "train", o.train_limit);
    if (!train.ok()) return train.status();
    upstream = dataecho::From(IdxSource(*std::move(train), DeriveSeed(o.seed, 1)));
  } else {
    std::shared_ptr<dataecho::ObjectStore> local = dataecho::OpenObjectStore();
    absl::StatusOr<std::vector<std::string>> files = dataecho::ExpandUris(*local, o.train_shards);
    if (!files.ok()) return files.status();
    std::shared_ptr<dataecho::ObjectStore> store = local;
    std::vector<std::string> uris = *files;
    if (upstream_examples_per_second > 0) {
      absl::StatusOr<SlowUpstream> slow = ServeThrottled(local, *files, upstream_examples_per_second);
      if (!slow.ok()) return slow.status();
      server = std::move(slow->server);
      store = std::move(slow->store);
      uris = std::move(slow->uris);
    }
    upstream = dataecho::From(ShardSource(store, uris))
                   .Map([](const dataecho::Record& r) { return dataecho::DecodeImageRecord(r); },
                        {.parallelism = o.decode_parallelism, .name = "decode"});
  }

  const dataecho::RandomCrop crop({.height = kSide, .width = kSide, .padding = 2, .seed = DeriveSeed(o.seed, 2)});
  const dataecho::RandomFlip flip({.seed = DeriveSeed(o.seed, 3)});
  auto augment = [crop, flip](Example ex) -> absl::StatusOr<Example> {
    absl::StatusOr<Example> cropped = crop(std::move(ex));
    if (!cropped.ok()) return cropped.status();
    return flip(*std::move(cropped));
  };
  const dataecho::EchoOptions echo{.factor = o.echo, .seed = DeriveSeed(o.seed, 4)};
  const bool echo_examples = o.echo > 1.0 && o.insert != EchoInsert::kBatch;

  dataecho::Pipeline<Example> examples = std::move(upstream).Prefetch({.depth = o.prefetch_depth});
  if (echo_examples && o.insert == EchoInsert::kBeforeAugment) examples = std::move(examples).Echo(echo);
  examples = std::move(examples).Map(augment, {.parallelism = 1, .name = "augment"});
  if (echo_examples && o.insert == EchoInsert::kAfterAugment) examples = std::move(examples).Echo(echo);
  dataecho::Pipeline<dataecho::Batch> batches =
      std::move(examples)
          .Shuffle({.buffer_size = o.shuffle_buffer, .seed = DeriveSeed(o.seed, 5)})
          .Batch({.batch_size = o.batch_size,
                  .drop_remainder = true,
                  .cast = dataecho::DType::kFloat32,
                  .scale = 1.0f / 255.0f,
                  .mean = {kPixelMean},
                  .stddev = {kPixelStddev}});
  if (o.echo > 1.0 && o.insert == EchoInsert::kBatch) batches = std::move(batches).Echo(echo);
  batches = std::move(batches).Prefetch({.depth = 2});
  if (!batches.status().ok()) return batches.status();
  return std::unique_ptr<TrainData>(new PipelineData(std::move(server), std::move(batches)));
}

}  // namespace trainer
