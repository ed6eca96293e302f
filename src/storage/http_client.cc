// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "storage/http_client.h"

#include <curl/curl.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <mutex>

#include "fmt/format.h"
#include "storage/http_response.h"
#include "storage/uri.h"

namespace dataecho::internal {
namespace {

constexpr size_t kMaxBody = size_t{64} << 20;
constexpr size_t kMaxErrorBody = 4096;

std::string Where(const HttpJob& job) {
  if (!job.ranged) return "";
  return fmt::format(" at offset {} (range {}-{})", job.begin + job.received, job.begin,
                     job.end - 1);
}

}  // namespace

HttpClient::HttpClient(const HttpOptions& http, const RetryOptions& retry)
    : http_(http), retry_(retry) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  multi_ = curl_multi_init();
  // Keep idle connections for reuse. By default libcurl sizes its cache at 4
  // connections per transfer in progress, so it closed most of them whenever
  // the transfers dwindled (at the end of every object read), and the next
  // reader paid new connections (and TLS handshakes).
  curl_multi_setopt(static_cast<CURLM*>(multi_), CURLMOPT_MAXCONNECTS,
                    4L * std::max(1, http_.max_concurrency));
  timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  thread_ = std::thread([this] { Loop(); });
}

HttpClient::~HttpClient() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  curl_multi_wakeup(multi_);
  thread_.join();
  for (void* easy : idle_easies_) curl_easy_cleanup(easy);
  curl_multi_cleanup(multi_);
  if (timer_fd_ >= 0) close(timer_fd_);
}

void HttpClient::Submit(std::shared_ptr<HttpJob> job) {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) {
      job->status = absl::CancelledError(fmt::format("{}: client shut down", job->request.display));
      absl::MutexLock job_lock(&job->mu_);
      job->done_ = true;
      return;
    }
    submitted_.push_back(std::move(job));
  }
  curl_multi_wakeup(multi_);
}

void HttpClient::Cancel(const std::shared_ptr<HttpJob>& job) {
  if (job->done()) return;
  {
    absl::MutexLock lock(&mu_);
    cancelled_.push_back(job);
  }
  curl_multi_wakeup(multi_);
}

absl::Status HttpClient::Wait(HttpJob& job) {
  absl::MutexLock lock(&job.mu_);
  job.mu_.Await(absl::Condition(&job.done_));
  return job.status;
}

absl::Status HttpClient::Run(const std::shared_ptr<HttpJob>& job) {
  Submit(job);
  return Wait(*job);
}

size_t HttpClient::OnHeader(char* data, size_t size, size_t n, void* ptr) {
  auto* job = static_cast<HttpJob*>(ptr);
  job->last_progress_ = absl::Now();
  std::string_view line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) {
    job->headers.clear();  // a new response (after a redirect or a 100)
    return size * n;
  }
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    job->headers[name] = TrimWhitespace(line.substr(colon + 1));
  }
  return size * n;
}

