// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/formats/idx.h"

#include <utility>

#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/internal/counter.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"
#include "formats/record_input.h"

namespace dataecho {
namespace {

// Rows larger than this are treated as a lying header (checked before allocating).
constexpr uint64_t kMaxRowBytes = uint64_t{1} << 30;

uint32_t LoadBE32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

int ElementSize(uint8_t type) {
  switch (type) {
    case 0x08:
    case 0x09: return 1;
    case 0x0B: return 2;
    case 0x0C:
    case 0x0D: return 4;
    case 0x0E: return 8;
    default: return 0;
  }
}

class IdxFileReader final : public RecordFileReader {
 public:
  IdxFileReader(std::unique_ptr<internal::RecordInput> in, IdxHeader header, uint64_t file_index)
      : in_(std::move(in)), header_(std::move(header)), file_index_(file_index) {}

  absl::StatusOr<std::optional<Record>> Next() override {
    if (done_) return std::nullopt;
    const uint64_t start = in_->position();
    if (row_ == header_.rows()) {
      done_ = true;
      uint8_t extra;
      DATAECHO_ASSIGN_OR_RETURN(size_t got, in_->Read(&extra, 1));
      if (got != 0) {
        return absl::DataLossError(fmt::format(
            "IDX file {} has bytes after its last row at offset {}", *in_->uri(), start));
      }
      return std::nullopt;
    }
    MutableBuffer row(header_.row_bytes);
    DATAECHO_ASSIGN_OR_RETURN(size_t got, in_->Read(row.data(), row.size()));
    if (got < row.size()) {
      done_ = true;
      return absl::DataLossError(fmt::format("truncated record at {}:{} (IDX row {} of {})",
                                             *in_->uri(), start, row_, header_.rows()));
    }
    return in_->MakeRecord(std::move(row), start, file_index_, row_++);
  }

  void Cancel() override { in_->Cancel(); }

  const IdxHeader& header() const { return header_; }

 private:
  std::unique_ptr<internal::RecordInput> in_;
  const IdxHeader header_;
  const uint64_t file_index_;
  uint64_t row_ = 0;
  bool done_ = false;
};

absl::StatusOr<std::unique_ptr<IdxFileReader>> OpenIdx(ObjectStore& store, const std::string& uri,
                                                       uint64_t file_index,
                                                       const IdxOptions& options) {
  DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<internal::RecordInput> in,
                            internal::RecordInput::Open(store, uri, options.compression,
                                                        options.buffer_size, options.read_ahead));
  const std::string shown = RedactUri(uri);  // in messages
  std::string head(4, '\0');
  DATAECHO_ASSIGN_OR_RETURN(size_t got, in->Read(reinterpret_cast<uint8_t*>(head.data()), 4));
  head.resize(got);
  if (head.size() == 4) {
    const size_t dims_bytes = 4 * static_cast<size_t>(static_cast<uint8_t>(head[3]));
    head.resize(4 + dims_bytes);
    DATAECHO_ASSIGN_OR_RETURN(got,
                              in->Read(reinterpret_cast<uint8_t*>(head.data()) + 4, dims_bytes));
    head.resize(4 + got);
  }
  DATAECHO_ASSIGN_OR_RETURN(IdxHeader header, ParseIdxHeader(head, shown));
  if (header.type != 0x08) {
    return absl::UnimplementedError(fmt::format(
        "IDX file {} has element type 0x{:02x}; only unsigned bytes (0x08) are supported", shown,
        header.type));
  }
  const uint64_t want = header.header_bytes + header.data_bytes;
  const std::string dims = absl::StrJoin(header.dims, "x");
  if (!in->compressed()) {
    if (in->object_size() != want) {
      return absl::DataLossError(
          fmt::format("IDX header of {} describes {} bytes ({} elements), object has {}", shown,
                      want, dims, in->object_size()));
    }
  } else if (internal::ResolveCompression(options.compression, uri) == Compression::kGzip) {
    // The gzip trailer's ISIZE: the uncompressed size mod 2^32.
    const uint64_t size = in->object_size();
    DATAECHO_ASSIGN_OR_RETURN(Buffer trailer, size >= 4 ? store.ReadRange(uri, size - 4, 4)
                                                        : absl::StatusOr<Buffer>(Buffer()));
    if (trailer.size() != 4)
      return absl::DataLossError(fmt::format("truncated gzip stream {}", shown));
    const uint8_t* p = trailer.data();
    const uint32_t isize =
        uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
    if (isize != static_cast<uint32_t>(want)) {
      return absl::DataLossError(fmt::format(
          "IDX header of {} describes {} bytes ({} elements), gzip trailer records {} (mod 2^32)",
          shown, want, dims, isize));
    }
  }
  if (want > in->max_stream_bytes()) {
    return absl::DataLossError(
        fmt::format("IDX header of {} describes {} bytes ({} elements), more than its {} "
                    "compressed bytes can hold",
                    shown, want, dims, in->object_size()));
  }
  if (header.row_bytes == 0 && header.rows() > 0) {
    // [N, 0, ...]: N empty rows, a header that costs N reads and holds nothing.
    return absl::DataLossError(fmt::format("IDX file {} has {} rows of zero bytes ({} elements)",
                                           shown, header.rows(), dims));
  }
  if (header.row_bytes > kMaxRowBytes) {
    return absl::DataLossError(fmt::format("IDX file {} has rows of {} bytes (limit {})", shown,
                                           header.row_bytes, kMaxRowBytes));
  }
  return std::make_unique<IdxFileReader>(std::move(in), std::move(header), file_index);
}

class IdxExampleSource final : public Stage<Example> {
 public:
  IdxExampleSource(std::shared_ptr<ObjectStore> store, std::string images, std::string labels,
                   IdxOptions options)
      : store_(std::move(store)),
        images_uri_(std::move(images)),
        labels_uri_(std::move(labels)),
        options_(options) {}

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
    if (images_) images_->Cancel();
    if (labels_) labels_->Cancel();
  }

