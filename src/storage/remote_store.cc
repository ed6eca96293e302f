// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "storage/remote_store.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <set>

#include <cstdlib>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/status_macros.h"
#include "dataecho/text.h"
#include "fmt/format.h"
#include "storage/uri.h"

namespace dataecho::internal {
namespace {

// Ranged reads longer than this stat the object first to size the buffer.
constexpr uint64_t kUnstatedRangeLimit = uint64_t{64} << 20;

absl::Status SizeMismatch(const std::string& display, uint64_t stated, uint64_t offset,
                          uint64_t served) {
  return absl::FailedPreconditionError(fmt::format(
      "{}: the object's stat said {} bytes, but the read at offset {} found {} bytes; the "
      "server is inconsistent (or the object changed), so the read stops here rather than "
      "drop bytes",
      display, stated, offset, served));
}

class RemoteReader : public ObjectReader {
 public:
  // `latency`: a recent request's round trip (the Open's stat), the first
  // estimate of the service time that paces the ranged reads (see NextChunk).
  RemoteReader(std::shared_ptr<HttpClient> client, ObjectInfo info, HttpRequest request,
               std::string version_header, uint64_t begin, uint64_t end, size_t read_ahead,
               absl::Duration latency)
      : client_(std::move(client)),
        info_(std::move(info)),
        request_(std::move(request)),
        version_header_(std::move(version_header)),
        offset_(begin),
        end_(end),
        next_fetch_(begin),
        service_(latency) {
    size_t chunk = client_->http_options().chunk_size;
    chunk_ = std::max<size_t>(std::min(chunk, std::max<size_t>(read_ahead, 64 << 10)), 1);
    window_ = std::max<size_t>(1, read_ahead / chunk_);
  }

  ~RemoteReader() override { Cancel(); }

  absl::StatusOr<size_t> Read(absl::Span<uint8_t> dst) override {
    if (!error_.ok()) return error_;
    const uint64_t start = offset_;
    size_t total = 0;
    while (total < dst.size() && offset_ < end_) {
      if (current_ && current_pos_ < current_->result().received) {
        const HttpResult& chunk = current_->result();
        size_t n = static_cast<size_t>(
            std::min<uint64_t>(chunk.received - current_pos_, dst.size() - total));
        std::memcpy(dst.data() + total, chunk.data.data() + current_pos_, n);
        current_pos_ += n;
        total += n;
        offset_ += n;
        continue;
      }
      absl::StatusOr<std::shared_ptr<HttpJob>> next = NextChunk();
      if (!next.ok()) {
        error_ = next.status();
        offset_ = start;  // the bytes of this call are not returned
        return error_;
      }
      Recycle();
      current_ = *std::move(next);
      current_pos_ = 0;
    }
    return total;
  }

  uint64_t offset() const override { return offset_; }
  const ObjectInfo& info() const override { return info_; }

  void Cancel() override {
    std::deque<std::shared_ptr<HttpJob>> jobs;
    {
      absl::MutexLock lock(&mu_);
      cancelled_ = true;
      jobs = jobs_;
    }
    for (auto& job : jobs) client_->Cancel(job);
  }

