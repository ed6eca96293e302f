// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/storage/fault_store.h"

#include <cstring>

#include "dataecho/status_macros.h"
#include "fmt/format.h"

namespace dataecho {
namespace {

class FaultReader : public ObjectReader {
 public:
  FaultReader(std::unique_ptr<ObjectReader> base, FaultInjectingStore* store)
      : base_(std::move(base)), store_(store) {}

  absl::StatusOr<size_t> Read(absl::Span<uint8_t> dst) override {
    uint64_t at = base_->offset();
    if (!dst.empty()) {
      DATAECHO_RETURN_IF_ERROR(store_->Check(Fault::Op::kRead, info().uri, at, dst.size()));
    }
    absl::StatusOr<size_t> n = base_->Read(dst);
    if (n.ok()) store_->Corrupt(info().uri, at, dst.subspan(0, *n));
    return n;
  }
  uint64_t offset() const override { return base_->offset(); }
  const ObjectInfo& info() const override { return base_->info(); }
  void Cancel() override { base_->Cancel(); }

 private:
  const std::unique_ptr<ObjectReader> base_;
  // The store must outlive its readers (a test-only wrapper).
  FaultInjectingStore* const store_;
};

}  // namespace

FaultInjectingStore::FaultInjectingStore(std::shared_ptr<ObjectStore> base)
    : base_(std::move(base)) {}

void FaultInjectingStore::AddFault(Fault fault) {
  absl::MutexLock lock(&mu_);
  faults_.push_back(std::move(fault));
}

void FaultInjectingStore::CorruptByte(std::string_view uri, uint64_t offset, uint8_t mask) {
  absl::MutexLock lock(&mu_);
  corruptions_.push_back({std::string(uri), offset, mask});
}

void FaultInjectingStore::Clear() {
  absl::MutexLock lock(&mu_);
  faults_.clear();
  corruptions_.clear();
}

int64_t FaultInjectingStore::calls(Fault::Op op) const {
  absl::MutexLock lock(&mu_);
  if (op != Fault::Op::kAny) return calls_[static_cast<int>(op)];
  int64_t total = 0;
  for (int64_t c : calls_) total += c;
  return total;
}

int64_t FaultInjectingStore::fired() const {
  absl::MutexLock lock(&mu_);
  return fired_;
}

absl::Status FaultInjectingStore::Check(Fault::Op op, std::string_view uri, uint64_t offset,
                                        uint64_t length) {
  absl::MutexLock lock(&mu_);
  ++calls_[static_cast<int>(op)];
  for (Fault& f : faults_) {
    if (f.op != Fault::Op::kAny && f.op != op) continue;
    if (f.times == 0) continue;
    if (!f.uri_substring.empty() && uri.find(f.uri_substring) == std::string_view::npos) continue;
    if (op == Fault::Op::kRead && (f.at_offset < offset || f.at_offset - offset >= length)) {
      continue;
    }
    if (f.skip > 0) {
      --f.skip;
      continue;
    }
    if (f.times > 0) --f.times;
    ++fired_;
    return absl::Status(f.error.code(),
                        fmt::format("{}: {} at offset {} (injected fault)", RedactUri(uri),
                                    std::string(f.error.message()), offset));
  }
  return absl::OkStatus();
}

void FaultInjectingStore::Corrupt(std::string_view uri, uint64_t offset,
                                  absl::Span<uint8_t> data) const {
  absl::MutexLock lock(&mu_);
  for (const Corruption& c : corruptions_) {
    if (c.uri == uri && c.offset >= offset && c.offset - offset < data.size()) {
      data[c.offset - offset] ^= c.mask;
    }
  }
}

absl::StatusOr<ObjectInfo> FaultInjectingStore::Stat(std::string_view uri) {
  DATAECHO_RETURN_IF_ERROR(Check(Fault::Op::kStat, uri, 0, 0));
  return base_->Stat(uri);
}

absl::StatusOr<Buffer> FaultInjectingStore::ReadRange(std::string_view uri, uint64_t offset,
                                                      uint64_t length) {
  DATAECHO_RETURN_IF_ERROR(Check(Fault::Op::kReadRange, uri, offset, length));
  absl::StatusOr<Buffer> data = base_->ReadRange(uri, offset, length);
  if (!data.ok()) return data;
  bool touched = false;
  {
    absl::MutexLock lock(&mu_);
    for (const Corruption& c : corruptions_) {
      touched |= c.uri == uri && c.offset >= offset && c.offset - offset < data->size();
    }
  }
  if (!touched) return data;
  MutableBuffer copy(data->size());
  std::memcpy(copy.data(), data->data(), data->size());
  Corrupt(uri, offset, copy.span());
  return std::move(copy).Freeze();
}

absl::StatusOr<std::unique_ptr<ObjectReader>> FaultInjectingStore::Open(
    std::string_view uri, const ReadOptions& options) {
  DATAECHO_RETURN_IF_ERROR(Check(Fault::Op::kOpen, uri, options.offset, 0));
  DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<ObjectReader> base, base_->Open(uri, options));
  return std::unique_ptr<ObjectReader>(std::make_unique<FaultReader>(std::move(base), this));
}

absl::StatusOr<std::vector<ObjectInfo>> FaultInjectingStore::List(std::string_view prefix) {
  DATAECHO_RETURN_IF_ERROR(Check(Fault::Op::kList, prefix, 0, 0));
  return base_->List(prefix);
}

}  // namespace dataecho
