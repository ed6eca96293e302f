// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// storage/store_options.h: how the object stores talk to the network.
//
// Plain structs with a default per field, passed to `OpenObjectStore()`
// (object_store.h). Fields left empty fall back to the usual environment
// variables, read once when the store is opened:
//
//   dataecho::ObjectStoreOptions options;
//   options.http.max_concurrency = 32;
//   options.retry.max_attempts = 5;
//   options.s3.endpoint = "http://127.0.0.1:4568";   // else AWS_ENDPOINT_URL
//   auto store = dataecho::OpenObjectStore(options);
//
// See docs/storage.md for the retry policy and the meaning of each error.
#ifndef DATAECHO_STORAGE_STORE_OPTIONS_H_
#define DATAECHO_STORAGE_STORE_OPTIONS_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/time/time.h"

namespace dataecho {

// When and how often a failed HTTP request is retried.
//
// Retried: 408, 429, 5xx, connection reset, short body, stall, a
// Content-Range that does not start at the byte asked for, and transport
// errors. Not retried (one request): 400, 401, 403, 404, 412, a changed
// ETag, DNS failure and connection refused (unless retry_connect_errors).
struct RetryOptions {
  // Requests made for one range before giving up with UNAVAILABLE, counting
  // the first. An attempt that delivered bytes resets the count of failures
  // in a row (a long transfer on a flaky link keeps making progress).
  int max_attempts = 6;
  // Wait before the first retry; doubled after each failure, up to
  // max_backoff, then jittered uniformly in [backoff / 2, backoff].
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(10);
  // A server's Retry-After is honoured (in place of the backoff when
  // longer) up to this bound.
  absl::Duration max_retry_after = absl::Seconds(60);
  // Retry "could not resolve host" and "connection refused" too. Off by
  // default: a wrong host or port fails fast and clearly.
  bool retry_connect_errors = false;
};

struct HttpOptions {
  // Transfers in flight at once over the whole store (connections are
  // reused between them).
  int max_concurrency = 32;
  // A reader splits its object into ranged GETs of this size and keeps up
  // to ReadOptions::read_ahead / chunk_size of them submitted or unread.
  size_t chunk_size = size_t{4} << 20;
  // Limit to establish a TCP (and TLS) connection.
  absl::Duration connect_timeout = absl::Seconds(10);
  // A transfer that receives no byte for this long (connecting, waiting for
  // the response, or mid-body) is aborted and retried.
  absl::Duration stall_timeout = absl::Seconds(30);
  // Verify TLS certificates (https).
  bool verify_tls = true;
  // Sent as User-Agent.
  std::string user_agent = "dataecho";
};

// gs://bucket/key through the Cloud Storage JSON API.
struct GcsOptions {
  // "http://host:port" of an emulator; empty: STORAGE_EMULATOR_HOST, else
  // https://storage.googleapis.com.
  std::string endpoint;
  // OAuth2 bearer token; empty: GOOGLE_OAUTH_ACCESS_TOKEN, else anonymous.
  std::string access_token;
};

// s3://bucket/key, signed with AWS Signature V4.
struct S3Options {
  // "http://host:port" (path-style requests); empty: AWS_ENDPOINT_URL_S3,
  // then AWS_ENDPOINT_URL, else https://BUCKET.s3.REGION.amazonaws.com.
  std::string endpoint;
  // Empty: AWS_REGION, then AWS_DEFAULT_REGION, else "us-east-1".
  std::string region;
  // Empty: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN.
  // Without a key pair requests are sent unsigned.
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;
  // Keys per ListObjectsV2 page (S3 caps it at 1000).
  int list_page_size = 1000;
};

struct ObjectStoreOptions {
  RetryOptions retry;
  HttpOptions http;
  GcsOptions gcs;
  S3Options s3;
};

}  // namespace dataecho

#endif  // DATAECHO_STORAGE_STORE_OPTIONS_H_
