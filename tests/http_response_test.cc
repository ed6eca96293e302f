// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The HTTP client's pure functions (internal, src/storage/http_response.h):
// Content-Range parsing, error details, retry delays, and the verdict on one
// attempt, case by case.
#include "storage/http_response.h"

#include <curl/curl.h>

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace dataecho::internal {
namespace {

using ::testing::HasSubstr;

// RetryDelay draws uniformly in [b/2, b + 1 ns].
constexpr absl::Duration kJitterSlack = absl::Microseconds(1);

TEST(ParseContentRangeTest, ARangeAndATotal) {
  int64_t first = 7, total = 7;
  ASSERT_TRUE(ParseContentRange("bytes 100-199/1000", &first, &total));
  EXPECT_EQ(first, 100);
  EXPECT_EQ(total, 1000);
}

TEST(ParseContentRangeTest, AnUnknownTotalOrAnUnsatisfiedRange) {
  int64_t first, total;
  ASSERT_TRUE(ParseContentRange("bytes 5-9/*", &first, &total));
  EXPECT_EQ(first, 5);
  EXPECT_EQ(total, -1);
  ASSERT_TRUE(ParseContentRange("bytes */50", &first, &total));  // a 416's
  EXPECT_EQ(first, -1);
  EXPECT_EQ(total, 50);
}

TEST(ParseContentRangeTest, RejectsOtherForms) {
  int64_t first, total;
  for (const char* bad : {"", "bytes", "bytes 0-9", "bits 0-9/10", "bytes 09/10", "bytes x-9/10",
                          "bytes 0-9/ten", "bytes -1-9/10"}) {
    EXPECT_FALSE(ParseContentRange(bad, &first, &total)) << bad;
  }
}

TEST(ErrorDetailTest, XmlCodeAndMessage) {
  EXPECT_EQ(ErrorDetail("<Error><Code>NoSuchKey</Code><Message>The key does not exist</Message>"
                        "</Error>",
                        {}),
            " (NoSuchKey: The key does not exist)");
  EXPECT_EQ(ErrorDetail("<Error><Code>SlowDown</Code></Error>", {}), " (SlowDown)");
}

TEST(ErrorDetailTest, JsonMessage) {
  EXPECT_EQ(ErrorDetail(R"({"error": {"code": 404, "message": "No such object: b/o"}})", {}),
            " (No such object: b/o)");
}

TEST(ErrorDetailTest, OtherwiseTheFirstLineTrimmed) {
  EXPECT_EQ(ErrorDetail("  service unavailable \nretry later\n", {}), " (service unavailable)");
  EXPECT_EQ(ErrorDetail("", {}), "");
  EXPECT_EQ(ErrorDetail("\nsecond line only", {}), "");
}

TEST(ErrorDetailTest, LongDetailsAreCutAt200Characters) {
  EXPECT_EQ(ErrorDetail(std::string(300, 'x'), {}), " (" + std::string(200, 'x') + "...)");
}

TEST(ErrorDetailTest, SecretsAreRedacted) {
  EXPECT_EQ(ErrorDetail("<Code>AccessDenied</Code><Message>key AKID123 and token tok, AKID123"
                        "</Message>",
                        {"AKID123", "tok", ""}),
            " (AccessDenied: key [redacted] and [redacted]en [redacted], [redacted])");
}

RetryOptions Retry() {
  RetryOptions r;
  r.initial_backoff = absl::Milliseconds(100);
  r.max_backoff = absl::Seconds(1);
  r.max_retry_after = absl::Seconds(60);
  return r;
}

TEST(RetryDelayTest, DoublesPerFailureWithJitterInTheUpperHalf) {
  for (int i = 0; i < 50; ++i) {
    absl::Duration d1 = RetryDelay(Retry(), 1, {});
    EXPECT_GE(d1, absl::Milliseconds(50));
    EXPECT_LE(d1, absl::Milliseconds(100) + kJitterSlack);
    absl::Duration d3 = RetryDelay(Retry(), 3, {});
    EXPECT_GE(d3, absl::Milliseconds(200));
    EXPECT_LE(d3, absl::Milliseconds(400) + kJitterSlack);
  }
}

TEST(RetryDelayTest, CappedAtMaxBackoff) {
  for (int failures : {5, 30, 1000}) {
    absl::Duration d = RetryDelay(Retry(), failures, {});
    EXPECT_GE(d, absl::Milliseconds(500)) << failures;
    EXPECT_LE(d, absl::Seconds(1) + kJitterSlack) << failures;
  }
}

TEST(RetryDelayTest, RetryAfterInSecondsWhenLonger) {
  EXPECT_EQ(RetryDelay(Retry(), 1, {{"retry-after", "7"}}), absl::Seconds(7));
  // Shorter than the backoff, negative or unreadable: the backoff.
  for (const char* value : {"0", "-5", "soon"}) {
    absl::Duration d = RetryDelay(Retry(), 1, {{"retry-after", value}});
    EXPECT_GE(d, absl::Milliseconds(50)) << value;
    EXPECT_LE(d, absl::Milliseconds(100) + kJitterSlack) << value;
  }
}

TEST(RetryDelayTest, RetryAfterIsCappedAtMaxRetryAfter) {
  EXPECT_EQ(RetryDelay(Retry(), 1, {{"retry-after", "3600"}}), absl::Seconds(60));
  EXPECT_EQ(RetryDelay(Retry(), 1, {{"retry-after", "Wed, 21 Oct 2099 07:28:00 GMT"}}),
            absl::Seconds(60));
}

TEST(RangeWhereTest, NamesTheNextByteAndTheRange) {
  HttpRequest request;
  EXPECT_EQ(RangeWhere(request, 0), "");
  request.ranged = true;
  request.begin = 100;
  request.end = 200;
  EXPECT_EQ(RangeWhere(request, 30), " at offset 130 (range 100-199)");
}

// A ranged request of bytes [0, 100) of "obj".
HttpRequest Ranged() {
  HttpRequest r;
  r.url = "http://127.0.0.1/obj";
  r.display = "obj";
  r.ranged = true;
  r.end = 100;
  r.secrets = {"s3cret"};
  return r;
}

HttpRequest Whole() {
  HttpRequest r;
  r.url = "http://127.0.0.1/meta";
  r.display = "meta";
  return r;
}

HttpResult Response(int code, uint64_t received = 0, std::string body = "") {
  HttpResult r;
  r.http_code = code;
  r.received = received;
  r.body = std::move(body);
  r.attempts = 1;
  return r;
}

AttemptVerdict Classify(const HttpRequest& request, const HttpResult& result,
                        HttpAttempt attempt = {}) {
  return ClassifyAttempt(request, result, attempt, Retry(), absl::Seconds(30));
}

TEST(ClassifyAttemptTest, AllBytesOrAWholeBodyIsDone) {
  HttpAttempt complete;
  complete.complete = true;
  AttemptVerdict v = Classify(Ranged(), Response(206, 100), complete);
  EXPECT_EQ(v.kind, AttemptVerdict::kDone);
  EXPECT_TRUE(v.status.ok());
  EXPECT_EQ(Classify(Whole(), Response(200)).kind, AttemptVerdict::kDone);
  EXPECT_EQ(Classify(Whole(), Response(204)).kind, AttemptVerdict::kDone);
}

TEST(ClassifyAttemptTest, ABodyRefusedByItsCallbackFailsWithItsStatus) {
  HttpAttempt attempt;
  attempt.refused = absl::FailedPreconditionError("obj: object changed");
  attempt.complete = true;  // the refusal wins
  AttemptVerdict v = Classify(Ranged(), Response(206, 100), attempt);
  EXPECT_EQ(v.kind, AttemptVerdict::kFail);
  EXPECT_EQ(v.status, attempt.refused);
}

TEST(ClassifyAttemptTest, ABadContentRangeIsRetried) {
  HttpAttempt attempt;
  attempt.body_error = "Content-Range starts at byte 10, asked for 0";
  AttemptVerdict v = Classify(Ranged(), Response(206), attempt);
  EXPECT_EQ(v.kind, AttemptVerdict::kRetry);
  EXPECT_EQ(v.cause, attempt.body_error);
  EXPECT_EQ(v.failures_in_row, 1);
  EXPECT_GE(v.delay, absl::Milliseconds(50));
  EXPECT_LE(v.delay, absl::Milliseconds(100) + kJitterSlack);
}

TEST(ClassifyAttemptTest, AShortBodyIsRetriedUnlessTheObjectEnded) {
  AttemptVerdict v = Classify(Ranged(), Response(206, 40));
  EXPECT_EQ(v.kind, AttemptVerdict::kRetry);
  EXPECT_EQ(v.cause, "short body: 40 of 100 bytes");
  HttpResult ended = Response(206, 40);
  ended.object_size = 40;  // the range runs past the object's end
  v = Classify(Ranged(), ended);
  EXPECT_EQ(v.kind, AttemptVerdict::kDone);
  EXPECT_EQ(v.object_size, 40);
}

TEST(ClassifyAttemptTest, A416AtTheEndIsAnEmptyReadElseTheObjectShrank) {
  HttpRequest at_end = Ranged();
  at_end.begin = 50;
  at_end.end = 150;
  HttpResult result = Response(416);
  result.headers["content-range"] = "bytes */50";
  AttemptVerdict v = Classify(at_end, result);
  EXPECT_EQ(v.kind, AttemptVerdict::kDone);
  EXPECT_EQ(v.object_size, 50);
  EXPECT_EQ(Classify(at_end, Response(416)).kind, AttemptVerdict::kDone);  // size unknown

  result = Response(416, 10);
  result.headers["content-range"] = "bytes */50";
  v = Classify(Ranged(), result);
  EXPECT_EQ(v.kind, AttemptVerdict::kFail);
  EXPECT_EQ(v.status, absl::FailedPreconditionError(
                          "obj: object shrank to 50 bytes while being read at offset 10 "
                          "(range 0-99)"));
  EXPECT_EQ(v.object_size, 50);
}

TEST(ClassifyAttemptTest, TransientHttpCodesAreRetriedWithTheirDetail) {
  for (int code : {408, 429, 500, 503}) {
    AttemptVerdict v = Classify(Ranged(), Response(code, 0, "<Code>SlowDown</Code> s3cret"));
    EXPECT_EQ(v.kind, AttemptVerdict::kRetry) << code;
    EXPECT_EQ(v.cause, "HTTP " + std::to_string(code) + " (SlowDown)") << code;
  }
}

TEST(ClassifyAttemptTest, OtherHttpCodesFailWithWhatTheyMean) {
  const std::string body = "<Code>X</Code><Message>s3cret here</Message>";
  EXPECT_EQ(Classify(Ranged(), Response(404, 0, body)).status,
            absl::NotFoundError("obj: HTTP 404 (X: [redacted] here) at offset 0 (range 0-99)"));
  EXPECT_EQ(Classify(Whole(), Response(401)).status, absl::PermissionDeniedError("meta: HTTP 401"));
  EXPECT_EQ(Classify(Whole(), Response(403)).status, absl::PermissionDeniedError("meta: HTTP 403"));
  EXPECT_EQ(
      Classify(Ranged(), Response(412, 5)).status,
      absl::FailedPreconditionError("obj: HTTP 412 at offset 5 (range 0-99): object changed"));
  EXPECT_EQ(Classify(Whole(), Response(400)).status, absl::InvalidArgumentError("meta: HTTP 400"));
  EXPECT_EQ(Classify(Whole(), Response(416)).status, absl::InvalidArgumentError("meta: HTTP 416"));
  EXPECT_EQ(Classify(Whole(), Response(304)).status, absl::UnknownError("meta: HTTP 304"));
  for (int code : {404, 401, 403, 412, 400, 304}) {
    EXPECT_EQ(Classify(Whole(), Response(code)).kind, AttemptVerdict::kFail) << code;
  }
}

HttpAttempt CurlError(CURLcode code) {
  HttpAttempt a;
  a.curl_code = code;
  return a;
}

TEST(ClassifyAttemptTest, ConnectErrorsFailFastUnlessRetried) {
  for (CURLcode code :
       {CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT}) {
    AttemptVerdict v = Classify(Ranged(), Response(0), CurlError(code));
    EXPECT_EQ(v.kind, AttemptVerdict::kFail);
    EXPECT_EQ(v.status, absl::UnavailableError("obj: " + std::string(curl_easy_strerror(code)) +
                                               " (not retried)"));
    RetryOptions retry = Retry();
    retry.retry_connect_errors = true;
    v = ClassifyAttempt(Ranged(), Response(0), CurlError(code), retry, absl::Seconds(30));
    EXPECT_EQ(v.kind, AttemptVerdict::kRetry);
    EXPECT_EQ(v.cause, std::string(curl_easy_strerror(code)) + " after 0 bytes");
  }
}

TEST(ClassifyAttemptTest, BadUrlsAndTlsFailuresAreNotRetried) {
  for (CURLcode code : {CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL}) {
    AttemptVerdict v = Classify(Whole(), Response(0), CurlError(code));
    EXPECT_EQ(v.status,
              absl::InvalidArgumentError("meta: " + std::string(curl_easy_strerror(code))));
  }
  for (CURLcode code :
       {CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM}) {
    AttemptVerdict v = Classify(Whole(), Response(0), CurlError(code));
    EXPECT_EQ(v.status, absl::UnavailableError("meta: " + std::string(curl_easy_strerror(code))));
  }
}

TEST(ClassifyAttemptTest, TransportErrorsAndStallsAreRetried) {
  AttemptVerdict v = Classify(Whole(), Response(0), CurlError(CURLE_RECV_ERROR));
  EXPECT_EQ(v.kind, AttemptVerdict::kRetry);
  EXPECT_EQ(v.cause, curl_easy_strerror(CURLE_RECV_ERROR));
  v = Classify(Ranged(), Response(206, 30), CurlError(CURLE_OPERATION_TIMEDOUT));
  EXPECT_EQ(v.cause, std::string(curl_easy_strerror(CURLE_OPERATION_TIMEDOUT)) + " after 30 bytes");
  HttpAttempt stalled = CurlError(CURLE_OPERATION_TIMEDOUT);
  stalled.stalled = true;
  v = Classify(Ranged(), Response(206, 30), stalled);
  EXPECT_EQ(v.kind, AttemptVerdict::kRetry);
  EXPECT_EQ(v.cause, "stalled: no data for 30s after 30 bytes");
}

TEST(ClassifyAttemptTest, GivesUpAfterMaxAttemptsInARowWithoutProgress) {
  HttpAttempt attempt;
  attempt.failures_in_row = 4;
  HttpResult result = Response(503, 20);
  result.attempts = 9;
  attempt.start_received = 20;  // no progress in this attempt
  AttemptVerdict v = Classify(Ranged(), result, attempt);
  EXPECT_EQ(v.kind, AttemptVerdict::kRetry);
  EXPECT_EQ(v.failures_in_row, 5);
  attempt.failures_in_row = 5;
  v = Classify(Ranged(), result, attempt);
  EXPECT_EQ(v.kind, AttemptVerdict::kFail);
  EXPECT_EQ(v.failures_in_row, 6);
  EXPECT_EQ(v.status, absl::UnavailableError(
                          "obj at offset 20 (range 0-99): giving up after 9 attempts (6 in a row "
                          "without progress); last cause: HTTP 503"));
}

TEST(ClassifyAttemptTest, AnAttemptThatDeliveredBytesResetsTheCount) {
  HttpAttempt attempt;
  attempt.failures_in_row = 5;
  attempt.start_received = 10;
  AttemptVerdict v = Classify(Ranged(), Response(206, 20), attempt);  // short, but 10 new bytes
  EXPECT_EQ(v.kind, AttemptVerdict::kRetry);
  EXPECT_EQ(v.failures_in_row, 1);
  EXPECT_THAT(v.cause, HasSubstr("short body: 20 of 100"));
}

}  // namespace
}  // namespace dataecho::internal