  absl::Status EnableRestart() override { return status_; }
  // Reopens both files; the rows of epoch `epoch` carry it.
  absl::Status Restart(uint32_t epoch) override {
    DATAECHO_RETURN_IF_ERROR(status_);
    std::unique_ptr<IdxFileReader> images, labels;
    {
      absl::MutexLock lock(&mu_);
      if (cancelled_) return CancelledError();
      images = std::move(images_);
      labels = std::move(labels_);
    }
    opened_ = false;
    epoch_ = epoch;
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
  absl::StatusOr<std::optional<Example>> NextImpl() {
    if (!status_.ok()) return status_;
    if (IsCancelled()) return CancelledError();
    if (!opened_) DATAECHO_RETURN_IF_ERROR(OpenBoth());
    DATAECHO_ASSIGN_OR_RETURN(std::optional<Record> image, images_->Next());
    DATAECHO_ASSIGN_OR_RETURN(std::optional<Record> label, labels_->Next());
    if (!image.has_value() || !label.has_value()) {
      if (IsCancelled()) return CancelledError();
      return std::nullopt;  // equal row counts were checked at open
    }
    DATAECHO_ASSIGN_OR_RETURN(Tensor t,
                              Tensor::Make(DType::kUInt8, shape_, std::move(image->data)));
    Example e;
    e.components.push_back(std::move(t));
    e.label = label->data.data()[0];
    e.source_index = image->source_index;
    e.epoch = epoch_;
    return e;
  }

  absl::Status OpenBoth() {
    DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<IdxFileReader> images,
                              OpenIdx(*store_, images_uri_, 0, options_));
    DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<IdxFileReader> labels,
                              OpenIdx(*store_, labels_uri_, 0, options_));
    const IdxHeader& ih = images->header();
    const IdxHeader& lh = labels->header();
    if (lh.dims.size() != 1) {
      return absl::InvalidArgumentError(fmt::format("IDX labels {} must be 1-D, has {} dimensions",
                                                    RedactUri(labels_uri_), lh.dims.size()));
    }
    if (ih.rows() != lh.rows()) {
      return absl::InvalidArgumentError(
          fmt::format("IDX images {} have {} rows but labels {} have {}", RedactUri(images_uri_),
                      ih.rows(), RedactUri(labels_uri_), lh.rows()));
    }
    shape_.assign(ih.dims.begin() + 1, ih.dims.end());
    if (shape_.size() == 2) shape_.push_back(1);
    absl::MutexLock lock(&mu_);
    images_ = std::move(images);
    labels_ = std::move(labels);
    if (cancelled_) {
      images_->Cancel();
      labels_->Cancel();
    }
    opened_ = true;
    return absl::OkStatus();
  }

  bool IsCancelled() {
    absl::MutexLock lock(&mu_);
    return cancelled_;
  }

  const std::shared_ptr<ObjectStore> store_;
  const std::string images_uri_, labels_uri_;
  const IdxOptions options_;
  absl::Status status_;
  bool opened_ = false;
  uint32_t epoch_ = 0;  // consumer thread only
  Shape shape_;
  absl::Mutex mu_;
  // Owned by the consumer thread, which sets (and at a Restart() drops) them
  // while holding mu_; Cancel() reads them under mu_.
  std::unique_ptr<IdxFileReader> images_;
  std::unique_ptr<IdxFileReader> labels_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  internal::Counter elements_, bytes_, wait_nanos_;
};

}  // namespace

