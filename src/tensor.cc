// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/tensor.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "fmt/format.h"

namespace dataecho {
namespace {

using internal::TensorRep;

// Freed reps kept for the next Tensor::Make, so that stages which make
// tensors for every batch or element (Batch, Unbatch, decoders) do so without
// a heap call in the steady state. Each thread keeps up to kLocal; past that
// it moves kChunk to a list shared by all threads (up to kShared, the rest are
// deleted), from which a thread with none takes kChunk. A batch made on a
// Prefetch thread and released on the consumer's thus comes back to the
// producer through the shared list, kChunk at a time under one lock.
constexpr size_t kLocal = 64;
constexpr size_t kChunk = 32;
constexpr size_t kShared = 4096;

struct SharedReps {
  absl::Mutex mu;
  std::vector<TensorRep*> free ABSL_GUARDED_BY(mu);
};

// Never destroyed: threads may end after main() returned. A forked child (a
// DataLoader's worker) starts a list of its own: another of the parent's
// threads may have held the lock (the parent's list is left, not destroyed).
std::atomic<SharedReps*> shared_reps{nullptr};
void ForgetParentReps() { shared_reps.store(new SharedReps, std::memory_order_release); }
SharedReps& Shared() {
  static const bool once = [] {
    shared_reps.store(new SharedReps, std::memory_order_release);
    pthread_atfork(nullptr, nullptr, ForgetParentReps);
    return true;
  }();
  (void)once;
  return *shared_reps.load(std::memory_order_acquire);
}

// Set when this thread's LocalReps is destroyed (a Tensor may still be freed
// later, by another thread-local's destructor: it is deleted then).
thread_local bool local_reps_gone = false;

struct LocalReps {
  std::vector<TensorRep*> free;

  ~LocalReps() {
    Spill(free.size());
    local_reps_gone = true;
  }

  // Moves the last `n` to the shared list (deleting what it has no room for).
  void Spill(size_t n) {
    SharedReps& shared = Shared();
    absl::MutexLock lock(&shared.mu);
    for (; n > 0; --n) {
      TensorRep* rep = free.back();
      free.pop_back();
      if (shared.free.size() < kShared) {
        shared.free.push_back(rep);
      } else {
        delete rep;
      }
    }
  }

  TensorRep* Take() {
    if (free.empty()) {
      SharedReps& shared = Shared();
      absl::MutexLock lock(&shared.mu);
      const size_t n = std::min(kChunk, shared.free.size());
      free.insert(free.end(), shared.free.end() - static_cast<std::ptrdiff_t>(n),
                  shared.free.end());
      shared.free.resize(shared.free.size() - n);
    }
    if (free.empty()) return new TensorRep;
    TensorRep* rep = free.back();
    free.pop_back();
    return rep;
  }

  void Give(TensorRep* rep) {
    if (free.capacity() == 0) free.reserve(kLocal);
    free.push_back(rep);
    if (free.size() >= kLocal) Spill(kChunk);
  }
};

LocalReps* Local() {
  if (local_reps_gone) return nullptr;
  thread_local LocalReps local;
  return &local;
}

}  // namespace

int64_t NumElements(absl::Span<const int64_t> shape) {
  // A zero dimension makes it 0 whatever the others are; else it saturates
  // instead of overflowing (a shape from options or data), as
  // SaturatingProduct() (memory.h), with which sizes are checked, does.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<int64_t>::max();
  }
  return n;
}

std::string ShapeString(absl::Span<const int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

absl::StatusOr<Tensor> Tensor::Make(DType dtype, Shape shape, Buffer buffer) {
  // Overflow-checked element count.
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return absl::InvalidArgumentError(
          absl::StrCat("negative dimension in shape ", ShapeString(shape)));
    if (d != 0 && n > std::numeric_limits<uint64_t>::max() / 16 / static_cast<uint64_t>(d)) {
      return absl::InvalidArgumentError(absl::StrCat("shape ", ShapeString(shape), " overflows"));
    }
    n *= static_cast<uint64_t>(d);
  }
  const uint64_t want = n * DTypeSize(dtype);
  if (want != buffer.size()) {
    return absl::InvalidArgumentError(fmt::format("tensor {}{} needs {} bytes, buffer has {}",
                                                  DTypeName(dtype), ShapeString(shape), want,
                                                  buffer.size()));
  }
  LocalReps* local = Local();
  TensorRep* rep = local != nullptr ? local->Take() : new TensorRep;
  rep->dtype = dtype;
  rep->shape = std::move(shape);
  rep->buffer = std::move(buffer);
  rep->references.store(1, std::memory_order_relaxed);
  return Tensor(rep);
}

const internal::TensorRep& Tensor::EmptyRep() {
  static const auto* const empty = new internal::TensorRep;
  return *empty;
}

void Tensor::Free(const internal::TensorRep* rep) {
  // Its bytes go now; the rep waits for the next Make.
  auto* mutable_rep = const_cast<TensorRep*>(rep);
  LocalReps* local = Local();
  if (local == nullptr) {
    delete mutable_rep;
    return;
  }
  mutable_rep->buffer = Buffer();
  mutable_rep->shape.clear();
  local->Give(mutable_rep);
}

}  // namespace dataecho