size_t HttpClient::OnBody(char* data, size_t size, size_t n, void* ptr) {
  auto* job = static_cast<HttpJob*>(ptr);
  const size_t total = size * n;
  job->last_progress_ = absl::Now();
  if (!job->attempt_checked_) {
    job->attempt_checked_ = true;
    long code = 0;
    curl_easy_getinfo(static_cast<CURL*>(job->easy_), CURLINFO_RESPONSE_CODE, &code);
    job->attempt_accepts_body_ = code >= 200 && code < 300;
    if (!job->attempt_accepts_body_) job->body.clear();
    if (job->attempt_accepts_body_) {
      auto version = job->headers.find(job->version_header);
      if (version != job->headers.end() && !job->pinned_version.empty() &&
          version->second != job->pinned_version) {
        job->fatal_ = absl::FailedPreconditionError(
            fmt::format("{}: object changed while being read{} (version {} is now {})",
                        job->request.display, Where(*job), job->pinned_version, version->second));
        return 0;
      }
      if (version != job->headers.end() && job->pinned_version.empty()) {
        job->pinned_version = version->second;
      }
    }
    if (job->attempt_accepts_body_ && job->ranged) {
      const uint64_t want = job->begin + job->received;
      if (code == 206) {
        int64_t first, object_size;
        auto cr = job->headers.find("content-range");
        if (cr == job->headers.end() || !ParseContentRange(cr->second, &first, &object_size) ||
            first < 0) {
          job->attempt_error_ = "206 without a valid Content-Range";
          return 0;
        }
        if (object_size >= 0) job->object_size = object_size;
        if (static_cast<uint64_t>(first) > want) {
          job->attempt_error_ =
              fmt::format("Content-Range starts at byte {}, asked for {}", first, want);
          return 0;
        }
        job->attempt_skip_ = want - static_cast<uint64_t>(first);
      } else {  // a 200 carries the whole object: skip to the wanted byte
        curl_off_t length = -1;
        curl_easy_getinfo(static_cast<CURL*>(job->easy_), CURLINFO_CONTENT_LENGTH_DOWNLOAD_T,
                          &length);
        if (length >= 0) job->object_size = length;
        job->attempt_skip_ = want;
      }
    }
  }
  if (!job->attempt_accepts_body_) {
    if (job->body.size() < kMaxErrorBody) job->body.append(data, std::min(total, kMaxErrorBody));
    return total;
  }
  if (!job->ranged) {
    if (job->body.size() + total > kMaxBody) {
      job->fatal_ = absl::ResourceExhaustedError(
          fmt::format("{}: response body larger than {} bytes", job->request.display, kMaxBody));
      return 0;
    }
    job->body.append(data, total);
    return total;
  }
  size_t skip = static_cast<size_t>(std::min<uint64_t>(job->attempt_skip_, total));
  job->attempt_skip_ -= skip;
  size_t len = total - skip;
  uint64_t room = (job->end - job->begin) - job->received;
  size_t take = static_cast<size_t>(std::min<uint64_t>(len, room));
  std::memcpy(job->data.data() + job->received, data + skip, take);
  job->received += take;
  if (job->received == job->end - job->begin) {
    job->complete_ = true;
    if (take < len) return 0;  // more than asked for (a 200): stop, we have it all
  }
  return total;
}

void HttpClient::StartAttempt(const std::shared_ptr<HttpJob>& job) {
  CURL* easy;
  if (!idle_easies_.empty()) {
    easy = static_cast<CURL*>(idle_easies_.back());
    idle_easies_.pop_back();
    curl_easy_reset(easy);
  } else {
    easy = curl_easy_init();
  }
  HttpJob& j = *job;
  j.easy_ = easy;
  j.attempt_checked_ = false;
  j.attempt_accepts_body_ = false;
  j.attempt_skip_ = 0;
  j.attempt_error_.clear();
  j.attempt_start_received_ = j.received;
  j.last_progress_ = absl::Now();
  j.attempt_started = j.last_progress_;
  j.stalled_ = false;
  j.headers.clear();
  j.body.clear();
  ++j.attempts;
  if (j.ranged && j.data.size() < j.end - j.begin) {
    j.data = MutableBuffer(static_cast<size_t>(j.end - j.begin));
  }
  curl_slist* list = nullptr;
  for (const std::string& h : j.request.headers) list = curl_slist_append(list, h.c_str());
  if (j.ranged) {
    list = curl_slist_append(
        list, fmt::format("Range: bytes={}-{}", j.begin + j.received, j.end - 1).c_str());
  }
  j.header_list_ = list;
  curl_easy_setopt(easy, CURLOPT_URL, j.request.url.c_str());
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(http_.connect_timeout)));
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(easy, CURLOPT_MAXREDIRS, 5L);
  curl_easy_setopt(easy, CURLOPT_USERAGENT, http_.user_agent.c_str());
  curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, 512L * 1024);
  curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, http_.verify_tls ? 1L : 0L);
  curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, http_.verify_tls ? 2L : 0L);
  if (j.request.head) curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
  if (!j.request.aws_sigv4.empty()) {
    curl_easy_setopt(easy, CURLOPT_AWS_SIGV4, j.request.aws_sigv4.c_str());
    curl_easy_setopt(easy, CURLOPT_USERPWD, j.request.userpwd.c_str());
  }
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &HttpClient::OnHeader);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &j);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &HttpClient::OnBody);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &j);
  curl_easy_setopt(easy, CURLOPT_PRIVATE, &j);
  j.state_ = HttpJob::State::kActive;
  active_[&j] = job;
  curl_multi_add_handle(static_cast<CURLM*>(multi_), easy);
}

