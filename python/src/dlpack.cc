// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dlpack.h"

#include <vector>

#include "status.h"

namespace dataecho::python {

namespace py = pybind11;

namespace {

// `tensor`, or a copy of it if another holder shares its bytes. A count of 1
// is exact (no other holder can appear: the only one is the caller's
// element); a larger one may be momentarily high (a holder being dropped on
// another thread), which costs a copy, never a shared write.
Tensor Exclusive(const Tensor& tensor) {
  const Buffer& b = tensor.buffer();
  if (b.use_count() <= 1) return tensor;
  return ValueOrThrow(
      Tensor::Make(tensor.dtype(), tensor.shape(), Buffer::CopyOf(b.data(), b.size())));
}

}  // namespace

py::capsule ToDlpack(const Tensor& shared) {
  const Tensor tensor = Exclusive(shared);
  struct Context {
    Tensor tensor;  // co-owns the bytes
    std::vector<int64_t> shape;
    DLManagedTensor managed;
  };
  auto* ctx =
      new Context{tensor, std::vector<int64_t>(tensor.shape().begin(), tensor.shape().end()), {}};
  DLTensor& t = ctx->managed.dl_tensor;
  t.data = const_cast<uint8_t*>(tensor.buffer().data());  // ours alone: Exclusive()
  t.device = {1, 0};                                      // kDLCPU
  t.ndim = static_cast<int32_t>(ctx->shape.size());
  switch (tensor.dtype()) {
    case DType::kUInt8: t.dtype = {1, 8, 1}; break;
    case DType::kInt32: t.dtype = {0, 32, 1}; break;
    case DType::kInt64: t.dtype = {0, 64, 1}; break;
    case DType::kFloat32: t.dtype = {2, 32, 1}; break;
    case DType::kFloat16: t.dtype = {2, 16, 1}; break;
    case DType::kBFloat16: t.dtype = {4, 16, 1}; break;
  }
  t.shape = ctx->shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = [](DLManagedTensor* self) {
    delete static_cast<Context*>(self->manager_ctx);
  };
  // An unconsumed capsule frees the view itself; a consumer renames it to
  // "used_dltensor" and calls the deleter when done.
  PyObject* capsule = PyCapsule_New(&ctx->managed, "dltensor", [](PyObject* c) {
    if (PyCapsule_IsValid(c, "dltensor") != 0) {
      auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
      managed->deleter(managed);
    }
  });
  if (capsule == nullptr) {
    delete ctx;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(capsule);
}

}  // namespace dataecho::python
