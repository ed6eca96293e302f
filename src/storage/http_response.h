// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// http_response.h: what the HTTP client reads from a response, apart from
// moving its bytes: the Content-Range header, a short and safe detail from an
// error body, the delay before a retry (capped exponential backoff with
// jitter, at least what Retry-After asks for), and the verdict on one finished
// attempt (done, retry, or fail with which status). Internal; pure functions
// (but for the jitter's random draw), so the transfer engine (http_client.h)
// keeps to transfers.
//
//   AttemptVerdict v = ClassifyAttempt(request, result, attempt, retry, stall_timeout);
//   if (v.kind == AttemptVerdict::kRetry) ...  // again after v.delay
#ifndef DATAECHO_SRC_STORAGE_HTTP_RESPONSE_H_
#define DATAECHO_SRC_STORAGE_HTTP_RESPONSE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "dataecho/storage/store_options.h"
#include "storage/http_request.h"

namespace dataecho::internal {

// `s` without leading and trailing white space.
std::string TrimWhitespace(std::string_view s);

// "bytes a-b/total" or "bytes */total": sets *first and *total (-1 for a
// "*"); false if `value` is not of that form.
bool ParseContentRange(const std::string& value, int64_t* first, int64_t* total);

// " (detail)" from an error body: an XML <Code>/<Message> or a JSON
// "message", else its first line; at most 200 characters, every one of
// `secrets` redacted. Empty if there is nothing to say.
std::string ErrorDetail(const std::string& body, const std::vector<std::string>& secrets);

// The wait before the next attempt after `failures_in_row` (>= 1) failed
// attempts without progress: uniform in [b/2, b], b = initial_backoff x
// 2^(failures_in_row - 1) capped at max_backoff; at least the response's
// Retry-After (seconds or an HTTP date; lower-case header names) up to
// max_retry_after.
absl::Duration RetryDelay(const RetryOptions& retry, int failures_in_row,
                          const std::map<std::string, std::string>& headers);

// " at offset N (range A-B)" for a ranged request that has `received` bytes;
// empty for other requests. Appended to errors.
std::string RangeWhere(const HttpRequest& request, uint64_t received);

// How one attempt of a request ended, apart from what the result holds.
struct HttpAttempt {
  // libcurl's result (CURLcode): CURLE_OK when the transfer completed.
  // CURLE_OPERATION_TIMEDOUT with `stalled` when the client aborted it for
  // receiving nothing for the stall timeout.
  int curl_code = 0;
  bool stalled = false;
  // Set by the body callback: finish the job with this error.
  absl::Status refused;
  // Why the body callback refused the attempt's body (a bad Content-Range):
  // retried.
  std::string body_error;
  // All the wanted bytes are here.
  bool complete = false;
  // HttpResult::received when the attempt started (the attempt made progress
  // if the result has more).
  uint64_t start_received = 0;
  // Failed attempts in a row without progress before this one.
  int failures_in_row = 0;
};

// What to do after an attempt.
struct AttemptVerdict {
  enum Kind { kDone, kRetry, kFail };
  Kind kind = kDone;
  // kDone: OK; kFail: the job's error.
  absl::Status status;
  // kRetry: why, and the wait before the next attempt.
  std::string cause;
  absl::Duration delay;
  // Failed attempts in a row without progress, counting this one.
  int failures_in_row = 0;
  // The object's size as known after the attempt (-1: unknown).
  int64_t object_size = -1;
};

// The verdict on the attempt that just ended, from the result so far
// (http_code, headers, body, received, object_size, attempts of the final
// response): done (all bytes, a complete body, or a range at or past the
// object's end); a retry for a transient cause (transport errors, a stall,
// 408, 429, 5xx, a short body, a refused Content-Range) unless
// retry.max_attempts attempts in a row failed without progress
// (UNAVAILABLE); or the error the response means (NOT_FOUND,
// PERMISSION_DENIED, ...; see RetryOptions in store_options.h).
AttemptVerdict ClassifyAttempt(const HttpRequest& request, const HttpResult& result,
                               const HttpAttempt& attempt, const RetryOptions& retry,
                               absl::Duration stall_timeout);

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_STORAGE_HTTP_RESPONSE_H_
