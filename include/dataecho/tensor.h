// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// tensor.h: a small dense tensor (dtype, shape, immutable buffer).
//
// A Tensor is a typed view of a Buffer, row-major. Copies share bytes.
//
// A Tensor is one pointer to an immutable, reference-counted block holding
// its dtype, shape and buffer: a copy is one reference-count increment, a
// move touches no atomics, so Echo's copies and Shuffle's slots cost a
// pointer each, whatever the rank.
//
//   dataecho::MutableBuffer mb(28 * 28);
//   ...fill mb...
//   auto image = dataecho::Tensor::Make(dataecho::DType::kUInt8, {28, 28, 1},
//                                       std::move(mb).Freeze());
//   if (!image.ok()) return image.status();
//   absl::Span<const uint8_t> pixels = image->data<uint8_t>();
//
// Thread safety: a value type; see buffer.h.
#ifndef DATAECHO_TENSOR_H_
#define DATAECHO_TENSOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
#define DATAECHO_HAVE_SINGLE_THREADED 1
#include <sys/single_threaded.h>
#endif

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "dataecho/buffer.h"
#include "dataecho/dtype.h"
#include "dataecho/export.h"

namespace dataecho {

using Shape = absl::InlinedVector<int64_t, 4>;

// Product of the dimensions (1 for a scalar; 0 with a zero dimension);
// INT64_MAX if it overflows.
DATAECHO_EXPORT int64_t NumElements(absl::Span<const int64_t> shape);
// "[28, 28, 1]".
DATAECHO_EXPORT std::string ShapeString(absl::Span<const int64_t> shape);

namespace internal {

// True while the process has never started a second thread: its reference
// counts need no atomic steps then (glibc's flag, which libstdc++'s shared_ptr
// reads for the same purpose; it turns false for good when a thread starts).
inline bool SingleThreaded() {
#if defined(DATAECHO_HAVE_SINGLE_THREADED)
  return __libc_single_threaded != 0;
#else
  return false;
#endif
}

// What a Tensor points to; written once, in Tensor::Make.
struct TensorRep {
  DType dtype = DType::kUInt8;
  Shape shape;
  Buffer buffer;
  mutable std::atomic<int64_t> references{1};

  void AddReference() const {
    if (SingleThreaded()) {
      references.store(references.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    } else {
      references.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // True if that was the last reference. The last one, or any while the
  // process has one thread, takes no atomic step.
  bool DropReference() const {
    const int64_t n = references.load(std::memory_order_acquire);
    if (n == 1) return true;
    if (SingleThreaded()) {
      references.store(n - 1, std::memory_order_relaxed);
      return false;
    }
    return references.fetch_sub(1, std::memory_order_acq_rel) == 1;
  }
};

}  // namespace internal

class DATAECHO_EXPORT Tensor {
 public:
  // An empty uint8 scalar holding no bytes.
  Tensor() = default;

  // Checks that `buffer` holds exactly the bytes `dtype` x `shape` needs
  // (INVALID_ARGUMENT otherwise, including negative dimensions).
  static absl::StatusOr<Tensor> Make(DType dtype, Shape shape, Buffer buffer);
  static absl::StatusOr<Tensor> Make(DType dtype, std::initializer_list<int64_t> shape,
                                     Buffer buffer) {
    return Make(dtype, Shape(shape), std::move(buffer));
  }

  Tensor(const Tensor& other) noexcept : rep_(other.rep_) {
    if (rep_ != nullptr) rep_->AddReference();
  }
  Tensor(Tensor&& other) noexcept : rep_(std::exchange(other.rep_, nullptr)) {}
  Tensor& operator=(const Tensor& other) noexcept {
    Tensor(other).Swap(*this);
    return *this;
  }
  Tensor& operator=(Tensor&& other) noexcept {
    Tensor(std::move(other)).Swap(*this);
    return *this;
  }
  ~Tensor() {
    if (rep_ != nullptr && rep_->DropReference()) Free(rep_);
  }
  void Swap(Tensor& other) noexcept { std::swap(rep_, other.rep_); }

  DType dtype() const { return rep().dtype; }
  const Shape& shape() const { return rep().shape; }
  int64_t dim(int i) const { return shape()[static_cast<size_t>(i)]; }
  int rank() const { return static_cast<int>(shape().size()); }
  int64_t num_elements() const { return NumElements(shape()); }
  size_t byte_size() const { return buffer().size(); }
  const Buffer& buffer() const { return rep().buffer; }

  // Tensors sharing this one's block (this and its copies; 0 for an empty
  // Tensor). Its bytes have another holder if this is above 1 or
  // buffer().use_count() is (a Buffer or another Tensor viewing them).
  long use_count() const {
    return rep_ != nullptr ? static_cast<long>(rep_->references.load(std::memory_order_acquire))
                           : 0;
  }

  // Typed view. REQUIRES: sizeof(T) == DTypeSize(dtype()).
  template <typename T>
  absl::Span<const T> data() const {
    const Buffer& b = buffer();
    return absl::Span<const T>(reinterpret_cast<const T*>(b.data()), b.size() / sizeof(T));
  }

 private:
  explicit Tensor(const internal::TensorRep* rep) : rep_(rep) {}
  const internal::TensorRep& rep() const { return rep_ != nullptr ? *rep_ : EmptyRep(); }
  static const internal::TensorRep& EmptyRep();
  static void Free(const internal::TensorRep* rep);

  const internal::TensorRep* rep_ = nullptr;
};

}  // namespace dataecho

#endif  // DATAECHO_TENSOR_H_
