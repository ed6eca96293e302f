// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// http_request.h: what the HTTP client (http_client.h) is asked for, and what
// it gives back. Internal; plain data.
//
//   HttpRequest request;
//   request.url = "http://127.0.0.1:8080/data.tfrecord";
//   request.display = request.url;
//   request.ranged = true;  // bytes [0, 4096)
//   request.end = 4096;
//   auto job = std::make_shared<HttpJob>(std::move(request));
//   absl::Status s = client.Run(job);  // then job->result().data holds the bytes
#ifndef DATAECHO_SRC_STORAGE_HTTP_REQUEST_H_
#define DATAECHO_SRC_STORAGE_HTTP_REQUEST_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "dataecho/buffer.h"

namespace dataecho::internal {

// One logical request: a HEAD, a GET of a whole small body (metadata,
// listings), or a GET of the byte range [begin, end) of an object. The client
// may make it several times (attempts); see http_client.h.
struct HttpRequest {
  std::string url;
  // Names the request in errors (the user's URI); never holds credentials.
  std::string display;
  bool head = false;
  std::vector<std::string> headers;  // "Name: value"
  // AWS SigV4 signing ("aws:amz:REGION:s3") with userpwd "KEY:SECRET".
  std::string aws_sigv4;
  std::string userpwd;
  // Strings never to be shown in errors (secrets, tokens).
  std::vector<std::string> secrets;
  // Adds the header `prefix` + `secret` (e.g. "Authorization: Bearer " and a
  // token), the secret kept out of errors.
  void AddSecretHeader(std::string_view prefix, const std::string& secret) {
    headers.push_back(std::string(prefix) + secret);
    secrets.push_back(secret);
  }
  // A ranged GET of object bytes [begin, end); otherwise the whole body is
  // kept in HttpResult::body (up to 64 MiB).
  bool ranged = false;
  uint64_t begin = 0;
  uint64_t end = 0;
  // If not empty, responses must carry this value in `version_header`
  // (FAILED_PRECONDITION otherwise); if empty, the first response's value is
  // pinned for the later attempts.
  std::string pinned_version;
  std::string version_header = "etag";
};

// What came back: valid once the job is done (HttpClient::Wait returned).
struct HttpResult {
  absl::Status status;
  int http_code = 0;                           // of the last attempt
  std::map<std::string, std::string> headers;  // final response, lower-case names
  std::string body;                            // not ranged: the body
  MutableBuffer data;                          // ranged: bytes [begin, begin + received)
  uint64_t received = 0;
  int64_t object_size = -1;  // from Content-Range (or a 200's length), when seen
  int attempts = 0;
  absl::Time attempt_started;  // when the last attempt started
  absl::Time finished;         // when the job finished
};

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_STORAGE_HTTP_REQUEST_H_