void HttpClient::Detach(HttpJob& job) {
  if (job.easy_ == nullptr) return;
  curl_multi_remove_handle(static_cast<CURLM*>(multi_), static_cast<CURL*>(job.easy_));
  curl_slist_free_all(static_cast<curl_slist*>(job.header_list_));
  job.header_list_ = nullptr;
  idle_easies_.push_back(job.easy_);
  job.easy_ = nullptr;
  active_.erase(&job);
}

void HttpClient::Finish(const std::shared_ptr<HttpJob>& job_ref, absl::Status status) {
  // A copy: `job_ref` may be the active_ entry that Detach() erases.
  const std::shared_ptr<HttpJob> job =
      job_ref;  // NOLINT(performance-unnecessary-copy-initialization)
  if (job->state_ == HttpJob::State::kDone) return;
  Detach(*job);
  job->state_ = HttpJob::State::kDone;
  job->status = std::move(status);
  job->finished = absl::Now();
  absl::MutexLock lock(&job->mu_);
  job->done_ = true;
}

void HttpClient::OnAttemptDone(const std::shared_ptr<HttpJob>& job, int curl_code) {
  HttpJob& j = *job;
  long code = 0;
  curl_easy_getinfo(static_cast<CURL*>(j.easy_), CURLINFO_RESPONSE_CODE, &code);
  Detach(j);
  j.http_code = static_cast<int>(code);
  if (!j.fatal_.ok()) return Finish(job, j.fatal_);
  if (j.complete_) return Finish(job, absl::OkStatus());
  const std::string& who = j.request.display;
  std::string cause;
  if (!j.attempt_error_.empty()) {
    cause = j.attempt_error_;
  } else if (curl_code != CURLE_OK) {
    auto err = static_cast<CURLcode>(curl_code);
    std::string what = curl_easy_strerror(err);
    switch (err) {
      case CURLE_COULDNT_RESOLVE_HOST:
      case CURLE_COULDNT_RESOLVE_PROXY:
      case CURLE_COULDNT_CONNECT:
        if (!retry_.retry_connect_errors) {
          return Finish(job,
                        absl::UnavailableError(fmt::format("{}: {} (not retried)", who, what)));
        }
        break;
      case CURLE_URL_MALFORMAT:
      case CURLE_UNSUPPORTED_PROTOCOL:
        return Finish(job, absl::InvalidArgumentError(fmt::format("{}: {}", who, what)));
      case CURLE_PEER_FAILED_VERIFICATION:
      case CURLE_SSL_CACERT_BADFILE:
      case CURLE_SSL_CERTPROBLEM:
        return Finish(job, absl::UnavailableError(fmt::format("{}: {}", who, what)));
      case CURLE_OPERATION_TIMEDOUT:
        if (j.stalled_) {
          what = fmt::format("stalled: no data for {}", absl::FormatDuration(http_.stall_timeout));
        }
        break;
      default:
        break;
    }
    cause = j.ranged ? fmt::format("{} after {} bytes", what, j.received) : what;
  } else if (code >= 200 && code < 300) {
    if (!j.ranged) return Finish(job, absl::OkStatus());
    if (j.object_size >= 0 && j.begin + j.received >= static_cast<uint64_t>(j.object_size)) {
      return Finish(job, absl::OkStatus());  // the object ends before the range does
    }
    cause = fmt::format("short body: {} of {} bytes", j.received, j.end - j.begin);
  } else if (code == 416 && j.ranged) {
    int64_t first, size = -1;
    auto cr = j.headers.find("content-range");
    if (cr != j.headers.end()) ParseContentRange(cr->second, &first, &size);
    if (size >= 0) j.object_size = size;
    if (size < 0 || j.begin + j.received >= static_cast<uint64_t>(size)) {
      return Finish(job, absl::OkStatus());  // at the end: a clean, empty read
    }
    return Finish(job,
                  absl::FailedPreconditionError(fmt::format(
                      "{}: object shrank to {} bytes while being read{}", who, size, Where(j))));
  } else if (code == 408 || code == 429 || code >= 500) {
    cause = fmt::format("HTTP {}{}", code, ErrorDetail(j.body, j.request.secrets));
  } else {
    std::string msg =
        fmt::format("{}: HTTP {}{}{}", who, code, ErrorDetail(j.body, j.request.secrets), Where(j));
    switch (code) {
      case 404:
        return Finish(job, absl::NotFoundError(msg));
      case 401:
      case 403:
        return Finish(job, absl::PermissionDeniedError(msg));
      case 412:
        return Finish(job, absl::FailedPreconditionError(msg + ": object changed"));
      default:
        if (code >= 400) return Finish(job, absl::InvalidArgumentError(msg));
        return Finish(job, absl::UnknownError(msg));
    }
  }
  bool progressed = j.received > j.attempt_start_received_;
  j.failures_in_row_ = progressed ? 1 : j.failures_in_row_ + 1;
  j.last_cause_ = cause;
  if (j.failures_in_row_ >= retry_.max_attempts) {
    return Finish(job, absl::UnavailableError(fmt::format(
                           "{}{}: giving up after {} attempts ({} in a row without progress); "
                           "last cause: {}",
                           who, Where(j), j.attempts, j.failures_in_row_, cause)));
  }
  j.retry_at_ = absl::Now() + RetryDelay(retry_, j.failures_in_row_, j.headers);
  j.state_ = HttpJob::State::kWaiting;
  waiting_.push_back(job);
}

