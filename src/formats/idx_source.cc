// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// MakeIdxSource (idx.h): an IDX image file zipped with its label file, as
// Examples, with a state that names positions and rows, never pixels. The
// state of the source is the epoch, the rows taken, both files' fingerprints
// (size, CRC-32C of the first 4 KB stored) and the CRC-32C of the last row
// taken; a buffered Example is referenced by (row, epoch, CRC-32C of its
// image and label). A restore reopens both files, checks their fingerprints
// and the rows it reads again: a file that changed is DATA_LOSS naming it.
#include <algorithm>
#include <array>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "dataecho/crc32c.h"
#include "dataecho/formats/idx.h"
#include "dataecho/internal/counter.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "formats/idx_reader.h"
#include "formats/record_source_state.h"

namespace dataecho {
namespace {

using internal::FileFingerprint;
using internal::IdxFileReader;

// The CRC-32C a reference checks an Example by: its image bytes, its label.
uint32_t ExampleCrc(const Record& image, const Record& label) {
  const uint8_t l = label.data.size() > 0 ? label.data.data()[0] : 0;
  return Crc32cExtend(Crc32c(image.data.data(), image.data.size()), &l, 1);
}

// Both files opened, checked against each other.
struct Pair {
  std::unique_ptr<IdxFileReader> images, labels;
  Shape shape;  // of an image (a trailing channel of 1 for 2-D rows)
};

class IdxExampleSource final : public Stage<Example> {
 public:
  IdxExampleSource(std::shared_ptr<ObjectStore> store, std::string images, std::string labels,
                   IdxOptions options)
      : store_(std::move(store)), uris_{std::move(images), std::move(labels)}, options_(options) {}

  absl::StatusOr<std::optional<Example>> Next() override {
    const int64_t start = internal::NowNanos();
    auto r = NextImpl();
    wait_nanos_.Add(internal::NowNanos() - start);
    if (!r.ok() && status_.ok()) status_ = r.status();
    if (r.ok() && r->has_value()) {
      elements_.Add(1);
      bytes_.Add(static_cast<int64_t>((*r)->ByteSize()));
    }
    return r;
  }

  void Cancel() override {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    if (pair_.images) pair_.images->Cancel();
    if (pair_.labels) pair_.labels->Cancel();
  }

  absl::Status EnableRestart() override { return status_; }
  // Reopens both files; the rows of epoch `epoch` carry it.
  absl::Status Restart(uint32_t epoch) override {
    DATAECHO_RETURN_IF_ERROR(status_);
    DATAECHO_RETURN_IF_ERROR(Install(Pair{}));
    opened_ = false;
    epoch_ = epoch;
    rows_ = 0;
    return absl::OkStatus();
  }

  absl::Status SaveState(StateWriter& w) override {
    DATAECHO_RETURN_IF_ERROR(Saveable());
    // A state saved before the first row (a Prefetch's first snapshot, which
    // a restore may start from however many rows later) still holds the
    // files' fingerprints, so that files changed since are DATA_LOSS naming
    // them: the files are opened here, as the first Next() would (an error is
    // left for Next() to report).
    if (!fingerprints_[0].has_value() && !IsCancelled()) Open().IgnoreError();
    w.BeginStage("idx_source", StateHash());
    w.U64(epoch_);
    w.U64(rows_);
    SaveFingerprints(w);
    if (rows_ > 0) w.Fixed32(last_crc_);
    return absl::OkStatus();
  }

  absl::Status RestoreState(StateReader& r) override {
    DATAECHO_RETURN_IF_ERROR(r.BeginStage("idx_source"));
    const uint64_t epoch = r.U64();
    const uint64_t rows = r.U64();
    const std::array<std::optional<FileFingerprint>, 2> saved = RestoreFingerprints(r);
    const uint32_t last_crc = rows > 0 ? r.Fixed32() : 0;
    DATAECHO_RETURN_IF_ERROR(r.status());
    if (epoch > UINT32_MAX) {
      return absl::DataLossError(fmt::format("pipeline state: idx_source epoch {}", epoch));
    }
    // Both files again, checked, and the rows taken read past.
    DATAECHO_ASSIGN_OR_RETURN(Pair pair, OpenPair(saved));
    if (rows > pair.images->header().rows()) {
      return absl::DataLossError(
          fmt::format("pipeline state: {} has {} rows, the state says at least {}",
                      RedactUri(uris_[0]), pair.images->header().rows(), rows));
    }
    Record image, label;
    DATAECHO_RETURN_IF_ERROR(
        internal::SkipRecords(*pair.images, rows, uris_[0], std::nullopt, &image, saved[0]));
    DATAECHO_RETURN_IF_ERROR(
        internal::SkipRecords(*pair.labels, rows, uris_[1], std::nullopt, &label, saved[1]));
    if (rows > 0 && ExampleCrc(image, label) != last_crc) {
      return RowChanged(rows - 1, ExampleCrc(image, label), last_crc);
    }
    shape_ = pair.shape;
    DATAECHO_RETURN_IF_ERROR(Install(std::move(pair)));
    opened_ = true;
    epoch_ = static_cast<uint32_t>(epoch);
    rows_ = rows;
    last_crc_ = last_crc;
    return absl::OkStatus();
  }

