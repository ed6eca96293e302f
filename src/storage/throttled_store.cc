// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/storage/throttled_store.h"

#include <algorithm>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/internal/pacer.h"
#include "dataecho/status_macros.h"
#include "fmt/format.h"

namespace dataecho {
namespace {

// The shared link: hands out the time at which a transfer of n bytes is done.
class Link {
 public:
  explicit Link(double bytes_per_second) : bytes_per_second_(bytes_per_second) {}

  // The time at which `bytes` more bytes have passed the link, if they are
  // sent after everything reserved so far. A link never makes up the time it
  // was idle: the schedule's catch-up is zero.
  absl::Time Reserve(uint64_t bytes) {
    absl::Time now = absl::Now();
    if (bytes_per_second_ <= 0) return now;
    absl::MutexLock lock(&mu_);
    return schedule_.Book(now, absl::Seconds(static_cast<double>(bytes) / bytes_per_second_),
                          absl::ZeroDuration());
  }

 private:
  const double bytes_per_second_;
  absl::Mutex mu_;
  internal::Schedule schedule_ ABSL_GUARDED_BY(mu_);
};

// Sleeps until `deadline` or until cancelled.
class Waiter {
 public:
  // CANCELLED if Cancel() was called before or during the wait.
  absl::Status WaitUntil(absl::Time deadline, std::string_view uri) {
    absl::MutexLock lock(&mu_);
    // A deadline already past (no latency, no cap) costs no timed wait.
    if (deadline > absl::Now()) mu_.AwaitWithDeadline(absl::Condition(&cancelled_), deadline);
    if (cancelled_)
      return absl::CancelledError(fmt::format("read of {} cancelled", RedactUri(uri)));
    return absl::OkStatus();
  }
  void Cancel() {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
  }

 private:
  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

class ThrottledReader : public ObjectReader {
 public:
  ThrottledReader(std::unique_ptr<ObjectReader> base, std::shared_ptr<Link> link,
                  const ThrottledStoreOptions& options)
      : base_(std::move(base)), link_(std::move(link)), options_(options) {}

  // Fills `dst` as the wrapped reader does (short only at the end), then
  // paces the bytes as the ranged requests that would carry them: a latency
  // at each `request_bytes` boundary, each request's bytes through the link.
  // One read of the wrapped reader, so a failed Read consumes nothing.
  absl::StatusOr<size_t> Read(absl::Span<uint8_t> dst) override {
    absl::StatusOr<size_t> n = base_->Read(dst);
    if (!n.ok()) return n;
    uint64_t rest = *n;
    while (rest > 0) {
      uint64_t part = rest;
      if (options_.request_bytes > 0) {
        if (since_request_ == options_.request_bytes) {
          DATAECHO_RETURN_IF_ERROR(waiter_.WaitUntil(absl::Now() + options_.latency, info().uri));
          since_request_ = 0;
        }
        part = std::min(rest, options_.request_bytes - since_request_);
        since_request_ += part;
      }
      DATAECHO_RETURN_IF_ERROR(waiter_.WaitUntil(link_->Reserve(part), info().uri));
      rest -= part;
    }
    return n;
  }

  uint64_t offset() const override { return base_->offset(); }
  const ObjectInfo& info() const override { return base_->info(); }
  void Cancel() override {
    waiter_.Cancel();
    base_->Cancel();
  }

  Waiter& waiter() { return waiter_; }

 private:
  const std::unique_ptr<ObjectReader> base_;
  const std::shared_ptr<Link> link_;
  const ThrottledStoreOptions options_;
  uint64_t since_request_ = 0;
  Waiter waiter_;
};

class ThrottledStore : public ObjectStore {
 public:
  ThrottledStore(std::shared_ptr<ObjectStore> base, const ThrottledStoreOptions& options)
      : base_(std::move(base)),
        options_(options),
        link_(std::make_shared<Link>(options.bytes_per_second)) {}

  absl::StatusOr<ObjectInfo> Stat(std::string_view uri) override {
    absl::SleepFor(options_.latency);
    return base_->Stat(uri);
  }

  absl::StatusOr<Buffer> ReadRange(std::string_view uri, uint64_t offset,
                                   uint64_t length) override {
    absl::Time start = absl::Now();
    absl::StatusOr<Buffer> data = base_->ReadRange(uri, offset, length);
    if (!data.ok()) {
      absl::SleepFor(start + options_.latency - absl::Now());
      return data;
    }
    absl::Time first_byte = start + options_.latency;
    absl::Time done = std::max(first_byte, link_->Reserve(data->size()));
    absl::SleepFor(done - absl::Now());
    return data;
  }

  absl::StatusOr<std::unique_ptr<ObjectReader>> Open(std::string_view uri,
                                                     const ReadOptions& options) override {
    absl::Time first_byte = absl::Now() + options_.latency;
    absl::StatusOr<std::unique_ptr<ObjectReader>> base = base_->Open(uri, options);
    if (!base.ok()) {
      absl::SleepFor(first_byte - absl::Now());
      return base.status();
    }
    auto reader = std::make_unique<ThrottledReader>(*std::move(base), link_, options_);
    DATAECHO_RETURN_IF_ERROR(reader->waiter().WaitUntil(first_byte, uri));
    return reader;
  }

  absl::StatusOr<std::vector<ObjectInfo>> List(std::string_view prefix) override {
    absl::SleepFor(options_.latency);
    return base_->List(prefix);
  }

 private:
  const std::shared_ptr<ObjectStore> base_;
  const ThrottledStoreOptions options_;
  const std::shared_ptr<Link> link_;
};

}  // namespace

std::unique_ptr<ObjectStore> NewThrottledStore(std::shared_ptr<ObjectStore> base,
                                               const ThrottledStoreOptions& options) {
  return std::make_unique<ThrottledStore>(std::move(base), options);
}

}  // namespace dataecho