absl::Time HttpClient::AbortStalled() {
  absl::Time now = absl::Now();
  absl::Time next = absl::InfiniteFuture();
  std::vector<std::shared_ptr<HttpJob>> stalled;
  for (const auto& [raw, job] : active_) {
    absl::Time deadline = job->last_progress_ + http_.stall_timeout;
    if (deadline <= now) {
      stalled.push_back(job);
    } else {
      next = std::min(next, deadline);
    }
  }
  for (const auto& job : stalled) {
    job->stalled_ = true;
    OnAttemptDone(job, CURLE_OPERATION_TIMEDOUT);
  }
  return stalled.empty() ? next : now;
}

StartPacer& HttpClient::HostPacer(HttpJob& job) {
  if (job.host_pacer_ == nullptr) {  // map nodes stay put, so the pointer stays valid
    std::string_view url = job.request.url;
    const size_t authority = url.find("://");
    const size_t path = url.find('/', authority == std::string_view::npos ? 0 : authority + 3);
    std::string_view host = url.substr(0, path);
    auto it = host_pacers_.find(host);
    if (it == host_pacers_.end()) it = host_pacers_.emplace(std::string(host), StartPacer()).first;
    job.host_pacer_ = &it->second;
  }
  return *job.host_pacer_;
}

absl::Time HttpClient::PacedStart(HttpJob& job) {
  return std::max(job.pacer->next(), HostPacer(job).next());
}