  // (row, epoch, CRC-32C of image and label: its record_crc32c) per Example,
  // after the files' fingerprints.
  absl::Status SaveRefs(std::span<const Example* const> items, StateWriter& w) override {
    DATAECHO_RETURN_IF_ERROR(Saveable());
    SaveFingerprints(w);
    for (const Example* e : items) {
      w.U64(internal::IndexInFile(e->source_index));
      w.U64(e->epoch);
      w.Fixed32(e->record_crc32c);  // kept through the Maps above (example.h)
    }
    return absl::OkStatus();
  }

  // Reads the referenced rows in one pass over both files.
  absl::Status Reread(StateReader& r, size_t n, std::vector<Example>* out) override {
    const std::array<std::optional<FileFingerprint>, 2> saved = RestoreFingerprints(r);
    struct Ref {
      uint64_t row, epoch;
      uint32_t crc;
      size_t at;  // its place in the output
    };
    std::vector<Ref> refs;
    for (size_t i = 0; i < n; ++i) {
      Ref ref{.row = r.U64(), .epoch = r.U64(), .crc = r.Fixed32(), .at = i};
      DATAECHO_RETURN_IF_ERROR(r.status());
      if (ref.epoch > UINT32_MAX) {
        return absl::DataLossError(fmt::format("pipeline state: idx_source epoch {}", ref.epoch));
      }
      refs.push_back(ref);
    }
    if (refs.empty()) return absl::OkStatus();
    DATAECHO_ASSIGN_OR_RETURN(Pair pair, OpenPair(saved));
    std::sort(refs.begin(), refs.end(), [](const Ref& a, const Ref& b) { return a.row < b.row; });
    if (refs.back().row >= pair.images->header().rows()) {
      return absl::DataLossError(
          fmt::format("pipeline state: {} has {} rows, the state refers to row {}",
                      RedactUri(uris_[0]), pair.images->header().rows(), refs.back().row));
    }
    const size_t first = out->size();
    out->resize(first + n);
    size_t next = 0;
    for (uint64_t row = 0; next < refs.size(); ++row) {
      if (row % 4096 == 0 && IsCancelled()) return CancelledError();
      DATAECHO_ASSIGN_OR_RETURN(std::optional<Record> image, pair.images->Next());
      DATAECHO_ASSIGN_OR_RETURN(std::optional<Record> label, pair.labels->Next());
      if (!image.has_value() || !label.has_value()) {
        return absl::DataLossError(fmt::format("pipeline state: {} ended before row {}",
                                               RedactUri(uris_[0]), refs[next].row));
      }
      for (; next < refs.size() && refs[next].row == row; ++next) {
        if (const uint32_t crc = ExampleCrc(*image, *label); crc != refs[next].crc) {
          return RowChanged(row, crc, refs[next].crc);
        }
        DATAECHO_ASSIGN_OR_RETURN(
            (*out)[first + refs[next].at],
            MakeExample(*image, *label, pair.shape, static_cast<uint32_t>(refs[next].epoch)));
      }
    }
    return absl::OkStatus();
  }

  void AppendStats(std::vector<StageStats>* out) const override {
    StageStats s;
    s.name = "idx_source";
    s.elements = elements_.Get();
    s.bytes = bytes_.Get();
    s.extra.emplace_back("busy_s", static_cast<double>(wait_nanos_.Get()) * 1e-9);  // reading
    out->push_back(std::move(s));
  }

 private:
  uint64_t StateHash() const {
    return OptionsHash().Add(static_cast<uint64_t>(options_.compression)).value();
  }

  absl::Status Saveable() const {
    return status_.ok() ? absl::OkStatus() : CannotSaveAfterError("idx_source", status_);
  }

  // The files' fingerprints as this source knows them (none before it opened them).
  void SaveFingerprints(StateWriter& w) const {
    for (const std::optional<FileFingerprint>& fp : fingerprints_) internal::SaveFingerprint(fp, w);
  }
  static std::array<std::optional<FileFingerprint>, 2> RestoreFingerprints(StateReader& r) {
    std::array<std::optional<FileFingerprint>, 2> out;
    for (auto& fp : out) fp = internal::RestoreFingerprint(r);
    return out;
  }

  absl::Status RowChanged(uint64_t row, uint32_t crc, uint32_t saved) const {
    return absl::DataLossError(fmt::format(
        "pipeline state: row {} of {} and {} has other contents than when the state was saved "
        "(CRC-32C {:08x}, the state says {:08x}): the files changed",
        row, RedactUri(uris_[0]), RedactUri(uris_[1]), crc, saved));
  }

