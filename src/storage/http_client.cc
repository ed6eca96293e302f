// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "storage/http_client.h"

#include <curl/curl.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>

#include "dataecho/stage_kit.h"
#include "dataecho/trace.h"
#include "fmt/format.h"
#include "storage/http_response.h"
#include "storage/http_transfer.h"

namespace dataecho::internal {

HttpJob::HttpJob(HttpRequest request, HttpJobOptions options)
    : request_(std::move(request)),
      options_(std::move(options)),
      transfer_(std::make_unique<HttpTransfer>(*this)) {
  result_.data = std::move(options_.buffer);  // used if large enough (HttpTransfer::Begin)
}

HttpJob::~HttpJob() = default;

HttpClient::HttpClient(const HttpOptions& http, const RetryOptions& retry)
    : http_(http), retry_(retry) {
  // A function-local static (thread-safe initialization that TSan sees, unlike
  // absl::call_once in an uninstrumented Abseil).
  static const bool curl_ready = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  (void)curl_ready;
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
  if (getpid() != pid_) {
    // A copy inherited through fork(): the network thread runs in the parent
    // only (joining it here would wait forever) and libcurl's state may be
    // mid-update. Leave both alone.
    thread_.detach();
    return;
  }
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
      job->result_.status =
          absl::CancelledError(fmt::format("{}: client shut down", job->request_.display));
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
  return job.result_.status;
}

absl::Status HttpClient::Run(const std::shared_ptr<HttpJob>& job) {
  // On the timeline (trace.h): the request, retries included, on the
  // thread that waits for it.
  TraceArg arg;
  if (TraceEnabled()) arg.uri = std::make_shared<const std::string>(job->request_.display);
  TraceScope span("read", "http", std::move(arg));
  Submit(job);
  return Wait(*job);
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
  HttpTransfer& t = *job->transfer_;
  t.Begin(easy, http_);
  t.state = HttpTransfer::State::kActive;
  active_[job.get()] = job;
  curl_multi_add_handle(static_cast<CURLM*>(multi_), easy);
}

void HttpClient::Detach(HttpJob& job) {
  HttpTransfer& t = *job.transfer_;
  if (t.easy == nullptr) return;
  curl_multi_remove_handle(static_cast<CURLM*>(multi_), static_cast<CURL*>(t.easy));
  idle_easies_.push_back(t.End());
  active_.erase(&job);
}

void HttpClient::Finish(const std::shared_ptr<HttpJob>& job_ref, absl::Status status) {
  // A copy: `job_ref` may be the active_ entry that Detach() erases.
  // NOLINTNEXTLINE(performance-unnecessary-copy-initialization)
  const std::shared_ptr<HttpJob> job = job_ref;
  HttpTransfer& t = *job->transfer_;
  if (t.state == HttpTransfer::State::kDone) return;
  Detach(*job);
  t.state = HttpTransfer::State::kDone;
  job->result_.status = std::move(status);
  job->result_.finished = absl::Now();
  absl::MutexLock lock(&job->mu_);
  job->done_ = true;
}

void HttpClient::OnAttemptDone(const std::shared_ptr<HttpJob>& job, int curl_code) {
  HttpTransfer& t = *job->transfer_;
  long code = 0;
  curl_easy_getinfo(static_cast<CURL*>(t.easy), CURLINFO_RESPONSE_CODE, &code);
  Detach(*job);
  job->result_.http_code = static_cast<int>(code);
  t.attempt.curl_code = curl_code;
  t.attempt.failures_in_row = t.failures_in_row;
  AttemptVerdict verdict =
      ClassifyAttempt(job->request_, job->result_, t.attempt, retry_, http_.stall_timeout);
  job->result_.object_size = verdict.object_size;
  t.failures_in_row = verdict.failures_in_row;
  switch (verdict.kind) {
    case AttemptVerdict::kDone:
    case AttemptVerdict::kFail: return Finish(job, std::move(verdict.status));
    case AttemptVerdict::kRetry:
      TraceInstant("retry", "http");
      t.retry_at = absl::Now() + verdict.delay;
      t.state = HttpTransfer::State::kWaiting;
      waiting_.push_back(job);
      return;
  }
}

absl::Time HttpClient::AbortStalled() {
  absl::Time now = absl::Now();
  absl::Time next = absl::InfiniteFuture();
  std::vector<std::shared_ptr<HttpJob>> stalled;
  for (const auto& [raw, job] : active_) {
    absl::Time deadline = job->transfer_->last_progress + http_.stall_timeout;
    if (deadline <= now) {
      stalled.push_back(job);
    } else {
      next = std::min(next, deadline);
    }
  }
  for (const auto& job : stalled) {
    job->transfer_->attempt.stalled = true;
    OnAttemptDone(job, CURLE_OPERATION_TIMEDOUT);
  }
  return stalled.empty() ? next : now;
}

StartPacer& HttpClient::HostPacer(HttpJob& job) {
  HttpTransfer& t = *job.transfer_;
  if (t.host_pacer == nullptr) {  // map nodes stay put, so the pointer stays valid
    std::string_view url = job.request_.url;
    const size_t authority = url.find("://");
    const size_t path = url.find('/', authority == std::string_view::npos ? 0 : authority + 3);
    std::string_view host = url.substr(0, path);
    auto it = host_pacers_.find(host);
    if (it == host_pacers_.end()) it = host_pacers_.emplace(std::string(host), StartPacer()).first;
    t.host_pacer = &it->second;
  }
  return *t.host_pacer;
}

absl::Time HttpClient::PacedStart(HttpJob& job) {
  return std::max(job.options_.pacer->next(), HostPacer(job).next());
}

void HttpClient::StartQueued() {
  std::deque<std::shared_ptr<HttpJob>> held;  // paced, not ready
  while (!queued_.empty() && static_cast<int>(active_.size()) < http_.max_concurrency) {
    std::shared_ptr<HttpJob> job = std::move(queued_.front());
    queued_.pop_front();
    if (job->transfer_->state == HttpTransfer::State::kDone) continue;
    if (const HttpJobOptions& o = job->options_; o.pacer) {
      const absl::Time now = absl::Now();
      if (now < PacedStart(*job)) {
        held.push_back(std::move(job));
        continue;
      }
      o.pacer->Started(now, o.pace);
      HostPacer(*job).Started(now, o.round_trip / std::max(1, http_.max_concurrency));
    }
    StartAttempt(job);
  }
  queued_.insert(queued_.begin(), held.begin(), held.end());
}

void HttpClient::Loop() {
  StartPipelineThread("http transfers");
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
      job->transfer_->state = HttpTransfer::State::kQueued;
      queued_.push_back(std::move(job));
    }
    if (stopping) {
      auto stop = [&](const std::shared_ptr<HttpJob>& job) {
        Finish(job, absl::CancelledError(
                        fmt::format("{}: cancelled (client shut down)", job->request_.display)));
      };
      while (!active_.empty()) stop(active_.begin()->second);
      for (auto& job : queued_) stop(job);
      for (auto& job : waiting_) stop(job);
      return;
    }
    for (auto& job : cancelled) {
      Finish(job, absl::CancelledError(fmt::format("{}: cancelled", job->request_.display)));
    }
    absl::Time now = absl::Now();
    std::vector<std::shared_ptr<HttpJob>> still_waiting;
    for (auto& job : waiting_) {
      HttpTransfer& t = *job->transfer_;
      if (t.state == HttpTransfer::State::kDone) continue;
      if (t.retry_at <= now) {
        t.state = HttpTransfer::State::kQueued;
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
    for (auto& job : waiting_) wake = std::min(wake, job->transfer_->retry_at);
    if (static_cast<int>(active_.size()) < http_.max_concurrency) {
      for (auto& job : queued_) {
        wake = std::min(wake, job->options_.pacer ? PacedStart(*job) : absl::InfinitePast());
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
