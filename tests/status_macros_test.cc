// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/status_macros.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace dataecho {
namespace {

// Counts how often it is called, so the tests can see each macro evaluate
// its expression exactly once.
struct Calls {
  int n = 0;
  absl::Status Status(absl::Status s) {
    ++n;
    return s;
  }
  absl::StatusOr<int> Value(absl::StatusOr<int> v) {
    ++n;
    return v;
  }
};

absl::Status ReturnIfError(Calls& calls, absl::Status s, bool* reached_end) {
  DATAECHO_RETURN_IF_ERROR(calls.Status(std::move(s)));
  *reached_end = true;
  return absl::OkStatus();
}

TEST(StatusMacrosTest, ReturnIfErrorReturnsTheErrorAndEvaluatesOnce) {
  Calls calls;
  bool reached_end = false;
  absl::Status s = ReturnIfError(calls, absl::DataLossError("bad"), &reached_end);
  EXPECT_EQ(s, absl::DataLossError("bad"));
  EXPECT_FALSE(reached_end);
  EXPECT_EQ(calls.n, 1);
}

TEST(StatusMacrosTest, ReturnIfErrorGoesOnWhenOk) {
  Calls calls;
  bool reached_end = false;
  EXPECT_TRUE(ReturnIfError(calls, absl::OkStatus(), &reached_end).ok());
  EXPECT_TRUE(reached_end);
  EXPECT_EQ(calls.n, 1);
}

// ReturnIfError in a function returning StatusOr.
absl::StatusOr<std::string> Describe(absl::Status s) {
  DATAECHO_RETURN_IF_ERROR(s);
  return std::string("ok");
}

TEST(StatusMacrosTest, ReturnIfErrorInStatusOrFunction) {
  EXPECT_EQ(*Describe(absl::OkStatus()), "ok");
  EXPECT_EQ(Describe(absl::NotFoundError("gone")).status(), absl::NotFoundError("gone"));
}

// Declaration form, in a function returning StatusOr of another type.
absl::StatusOr<std::string> Declare(Calls& calls, absl::StatusOr<int> v) {
  DATAECHO_ASSIGN_OR_RETURN(int x, calls.Value(std::move(v)));
  return std::to_string(x + 1);
}

TEST(StatusMacrosTest, AssignOrReturnDeclares) {
  Calls calls;
  EXPECT_EQ(*Declare(calls, 41), "42");
  EXPECT_EQ(calls.n, 1);
  EXPECT_EQ(Declare(calls, absl::InvalidArgumentError("no")).status(),
            absl::InvalidArgumentError("no"));
  EXPECT_EQ(calls.n, 2);
}

// Assignment form (an existing variable, which an error leaves untouched),
// in a function returning absl::Status.
absl::Status Assign(Calls& calls, absl::StatusOr<int> v, int* out) {
  DATAECHO_ASSIGN_OR_RETURN(*out, calls.Value(std::move(v)));
  return absl::OkStatus();
}

TEST(StatusMacrosTest, AssignOrReturnAssigns) {
  Calls calls;
  int x = 7;
  EXPECT_TRUE(Assign(calls, 3, &x).ok());
  EXPECT_EQ(x, 3);
  EXPECT_EQ(Assign(calls, absl::UnavailableError("later"), &x), absl::UnavailableError("later"));
  EXPECT_EQ(x, 3);
  EXPECT_EQ(calls.n, 2);
}

// Several uses in one function (distinct temporaries), move-only values and
// `auto`.
absl::StatusOr<int> Sum(absl::StatusOr<std::unique_ptr<int>> a, absl::StatusOr<int> b) {
  DATAECHO_ASSIGN_OR_RETURN(std::unique_ptr<int> pa, std::move(a));
  DATAECHO_ASSIGN_OR_RETURN(auto vb, std::move(b));
  return *pa + vb;
}

TEST(StatusMacrosTest, AssignOrReturnTwiceWithMoveOnlyValue) {
  EXPECT_EQ(*Sum(std::make_unique<int>(2), 3), 5);
  EXPECT_EQ(Sum(absl::AbortedError("a"), 3).status(), absl::AbortedError("a"));
  EXPECT_EQ(Sum(std::make_unique<int>(2), absl::AbortedError("b")).status(),
            absl::AbortedError("b"));
}

}  // namespace
}  // namespace dataecho