  static absl::StatusOr<Example> MakeExample(const Record& image, const Record& label,
                                             const Shape& shape, uint32_t epoch) {
    DATAECHO_ASSIGN_OR_RETURN(Tensor t, Tensor::Make(DType::kUInt8, shape, image.data));
    Example e;
    e.components.push_back(std::move(t));
    e.label = label.data.data()[0];
    e.source_index = image.source_index;
    e.epoch = epoch;
    // Provenance (example.h): where the row starts in the images' stream, and
    // what a reference checks it by (augmenters keep both).
    e.record_offset = image.offset;
    e.record_crc32c = ExampleCrc(image, label);
    return e;
  }

  absl::StatusOr<std::optional<Example>> NextImpl() {
    if (!status_.ok()) return status_;
    if (IsCancelled()) return CancelledError();
    if (!opened_) DATAECHO_RETURN_IF_ERROR(Open());
    DATAECHO_ASSIGN_OR_RETURN(std::optional<Record> image, pair_.images->Next());
    DATAECHO_ASSIGN_OR_RETURN(std::optional<Record> label, pair_.labels->Next());
    if (!image.has_value() || !label.has_value()) {
      if (IsCancelled()) return CancelledError();
      return std::nullopt;  // equal row counts were checked at open
    }
    DATAECHO_ASSIGN_OR_RETURN(Example e, MakeExample(*image, *label, shape_, epoch_));
    ++rows_;
    last_crc_ = e.record_crc32c;  // the last row's check, kept for a save
    return e;
  }

  // Opens both files for the rows of this epoch.
  absl::Status Open() {
    DATAECHO_ASSIGN_OR_RETURN(Pair pair, OpenPair({}));
    shape_ = pair.shape;
    DATAECHO_RETURN_IF_ERROR(Install(std::move(pair)));
    opened_ = true;
    return absl::OkStatus();
  }

  // Opens both files and checks them against each other and, at a restore,
  // against the fingerprints the state has (`saved`).
  absl::StatusOr<Pair> OpenPair(const std::array<std::optional<FileFingerprint>, 2>& saved) {
    Pair p;
    DATAECHO_ASSIGN_OR_RETURN(p.images, internal::OpenIdx(store_, uris_[0], 0, options_));
    DATAECHO_ASSIGN_OR_RETURN(p.labels, internal::OpenIdx(store_, uris_[1], 0, options_));
    DATAECHO_RETURN_IF_ERROR(internal::CheckFingerprint(*p.images, saved[0], uris_[0]));
    DATAECHO_RETURN_IF_ERROR(internal::CheckFingerprint(*p.labels, saved[1], uris_[1]));
    const IdxHeader& ih = p.images->header();
    const IdxHeader& lh = p.labels->header();
    if (lh.dims.size() != 1) {
      return absl::InvalidArgumentError(fmt::format("IDX labels {} must be 1-D, has {} dimensions",
                                                    RedactUri(uris_[1]), lh.dims.size()));
    }
    if (ih.rows() != lh.rows()) {
      return absl::InvalidArgumentError(
          fmt::format("IDX images {} have {} rows but labels {} have {}", RedactUri(uris_[0]),
                      ih.rows(), RedactUri(uris_[1]), lh.rows()));
    }
    p.shape.assign(ih.dims.begin() + 1, ih.dims.end());
    if (p.shape.size() == 2) p.shape.push_back(1);
    return p;
  }

  // Makes `p` the pair being read (Cancel() reaches it), and keeps its
  // fingerprints for the state.
  absl::Status Install(Pair p) {
    for (size_t i = 0; i < 2; ++i) {
      IdxFileReader* reader = i == 0 ? p.images.get() : p.labels.get();
      if (reader == nullptr) continue;
      DATAECHO_ASSIGN_OR_RETURN(FileFingerprint fp, reader->Fingerprint());
      fingerprints_[i] = fp;
    }
    absl::MutexLock lock(&mu_);
    pair_ = std::move(p);
    if (cancelled_) {
      if (pair_.images) pair_.images->Cancel();
      if (pair_.labels) pair_.labels->Cancel();
    }
    return absl::OkStatus();
  }

  bool IsCancelled() {
    absl::MutexLock lock(&mu_);
    return cancelled_;
  }

  const std::shared_ptr<ObjectStore> store_;
  const std::array<std::string, 2> uris_;  // images, labels
  const IdxOptions options_;
  absl::Status status_;
  // Consumer thread only.
  bool opened_ = false;
  uint32_t epoch_ = 0;
  uint64_t rows_ = 0;      // taken this epoch
  uint32_t last_crc_ = 0;  // ExampleCrc of the last row taken
  std::array<std::optional<FileFingerprint>, 2> fingerprints_;
  Shape shape_;
  absl::Mutex mu_;
  // Owned by the consumer thread, which sets (and at a Restart() drops) them
  // while holding mu_; Cancel() reads them under mu_.
  Pair pair_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  internal::Counter elements_, bytes_, wait_nanos_;
};

}  // namespace

StagePtr<Example> MakeIdxSource(std::shared_ptr<ObjectStore> store, std::string images_uri,
                                std::string labels_uri, const IdxOptions& options) {
  return std::make_unique<IdxExampleSource>(std::move(store), std::move(images_uri),
                                            std::move(labels_uri), options);
}

}  // namespace dataecho
