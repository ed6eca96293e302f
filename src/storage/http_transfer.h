// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// http_transfer.h: the HTTP client's state of one job, and one attempt at it
// as a libcurl transfer: the easy handle's setup (the Range header from the
// first byte not received yet) and the header and body callbacks, which check
// the response version and Content-Range at the first body byte and move the
// bytes into the job's result. Internal to the client (http_client.cc).
//
//   transfer.Begin(easy, http_options);  // then add `easy` to the multi handle
//   ...                                  // libcurl calls OnHeader / OnBody
//   void* easy = transfer.End();         // after removing it; `attempt` says how it went
//
// Thread safety: touched by the client's network thread only.
#ifndef DATAECHO_SRC_STORAGE_HTTP_TRANSFER_H_
#define DATAECHO_SRC_STORAGE_HTTP_TRANSFER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "dataecho/storage/store_options.h"
#include "storage/http_client.h"
#include "storage/http_response.h"

namespace dataecho::internal {

struct HttpTransfer {
  enum class State { kNew, kQueued, kActive, kWaiting, kDone };

  explicit HttpTransfer(HttpJob& job) : job(job), version(job.request().pinned_version) {}

  // Resets the attempt state and sets `easy` (a new or reset libcurl easy
  // handle) up for the next attempt.
  void Begin(void* easy, const HttpOptions& http);
  // Frees what the attempt allocated; returns its easy handle (for reuse).
  // The caller removed it from the multi handle.
  void* End();

  HttpJob& job;
  State state = State::kNew;
  // The version responses must carry: the request's, else the first one seen.
  std::string version;
  int failures_in_row = 0;           // failed attempts in a row without progress
  absl::Time retry_at;               // kWaiting: when the next attempt may start
  StartPacer* host_pacer = nullptr;  // the client's pacer of the job's host, once looked up

  // The attempt in flight (kActive).
  void* easy = nullptr;
  void* header_list = nullptr;
  HttpAttempt attempt;        // how it is going (see ClassifyAttempt)
  absl::Time last_progress;   // last byte of the attempt (or its start)
  bool body_checked = false;  // first body byte of the attempt seen
  bool accepts_body = false;  // a 2xx response: its body is the object's
  uint64_t skip = 0;          // bytes to drop before the wanted offset

  // libcurl's callbacks (through trampolines); return the bytes consumed
  // (fewer: stop the transfer).
  size_t OnHeader(std::string_view line);
  size_t OnBody(const char* data, size_t total);
  // At the first body byte: false (and `attempt` says why) if the body is
  // refused.
  bool CheckFirstBody();
};

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_STORAGE_HTTP_TRANSFER_H_
