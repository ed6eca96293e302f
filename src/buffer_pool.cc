// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "buffer_pool.h"

#include <new>

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
  return MutableBuffer(std::shared_ptr<uint8_t>(block, Return{weak_from_this(), size, alignment_}),
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