 private:
  // Waits for the oldest chunk in flight, after topping up the window.
  //
  // The window's requests start paced, one every service time / lanes, where
  // the service time is the shortest request round trip seen so far (at
  // first, the Open's stat) and the lanes are the requests that can be in
  // flight together (the window, at most the client's concurrency). Ranges
  // started together share the bandwidth and finish together, and since each
  // is replaced when the consumer is done with it, an unpaced window falls
  // into lock step: the link idle during every round trip and saturated in
  // between, each round taking a round trip plus the whole window's transfer
  // (docs/benchmarks.md has a trace of it).
  // Paced, the transfers overlap other ranges' round trips.
  // The pace never caps throughput below what the lanes allow. The client
  // applies it when it starts a request (see StartPacer), so a request held
  // up by a slow one still starts on the schedule; it also spaces the paced
  // starts of all readers to one host by round trip / its concurrency, so
  // readers sharing the client do not fall into lock step together.
  absl::StatusOr<std::shared_ptr<HttpJob>> NextChunk() {
    std::shared_ptr<HttpJob> job;
    {
      absl::MutexLock lock(&mu_);
      if (cancelled_) return Cancelled();
      // (Not below 1 ms of service time: a fast link needs no pacing, and
      // spacing finer than the network thread's wake-ups means little.)
      const bool paced = service_ >= absl::Milliseconds(1);
      const size_t lanes = std::min<size_t>(
          window_, static_cast<size_t>(std::max(1, client_->http_options().max_concurrency)));
      while (jobs_.size() < window_ && next_fetch_ < end_) {
        HttpRequest request = request_;
        request.ranged = true;
        request.begin = next_fetch_;
        request.end = std::min<uint64_t>(next_fetch_ + chunk_, end_);
        request.pinned_version = info_.version;
        request.version_header = version_header_;
        HttpJobOptions options;
        if (paced) {
          options.pacer = pacer_;
          options.pace = service_ / static_cast<double>(lanes);
          options.round_trip = service_;
        }
        if (!spare_.empty()) {
          options.buffer = std::move(spare_.back());
          spare_.pop_back();
        }
        next_fetch_ = request.end;
        auto j = std::make_shared<HttpJob>(std::move(request), std::move(options));
        client_->Submit(j);
        jobs_.push_back(std::move(j));
      }
      job = jobs_.front();
    }
    absl::Status s = HttpClient::Wait(*job);
    absl::MutexLock lock(&mu_);
    jobs_.pop_front();
    if (cancelled_) return Cancelled();
    if (!s.ok()) return s;
    const HttpResult& result = job->result();
    service_ = std::min(service_, result.finished - result.attempt_started);
    const HttpRequest& request = job->request();
    if (result.received < request.end - request.begin) {
      return absl::FailedPreconditionError(
          fmt::format("{}: object ended at byte {} while being read (it had {} bytes; it changed)",
                      request_.display, request.begin + result.received, info_.size));
    }
    // The stat's size is a hint the reads verify: the object must end where
    // it said, or the bytes past that would be dropped without a word.
    if (result.object_size >= 0 && static_cast<uint64_t>(result.object_size) != info_.size) {
      return SizeMismatch(request_.display, info_.size, request.begin,
                          static_cast<uint64_t>(result.object_size));
    }
    return job;
  }

  // Keeps the finished chunk's buffer for a later chunk.
  void Recycle() {
    if (!current_) return;
    absl::MutexLock lock(&mu_);
    MutableBuffer& data = current_->result().data;
    if (data.size() >= chunk_) spare_.push_back(std::move(data));
    current_.reset();
  }

  absl::Status Cancelled() const {
    return absl::CancelledError(fmt::format("read of {} cancelled", request_.display));
  }

  const std::shared_ptr<HttpClient> client_;
  const ObjectInfo info_;
  const HttpRequest request_;
  const std::string version_header_;
  uint64_t offset_;
  const uint64_t end_;
  size_t chunk_;
  size_t window_;
  std::shared_ptr<HttpJob> current_;
  uint64_t current_pos_ = 0;
  absl::Status error_;

  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_fetch_ ABSL_GUARDED_BY(mu_);
  std::deque<std::shared_ptr<HttpJob>> jobs_ ABSL_GUARDED_BY(mu_);
  std::vector<MutableBuffer> spare_ ABSL_GUARDED_BY(mu_);
  // Shortest request round trip seen, and the schedule of request starts
  // (see NextChunk).
  absl::Duration service_ ABSL_GUARDED_BY(mu_);
  const std::shared_ptr<StartPacer> pacer_ = std::make_shared<StartPacer>();
};

class RemoteStore : public ObjectStore {
 public:
  RemoteStore(std::shared_ptr<HttpClient> client, std::unique_ptr<RemoteBackend> backend)
      : client_(std::move(client)), backend_(std::move(backend)) {}

