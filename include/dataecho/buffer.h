// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// buffer.h: immutable, reference-counted bytes.
//
// A `Buffer` is a view of bytes that it co-owns. Copying a Buffer or taking a
// `Slice()` of it never copies bytes: all of them share one storage block,
// which is freed (or returned to its pool) when the last view goes away. This
// is what lets Echo and Shuffle move handles instead of payloads.
//
// Bytes are written once, through a `MutableBuffer`, and then frozen:
//
//   dataecho::MutableBuffer mb(784);
//   std::memcpy(mb.data(), pixels, 784);
//   dataecho::Buffer image = std::move(mb).Freeze();
//   dataecho::Buffer first_row = image.Slice(0, 28);   // shares storage
//
// Thread safety: a Buffer is a value; distinct Buffer objects that share
// storage may be used from different threads without locking. The bytes are
// never written after Freeze().
#ifndef DATAECHO_BUFFER_H_
#define DATAECHO_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/types/span.h"
#include "dataecho/export.h"

namespace dataecho {

// Storage alignment used by default: one cache line, enough for any SIMD load.
inline constexpr size_t kDefaultAlignment = 64;

class DATAECHO_EXPORT Buffer {
 public:
  // An empty buffer.
  Buffer() = default;

  // Copies `size` bytes into a new buffer.
  static Buffer CopyOf(const void* data, size_t size);
  static Buffer CopyOf(std::string_view bytes) { return CopyOf(bytes.data(), bytes.size()); }

  // Views `size` bytes at `data` kept alive by `owner` (no copy).
  static Buffer Wrap(std::shared_ptr<const void> owner, const void* data, size_t size);

  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::string_view view() const {
    return std::string_view(reinterpret_cast<const char*>(data()), size_);
  }
  absl::Span<const uint8_t> span() const { return absl::Span<const uint8_t>(data(), size_); }

  // A view of bytes [offset, offset + length) sharing this buffer's storage.
  // REQUIRES: offset + length <= size().
  Buffer Slice(size_t offset, size_t length) const;

  // Number of views sharing the storage (0 for an empty buffer).
  long use_count() const { return data_.use_count(); }

  // True if both views share one storage block.
  bool SharesStorageWith(const Buffer& other) const {
    return !data_.owner_before(other.data_) && !other.data_.owner_before(data_) && data_ != nullptr;
  }

 private:
  friend class MutableBuffer;
  Buffer(std::shared_ptr<const uint8_t> data, size_t size) : data_(std::move(data)), size_(size) {}

  std::shared_ptr<const uint8_t> data_;  // aliasing pointer to the first byte
  size_t size_ = 0;
};

// The single writable owner of new bytes. Freeze() turns it into a Buffer.
class DATAECHO_EXPORT MutableBuffer {
 public:
  MutableBuffer() = default;
  // Allocates `size` uninitialized bytes aligned to `alignment`.
  explicit MutableBuffer(size_t size, size_t alignment = kDefaultAlignment);
  // Takes over storage from a pool: `storage` must hold at least `size` bytes.
  MutableBuffer(std::shared_ptr<uint8_t> storage, size_t size)
      : data_(std::move(storage)), size_(size) {}

  MutableBuffer(MutableBuffer&&) noexcept = default;
  MutableBuffer& operator=(MutableBuffer&&) noexcept = default;
  MutableBuffer(const MutableBuffer&) = delete;
  MutableBuffer& operator=(const MutableBuffer&) = delete;

  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }
  absl::Span<uint8_t> span() { return absl::Span<uint8_t>(data(), size_); }

  // Shrinks the visible size (storage is kept). REQUIRES: new_size <= size().
  void Truncate(size_t new_size);

  // Ends writing; the bytes are immutable from here on.
  Buffer Freeze() && { return Buffer(std::move(data_), std::exchange(size_, 0)); }

 private:
  std::shared_ptr<uint8_t> data_;
  size_t size_ = 0;
};

}  // namespace dataecho

#endif  // DATAECHO_BUFFER_H_
