// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// A pool of aligned byte blocks. A block handed out as a MutableBuffer comes
// back to the pool when the last Buffer viewing it is released (from any
// thread), and so does the reference count's control block that tracks its
// views: steady-state batching makes no heap call at all. Thread-safe.
#ifndef DATAECHO_SRC_BUFFER_POOL_H_
#define DATAECHO_SRC_BUFFER_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "dataecho/buffer.h"

namespace dataecho::internal {

class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  // Keeps at most `max_free_per_size` idle blocks of each size.
  static std::shared_ptr<BufferPool> Create(size_t alignment, size_t max_free_per_size = 16);
  ~BufferPool();

  // A block of exactly `size` bytes (uninitialized), reused when one is idle.
  MutableBuffer Get(size_t size);

  // Blocks allocated from the system so far (pool misses).
  int64_t allocations() const;

 private:
  struct Return;
  class ControlBlocks;
  template <typename T>
  struct ControlAllocator;
  BufferPool(size_t alignment, size_t max_free_per_size);
  void Put(uint8_t* block, size_t size);

  const size_t alignment_;
  const size_t max_free_;
  // Shared with every block's control block, which can outlive the pool.
  const std::shared_ptr<ControlBlocks> control_blocks_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<size_t, std::vector<uint8_t*>> free_ ABSL_GUARDED_BY(mu_);
  int64_t allocations_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_BUFFER_POOL_H_