void HttpClient::StartQueued() {
  std::deque<std::shared_ptr<HttpJob>> held;  // paced, not ready
  while (!queued_.empty() && static_cast<int>(active_.size()) < http_.max_concurrency) {
    std::shared_ptr<HttpJob> job = std::move(queued_.front());
    queued_.pop_front();
    if (job->state_ == HttpJob::State::kDone) continue;
    if (job->pacer) {
      const absl::Time now = absl::Now();
      if (now < PacedStart(*job)) {
        held.push_back(std::move(job));
        continue;
      }
      job->pacer->Started(now, job->pace);
      HostPacer(*job).Started(now, job->round_trip / std::max(1, http_.max_concurrency));
    }
    StartAttempt(job);
  }
  queued_.insert(queued_.begin(), held.begin(), held.end());
}

void HttpClient::Loop() {
  CURLM* multi = static_cast<CURLM*>(multi_);
  while (true) {
    std::vector<std::shared_ptr<HttpJob>> submitted, cancelled;
    bool stopping;
    {
      absl::MutexLock lock(&mu_);
      submitted.swap(submitted_);
      cancelled.swap(cancelled_);
      stopping = stopping_;
    }
    for (auto& job : submitted) {
      job->state_ = HttpJob::State::kQueued;
      queued_.push_back(std::move(job));
    }
    if (stopping) {
      auto stop = [&](const std::shared_ptr<HttpJob>& job) {
        Finish(job, absl::CancelledError(
                        fmt::format("{}: cancelled (client shut down)", job->request.display)));
      };
      while (!active_.empty()) stop(active_.begin()->second);
      for (auto& job : queued_) stop(job);
      for (auto& job : waiting_) stop(job);
      return;
    }
    for (auto& job : cancelled) {
      Finish(job, absl::CancelledError(fmt::format("{}: cancelled", job->request.display)));
    }
    absl::Time now = absl::Now();
    std::vector<std::shared_ptr<HttpJob>> still_waiting;
    for (auto& job : waiting_) {
      if (job->state_ == HttpJob::State::kDone) continue;
      if (job->retry_at_ <= now) {
        job->state_ = HttpJob::State::kQueued;
        queued_.push_back(std::move(job));
      } else {
        still_waiting.push_back(std::move(job));
      }
    }
    waiting_.swap(still_waiting);
    StartQueued();
    int running = 0;
    curl_multi_perform(multi, &running);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      HttpJob* raw = nullptr;
      curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &raw);
      auto it = active_.find(raw);
      if (it == active_.end()) continue;
      std::shared_ptr<HttpJob> job = it->second;
      OnAttemptDone(job, msg->data.result);
    }
    // Wake for the first retry, paced start or stall due, or at once if a
    // job can start. libcurl's wait has millisecond steps, which would start
    // paced requests up to a millisecond late (a pace at 16 ranges of 20 ms is
    // 1.3 ms), so a timer descriptor ends the wait on time.
    absl::Time wake = AbortStalled();
    for (auto& job : waiting_) wake = std::min(wake, job->retry_at_);
    if (static_cast<int>(active_.size()) < http_.max_concurrency) {
      for (auto& job : queued_) {
        wake = std::min(wake, job->pacer ? PacedStart(*job) : absl::InfinitePast());
      }
    }
    const absl::Duration wait = std::min(wake - absl::Now(), absl::Seconds(1));
    if (wait <= absl::ZeroDuration()) continue;
    itimerspec timer{};
    timer.it_value = absl::ToTimespec(wait);
    timerfd_settime(timer_fd_, 0, &timer, nullptr);
    curl_waitfd timer_wait{timer_fd_, CURL_WAIT_POLLIN, 0};
    curl_multi_poll(multi, &timer_wait, 1, static_cast<int>(absl::ToInt64Milliseconds(wait)) + 1,
                    nullptr);
    if (timer_wait.revents != 0) {
      uint64_t expirations;
      [[maybe_unused]] ssize_t n = read(timer_fd_, &expirations, sizeof(expirations));
    }
  }
}

}  // namespace dataecho::internal
