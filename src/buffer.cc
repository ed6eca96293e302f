// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/buffer.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <new>
#include <utility>

namespace dataecho {
namespace {

struct AlignedDelete {
  std::align_val_t alignment;
  void operator()(uint8_t* p) const { ::operator delete[](p, alignment); }
};

// One cache line of storage.
struct alignas(kDefaultAlignment) Line {
  uint8_t bytes[kDefaultAlignment];
};

std::shared_ptr<uint8_t> AllocateAligned(size_t size, size_t alignment) {
  if (alignment <= kDefaultAlignment) {
    // One allocation holding the reference count and, from the next cache
    // line on, the bytes (uninitialized): releasing a buffer after reading
    // it touches a line next to the ones just read instead of a distant one,
    // which took a cache miss per row when a batch is gathered from a large
    // shuffle buffer (BM_EchoShuffleBatch).
    std::shared_ptr<Line[]> lines = std::make_shared_for_overwrite<Line[]>(
        std::max<size_t>(1, (size + kDefaultAlignment - 1) / kDefaultAlignment));
    uint8_t* data = lines[0].bytes;
    return std::shared_ptr<uint8_t>(std::move(lines), data);
  }
  const auto align = std::align_val_t(alignment);
  auto* p = static_cast<uint8_t*>(::operator new[](size == 0 ? 1 : size, align));
  return std::shared_ptr<uint8_t>(p, AlignedDelete{align});
}

}  // namespace

Buffer Buffer::CopyOf(const void* data, size_t size) {
  MutableBuffer mb(size);
  if (size > 0) std::memcpy(mb.data(), data, size);
  return std::move(mb).Freeze();
}

Buffer Buffer::Wrap(std::shared_ptr<const void> owner, const void* data, size_t size) {
  return Buffer(std::shared_ptr<const uint8_t>(std::move(owner), static_cast<const uint8_t*>(data)),
                size);
}

Buffer Buffer::Slice(size_t offset, size_t length) const {
  assert(offset <= size_ && length <= size_ - offset);
  return Buffer(std::shared_ptr<const uint8_t>(data_, data_.get() + offset), length);
}

MutableBuffer::MutableBuffer(size_t size, size_t alignment)
    : data_(AllocateAligned(size, alignment)), size_(size) {}

void MutableBuffer::Truncate(size_t new_size) {
  assert(new_size <= size_);
  size_ = new_size;
}

}  // namespace dataecho