  absl::StatusOr<ObjectInfo> Stat(std::string_view uri) override {
    DATAECHO_ASSIGN_OR_RETURN(HttpRequest request, backend_->StatRequest(uri));
    auto job = std::make_shared<HttpJob>(std::move(request));
    DATAECHO_RETURN_IF_ERROR(client_->Run(job));
    return backend_->ParseStat(uri, job->result());
  }

  absl::StatusOr<Buffer> ReadRange(std::string_view uri, uint64_t offset,
                                   uint64_t length) override {
    if (length == 0) return Buffer();
    std::string version;
    if (length > kUnstatedRangeLimit || offset + length < offset) {
      DATAECHO_ASSIGN_OR_RETURN(ObjectInfo info, Stat(uri));
      if (offset >= info.size) return Buffer();
      length = std::min(length, info.size - offset);
      version = info.version;
    }
    DATAECHO_ASSIGN_OR_RETURN(HttpRequest request, backend_->ReadRequest(uri, version));
    request.ranged = true;
    request.begin = offset;
    request.end = offset + length;
    request.version_header = backend_->VersionHeader(version);
    request.pinned_version = std::move(version);
    auto job = std::make_shared<HttpJob>(std::move(request));
    DATAECHO_RETURN_IF_ERROR(client_->Run(job));
    HttpResult& result = job->result();
    if (result.received == 0) return Buffer();
    result.data.Truncate(static_cast<size_t>(result.received));
    return std::move(result.data).Freeze();
  }

  absl::StatusOr<std::unique_ptr<ObjectReader>> Open(std::string_view uri,
                                                     const ReadOptions& options) override {
    const absl::Time start = absl::Now();
    DATAECHO_ASSIGN_OR_RETURN(ObjectInfo info, Stat(uri));
    const absl::Duration latency = absl::Now() - start;
    DATAECHO_ASSIGN_OR_RETURN(HttpRequest request, backend_->ReadRequest(uri, info.version));
    if (info.size == 0) DATAECHO_RETURN_IF_ERROR(CheckEmpty(info, request));
    uint64_t begin = std::min(options.offset, info.size);
    uint64_t end = begin + std::min(options.length, info.size - begin);
    std::string header = backend_->VersionHeader(info.version);
    return std::make_unique<RemoteReader>(client_, std::move(info), std::move(request),
                                          std::move(header), begin, end, options.read_ahead,
                                          latency);
  }

  absl::StatusOr<std::vector<ObjectInfo>> List(std::string_view prefix) override {
    DATAECHO_ASSIGN_OR_RETURN(std::vector<ObjectInfo> out, backend_->List(*client_, prefix));
    std::sort(out.begin(), out.end(),
              [](const ObjectInfo& a, const ObjectInfo& b) { return a.uri < b.uri; });
    return out;
  }

 private:
  // A stat that says 0 bytes is checked with a GET of the first byte: a
  // reader of 0 bytes would otherwise never ask.
  absl::Status CheckEmpty(const ObjectInfo& info, HttpRequest request) {
    request.ranged = true;
    request.begin = 0;
    request.end = 1;
    request.version_header = backend_->VersionHeader(info.version);
    request.pinned_version = info.version;
    auto job = std::make_shared<HttpJob>(std::move(request));
    DATAECHO_RETURN_IF_ERROR(client_->Run(job));
    const HttpResult& result = job->result();
    if (result.received > 0 || result.object_size > 0) {
      const uint64_t served =
          result.object_size > 0 ? static_cast<uint64_t>(result.object_size) : result.received;
      return SizeMismatch(job->request().display, 0, 0, served);
    }
    return absl::OkStatus();
  }

