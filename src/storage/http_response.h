// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// http_response.h: what the HTTP client reads from a response, apart from
// moving its bytes: the Content-Range header, a short and safe detail from an
// error body, and the delay before a retry (capped exponential backoff with
// jitter, at least what Retry-After asks for). Internal; pure functions, so
// the transfer engine (http_client.h) keeps to transfers.
#ifndef DATAECHO_SRC_STORAGE_HTTP_RESPONSE_H_
#define DATAECHO_SRC_STORAGE_HTTP_RESPONSE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "dataecho/storage/store_options.h"

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

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_STORAGE_HTTP_RESPONSE_H_
