// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// storage/fault_store.h: a store wrapper that fails on a script, for tests.
//
// Wraps a real store and makes chosen calls fail with chosen statuses, or
// flips bytes of chosen objects, so that code reading through an
// ObjectStore can be tested on errors it would otherwise meet only in
// production. It counts the calls it sees.
//
//   auto store = std::make_shared<dataecho::FaultInjectingStore>(dataecho::OpenObjectStore());
//   store->AddFault({.op = dataecho::Fault::Op::kRead, .uri_substring = "part-1",
//                    .error = absl::UnavailableError("link down"), .at_offset = 4096});
//   store->CorruptByte("/data/part-2", 100);
//
// A read fault fires on the first Read() whose range covers `at_offset`:
// that Read returns the error and consumes nothing, so offset() stays where
// it was (every byte before it was delivered by earlier Reads).
//
// Thread safety: thread-safe; faults may be added while readers run.
#ifndef DATAECHO_STORAGE_FAULT_STORE_H_
#define DATAECHO_STORAGE_FAULT_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/export.h"
#include "dataecho/storage/object_store.h"

namespace dataecho {

struct Fault {
  enum class Op { kAny, kStat, kReadRange, kOpen, kRead, kList };
  // Which calls the fault applies to.
  Op op = Op::kAny;
  // Only URIs (or list prefixes) containing this; empty: every URI.
  std::string uri_substring;
  // Returned when the fault fires; its message gets the URI and offset.
  absl::Status error = absl::UnavailableError("injected fault");
  // kRead (and kAny on a reader): the object offset at which it fires.
  uint64_t at_offset = 0;
  // Matching calls let through before the fault fires.
  int skip = 0;
  // Times the fault fires before it is spent; -1: forever.
  int times = 1;
};

class DATAECHO_EXPORT FaultInjectingStore : public ObjectStore {
 public:
  explicit FaultInjectingStore(std::shared_ptr<ObjectStore> base);

  void AddFault(Fault fault);
  // Every later read of byte `offset` of `uri` returns it XOR `mask`.
  void CorruptByte(std::string_view uri, uint64_t offset, uint8_t mask = 0xFF);
  // Drops every fault and corruption.
  void Clear();

  // Calls seen of one kind (kAny: all), and faults fired so far.
  int64_t calls(Fault::Op op) const;
  int64_t fired() const;

  absl::StatusOr<ObjectInfo> Stat(std::string_view uri) override;
  absl::StatusOr<Buffer> ReadRange(std::string_view uri, uint64_t offset, uint64_t length) override;
  absl::StatusOr<std::unique_ptr<ObjectReader>> Open(std::string_view uri,
                                                     const ReadOptions& options) override;
  absl::StatusOr<std::vector<ObjectInfo>> List(std::string_view prefix) override;

  // Used by the readers it hands out. Returns the error of a fault that
  // fires for this call, or OK.
  absl::Status Check(Fault::Op op, std::string_view uri, uint64_t offset, uint64_t length);
  // Applies the corruptions to `data`, which holds bytes from `offset` on.
  void Corrupt(std::string_view uri, uint64_t offset, absl::Span<uint8_t> data) const;

 private:
  struct Corruption {
    std::string uri;
    uint64_t offset;
    uint8_t mask;
  };
  const std::shared_ptr<ObjectStore> base_;
  mutable absl::Mutex mu_;
  std::vector<Fault> faults_ ABSL_GUARDED_BY(mu_);
  std::vector<Corruption> corruptions_ ABSL_GUARDED_BY(mu_);
  int64_t calls_[6] ABSL_GUARDED_BY(mu_) = {};
  int64_t fired_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace dataecho

#endif  // DATAECHO_STORAGE_FAULT_STORE_H_
