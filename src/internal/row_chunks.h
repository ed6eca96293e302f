// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// row_chunks.h (internal): the rows of one batch, handed from the thread that
// gathers them to the threads that convert them, in contiguous chunks. The
// gatherer publishes how many rows are in place as it goes; a converter
// claims the next whole chunk as soon as one is published (or what is left
// once the gatherer closes the batch), so converting overlaps gathering and
// no row is handed off by itself. The gatherer, once it has closed the batch,
// claims chunks too: a converter that is slow to run (a busy machine) leaves
// it at most the chunk it holds.
//
//   internal::RowChunks chunks;
//   chunks.Reset();                          // before the batch's threads start
//   // gatherer:  chunks.SetChunkRows(256);  // before its first Publish()
//   //            rows[i] = ...; if ((i + 1) % 256 == 0) chunks.Publish(i + 1);
//   //            ...; chunks.Close(n);
//   // everyone:  for (size_t b, e; chunks.Claim(&b, &e);) Convert(b, e);
//
// Thread safety: SetChunkRows(), Publish() and Close() from the gathering
// thread, Claim() from any; Reset() when no other thread uses the object. A
// row is written before the Publish() or Close() that covers it, and read
// after the Claim() that returns it (the mutex orders the two).
#ifndef DATAECHO_SRC_INTERNAL_ROW_CHUNKS_H_
#define DATAECHO_SRC_INTERNAL_ROW_CHUNKS_H_

#include <algorithm>
#include <cstddef>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace dataecho::internal {

class RowChunks {
 public:
  // A new batch, no row in place yet.
  void Reset() {
    absl::MutexLock lock(&mu_);
    ready_ = claimed_ = 0;
    closed_ = false;
  }
  // Rows per chunk (>= 1; a claim after Close() may get fewer).
  void SetChunkRows(size_t rows) {
    absl::MutexLock lock(&mu_);
    chunk_ = std::max<size_t>(rows, 1);
  }
  // Rows [0, rows) are in place.
  void Publish(size_t rows) {
    absl::MutexLock lock(&mu_);
    ready_ = rows;
  }
  // Rows [0, rows) are all the batch has (0 when it is given up).
  void Close(size_t rows) {
    absl::MutexLock lock(&mu_);
    ready_ = rows;
    closed_ = true;
  }
  // Waits for a whole chunk of rows nobody claimed, or for Close(); sets
  // [*begin, *end) to the rows claimed and returns true, or false when the
  // batch is closed and every row is claimed.
  bool Claim(size_t* begin, size_t* end) {
    absl::MutexLock lock(&mu_);
    auto claimable = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return closed_ || ready_ >= claimed_ + chunk_;
    };
    mu_.Await(absl::Condition(&claimable));
    if (claimed_ >= ready_) return false;
    *begin = claimed_;
    *end = std::min(ready_, claimed_ + chunk_);
    claimed_ = *end;
    return true;
  }

 private:
  absl::Mutex mu_;
  size_t chunk_ ABSL_GUARDED_BY(mu_) = 1;
  size_t ready_ ABSL_GUARDED_BY(mu_) = 0;    // rows in place
  size_t claimed_ ABSL_GUARDED_BY(mu_) = 0;  // rows handed to a converter
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_INTERNAL_ROW_CHUNKS_H_
