// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// status_macros.h: early return on an error status, for code that calls
// functions returning absl::Status or absl::StatusOr<T>.
//
//   absl::Status CopyAll(dataecho::RecordSource& in, dataecho::TFRecordWriter& out) {
//     while (true) {
//       DATAECHO_ASSIGN_OR_RETURN(std::optional<dataecho::Record> r, in.Next());
//       if (!r) return out.Close();
//       DATAECHO_RETURN_IF_ERROR(out.Write(r->data.view()));
//     }
//   }
//
// DATAECHO_RETURN_IF_ERROR(expr): evaluates `expr` (an absl::Status) once and
// returns it from the enclosing function if it is not OK.
// DATAECHO_ASSIGN_OR_RETURN(lhs, expr): evaluates `expr` (an
// absl::StatusOr<T>) once; returns its status if it is not OK, otherwise
// moves its value into `lhs`, which may be a declaration
// (`DATAECHO_ASSIGN_OR_RETURN(auto x, F())`) or an existing variable. A type
// with a comma in it (a template of two arguments) needs an alias or `auto`.
//
// Both work in any function whose return type an absl::Status converts to
// (absl::Status, absl::StatusOr<U>). Prefixed so they do not collide with a
// user's own RETURN_IF_ERROR.
#ifndef DATAECHO_STATUS_MACROS_H_
#define DATAECHO_STATUS_MACROS_H_

#include <utility>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define DATAECHO_RETURN_IF_ERROR(expr)                             \
  do {                                                             \
    ::absl::Status dataecho_status_macros_status = (expr);         \
    if (ABSL_PREDICT_FALSE(!dataecho_status_macros_status.ok())) { \
      return dataecho_status_macros_status;                        \
    }                                                              \
  } while (false)

#define DATAECHO_ASSIGN_OR_RETURN(lhs, expr)    \
  DATAECHO_STATUS_MACROS_ASSIGN_OR_RETURN_IMPL( \
      DATAECHO_STATUS_MACROS_CONCAT(dataecho_status_macros_statusor_, __LINE__), lhs, expr)

// Implementation details.
#define DATAECHO_STATUS_MACROS_CONCAT_INNER(a, b) a##b
#define DATAECHO_STATUS_MACROS_CONCAT(a, b) DATAECHO_STATUS_MACROS_CONCAT_INNER(a, b)
#define DATAECHO_STATUS_MACROS_ASSIGN_OR_RETURN_IMPL(statusor, lhs, expr) \
  auto statusor = (expr);                                                 \
  if (ABSL_PREDICT_FALSE(!statusor.ok())) {                               \
    return std::move(statusor).status();                                  \
  }                                                                       \
  lhs = std::move(statusor).value()

#endif  // DATAECHO_STATUS_MACROS_H_