  const std::shared_ptr<HttpClient> client_;
  const std::unique_ptr<RemoteBackend> backend_;
};

}  // namespace

std::string OptionOrEnv(const std::string& option, std::initializer_list<const char*> vars) {
  if (!option.empty()) return option;
  for (const char* var : vars) {
    const char* value = std::getenv(var);
    if (value != nullptr && *value != '\0') return value;
  }
  return "";
}

std::optional<ObjectInfo> InfoFromHead(std::string_view uri, const HttpResult& head,
                                       bool last_modified_version) {
  ObjectInfo info;
  info.uri = std::string(uri);
  auto length = head.headers.find("content-length");
  if (length == head.headers.end() || !absl::SimpleAtoi(length->second, &info.size)) {
    return std::nullopt;
  }
  if (auto etag = head.headers.find("etag"); etag != head.headers.end()) {
    info.version = etag->second;
  } else if (auto lm = head.headers.find("last-modified");
             last_modified_version && lm != head.headers.end()) {
    info.version = lm->second;
  }
  return info;
}

HttpRequest RequestFor(std::string_view uri, std::string url) {
  HttpRequest r;
  r.url = std::move(url);
  r.display = RedactUri(uri);
  return r;
}

std::string ListingWhere(const BucketKey& bk, std::string_view prefix) {
  return fmt::format("listing of bucket '{}', prefix '{}' ({})", TerminalSafe(bk.bucket),
                     TerminalSafe(bk.key), RedactUri(prefix));
}

absl::StatusOr<std::vector<ObjectInfo>> ListAllPages(std::string_view where,
                                                     const FetchPage& fetch) {
  std::vector<ObjectInfo> out;
  std::set<std::string> uris;
  std::set<std::string> tokens;
  std::string token;
  for (int page = 1;; ++page) {
    if (page > kMaxListPages) {
      return absl::ResourceExhaustedError(
          fmt::format("{}: more than {} pages; narrow the prefix", where, kMaxListPages));
    }
    absl::StatusOr<ListPage> listed = fetch(token, page);
    if (!listed.ok()) {
      return absl::Status(
          listed.status().code(),
          fmt::format("{}: page {}: {}", where, page, std::string(listed.status().message())));
    }
    for (ObjectInfo& info : listed->objects) {
      if (!uris.insert(info.uri).second) {
        return absl::DataLossError(
            fmt::format("{}: page {} lists {} again", where, page, RedactUri(info.uri)));
      }
      out.push_back(std::move(info));
    }
    if (listed->next_token.empty()) return out;
    if (listed->objects.empty()) {
      return absl::DataLossError(
          fmt::format("{}: page {} has a next page but lists nothing (a listing that never ends)",
                      where, page));
    }
    if (!tokens.insert(listed->next_token).second) {
      return absl::DataLossError(fmt::format(
          "{}: page {} repeats an earlier page token (a listing that never ends)", where, page));
    }
    token = std::move(listed->next_token);
  }
}

absl::StatusOr<std::vector<ObjectInfo>> ListBucket(HttpClient& client, std::string_view prefix,
                                                   const PageRequest& page_request,
                                                   ParsePage parse) {
  DATAECHO_ASSIGN_OR_RETURN(BucketKey bk, SplitBucketUri(prefix));
  return ListAllPages(ListingWhere(bk, prefix),
                      [&](const std::string& token, int) -> absl::StatusOr<ListPage> {
                        auto job = std::make_shared<HttpJob>(page_request(bk, token));
                        DATAECHO_RETURN_IF_ERROR(client.Run(job));
                        return parse(job->result().body, bk.bucket);
                      });
}

std::unique_ptr<ObjectStore> NewRemoteStore(std::shared_ptr<HttpClient> client,
                                            std::unique_ptr<RemoteBackend> backend) {
  return std::make_unique<RemoteStore>(std::move(client), std::move(backend));
}

}  // namespace dataecho::internal