absl::StatusOr<IdxHeader> ParseIdxHeader(std::string_view bytes, std::string_view uri) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() < 4) return absl::DataLossError(fmt::format("truncated IDX header in {}", uri));
  if (p[0] != 0 || p[1] != 0) {
    return absl::DataLossError(fmt::format("{} is not an IDX file (magic {:02x}{:02x}{:02x}{:02x})",
                                           uri, p[0], p[1], p[2], p[3]));
  }
  IdxHeader h;
  h.type = p[2];
  const int elem = ElementSize(h.type);
  if (elem == 0)
    return absl::DataLossError(
        fmt::format("{} has unknown IDX element type 0x{:02x}", uri, h.type));
  const size_t ndims = p[3];
  if (ndims == 0) return absl::DataLossError(fmt::format("IDX file {} has no dimensions", uri));
  h.header_bytes = 4 + 4 * ndims;
  if (bytes.size() < h.header_bytes)
    return absl::DataLossError(fmt::format("truncated IDX header in {}", uri));
  uint64_t row = static_cast<uint64_t>(elem);
  for (size_t i = 0; i < ndims; ++i) {
    h.dims.push_back(LoadBE32(p + 4 + 4 * i));
    if (i > 0 && __builtin_mul_overflow(row, uint64_t{h.dims.back()}, &row)) {
      return absl::DataLossError(fmt::format("IDX dimensions of {} overflow", uri));
    }
  }
  h.row_bytes = row;
  if (__builtin_mul_overflow(uint64_t{h.dims[0]}, row, &h.data_bytes) ||
      h.data_bytes > UINT64_MAX - h.header_bytes) {
    return absl::DataLossError(fmt::format("IDX dimensions of {} overflow", uri));
  }
  return h;
}

absl::StatusOr<std::unique_ptr<RecordFileReader>> OpenIdxFile(std::shared_ptr<ObjectStore> store,
                                                              const std::string& uri,
                                                              uint64_t file_index,
                                                              const IdxOptions& options) {
  if (store == nullptr) return absl::InvalidArgumentError("OpenIdxFile: null store");
  DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<IdxFileReader> r,
                            OpenIdx(*store, uri, file_index, options));
  return std::unique_ptr<RecordFileReader>(std::move(r));
}

StagePtr<Record> MakeIdxRecordSource(std::shared_ptr<ObjectStore> store,
                                     std::vector<std::string> uris, const IdxOptions& options,
                                     const InterleaveOptions& interleave) {
  RecordFileOpener open = [store, options](const std::string& uri, uint64_t file_index) {
    return OpenIdxFile(store, uri, file_index, options);
  };
  return MakeRecordSource(std::move(uris), std::move(open), interleave, "idx_source");
}

StagePtr<Example> MakeIdxSource(std::shared_ptr<ObjectStore> store, std::string images_uri,
                                std::string labels_uri, const IdxOptions& options) {
  return std::make_unique<IdxExampleSource>(std::move(store), std::move(images_uri),
                                            std::move(labels_uri), options);
}

}  // namespace dataecho
