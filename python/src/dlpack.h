// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// python/src/dlpack.h: the DLPack structs (https://github.com/dmlc/dlpack,
// v0.x ABI, as torch.utils.dlpack reads them), and a Tensor as a "dltensor"
// capsule.
//
//   py::capsule c = ToDlpack(batch.components[0]);
//   // Python: torch.utils.dlpack.from_dlpack(c) -> a tensor viewing the bytes
//
// The capsule (and then the consumer's tensor) co-owns the tensor's Buffer: the
// bytes stay valid, and a pooled batch buffer is not reused, until the consumer
// calls the deleter (torch: when its tensor is freed), from any thread.
//
// A consumer may write through the capsule (torch tensors are writable), and a
// write must not reach another element: so the capsule views the bytes only
// when the element is their sole holder, and is a copy of its own when they
// are shared (batch echo's copies of a batch, a cached element, several
// exports of one component). The copies of an echoed batch are then
// independent; an element nothing else holds (the usual batch) costs no copy.
#ifndef DATAECHO_PYTHON_SRC_DLPACK_H_
#define DATAECHO_PYTHON_SRC_DLPACK_H_

#include <pybind11/pybind11.h>

#include <cstdint>

#include "dataecho/tensor.h"

namespace dataecho::python {

struct DLDevice {
  int32_t device_type;  // kDLCPU = 1
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;  // kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // null: compact row-major
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

// A "dltensor" capsule viewing `tensor` (no copy), or viewing a copy of it if
// its bytes are shared with another holder (see the file comment).
pybind11::capsule ToDlpack(const Tensor& tensor);

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_DLPACK_H_
