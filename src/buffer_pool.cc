// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "buffer_pool.h"

#include <new>
#include <utility>
#include <vector>

namespace dataecho::internal {

// Deleter of a pooled block: back to the pool if it still exists, else freed.
struct BufferPool::Return {
  std::weak_ptr<BufferPool> pool;
  size_t size;
  size_t alignment;
  void operator()(uint8_t* block) const {
    if (std::shared_ptr<BufferPool> p = pool.lock()) {
      p->Put(block, size);
    } else {
      ::operator delete[](block, std::align_val_t(alignment));
    }
  }
};

// The control blocks of the shared_ptrs that Get() hands out (one size: one
// deleter and allocator type), kept for the next Get() instead of freed.
class BufferPool::ControlBlocks {
 public:
  ~ControlBlocks() {
    for (void* p : free_) ::operator delete(p);
  }
  void* Take(size_t bytes) {
    {
      absl::MutexLock lock(&mu_);
      if (bytes == bytes_ && !free_.empty()) {
        void* p = free_.back();
        free_.pop_back();
        return p;
      }
    }
    return ::operator new(bytes);
  }
  void Give(void* p, size_t bytes) {
    {
      absl::MutexLock lock(&mu_);
      if (bytes_ == 0) bytes_ = bytes;
      if (bytes == bytes_ && free_.size() < kMaxFree) {
        free_.push_back(p);
        return;
      }
    }
    ::operator delete(p);
  }

 private:
  static constexpr size_t kMaxFree = 64;
  absl::Mutex mu_;
  size_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<void*> free_ ABSL_GUARDED_BY(mu_);
};

template <typename T>
struct BufferPool::ControlAllocator {
  using value_type = T;
  explicit ControlAllocator(std::shared_ptr<ControlBlocks> b) : blocks(std::move(b)) {}
  template <typename U>
  ControlAllocator(const ControlAllocator<U>& other) : blocks(other.blocks) {}  // NOLINT
  T* allocate(size_t n) { return static_cast<T*>(blocks->Take(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { blocks->Give(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const ControlAllocator<U>& other) const {
    return blocks == other.blocks;
  }

  std::shared_ptr<ControlBlocks> blocks;
};

BufferPool::BufferPool(size_t alignment, size_t max_free_per_size)
    : alignment_(alignment),
      max_free_(max_free_per_size),
      control_blocks_(std::make_shared<ControlBlocks>()) {}

std::shared_ptr<BufferPool> BufferPool::Create(size_t alignment, size_t max_free_per_size) {
  return std::shared_ptr<BufferPool>(new BufferPool(alignment, max_free_per_size));
}

BufferPool::~BufferPool() {
  for (auto& [size, blocks] : free_) {
    for (uint8_t* b : blocks) ::operator delete[](b, std::align_val_t(alignment_));
  }
}

MutableBuffer BufferPool::Get(size_t size) {
  uint8_t* block = nullptr;
  {
    absl::MutexLock lock(&mu_);
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      block = it->second.back();
      it->second.pop_back();
    } else {
      ++allocations_;
    }
  }
  if (block == nullptr) {
    block =
        static_cast<uint8_t*>(::operator new[](size == 0 ? 1 : size, std::align_val_t(alignment_)));
  }
  return MutableBuffer(std::shared_ptr<uint8_t>(block, Return{weak_from_this(), size, alignment_},
                                                ControlAllocator<uint8_t>(control_blocks_)),
                       size);
}

void BufferPool::Put(uint8_t* block, size_t size) {
  {
    absl::MutexLock lock(&mu_);
    std::vector<uint8_t*>& blocks = free_[size];
    if (blocks.size() < max_free_) {
      blocks.push_back(block);
      return;
    }
  }
  ::operator delete[](block, std::align_val_t(alignment_));
}

int64_t BufferPool::allocations() const {
  absl::MutexLock lock(&mu_);
  return allocations_;
}

}  // namespace dataecho::internal
