// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "elements.h"

#include <pybind11/stl.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "casters.h"
#include "dlpack.h"
#include "fmt/format.h"
#include "paths.h"
#include "status.h"

namespace dataecho::python {
namespace {

py::dtype NumpyDType(DType t) {
  switch (t) {
    case DType::kUInt8: return py::dtype::of<uint8_t>();
    case DType::kInt32: return py::dtype::of<int32_t>();
    case DType::kInt64: return py::dtype::of<int64_t>();
    case DType::kFloat32: return py::dtype::of<float>();
    case DType::kFloat16: return py::dtype("float16");
    case DType::kBFloat16: return py::dtype::of<uint16_t>();  // bit patterns
  }
  return py::dtype::of<uint8_t>();
}

DType DTypeOfArray(const py::array& a) {
  const char kind = a.dtype().kind();
  const py::ssize_t size = a.itemsize();
  if (kind == 'u' && size == 1) return DType::kUInt8;
  if (kind == 'i' && size == 4) return DType::kInt32;
  if (kind == 'i' && size == 8) return DType::kInt64;
  if (kind == 'f' && size == 4) return DType::kFloat32;
  if (kind == 'f' && size == 2) return DType::kFloat16;
  throw py::type_error("dataecho tensors hold uint8, int32, int64, float32 or float16, got " +
                       py::str(a.dtype()).cast<std::string>());
}

// The component list's views.
py::list ComponentViews(const absl::InlinedVector<Tensor, 1>& components, py::handle owner) {
  py::list out;
  for (const Tensor& t : components) out.append(TensorView(t, owner));
  return out;
}

py::list DTypeNames(const absl::InlinedVector<Tensor, 1>& components) {
  py::list out;
  for (const Tensor& t : components) out.append(py::str(std::string(DTypeName(t.dtype()))));
  return out;
}

std::string Describe(const absl::InlinedVector<Tensor, 1>& components) {
  std::string out = "[";
  for (size_t i = 0; i < components.size(); ++i) {
    out += fmt::format("{}{}{}", i == 0 ? "" : ", ", DTypeName(components[i].dtype()),
                       ShapeString(components[i].shape()));
  }
  return out + "]";
}

absl::InlinedVector<Tensor, 1> TensorsFromPython(const py::handle& components) {
  absl::InlinedVector<Tensor, 1> out;
  if (py::isinstance<py::array>(components)) {
    out.push_back(TensorFromArray(components));
    return out;
  }
  for (const py::handle c : components) out.push_back(TensorFromArray(c));
  return out;
}

// `components` (read-only views of the element's buffers, which they keep
// alive) and `dtypes`: what Example and Batch share.
template <typename T>
void DefComponents(py::class_<T>& cls) {
  cls.def_property_readonly("components",
                            [](const py::object& self) {
                              return ComponentViews(self.cast<const T&>().components, self);
                            })
      .def_property_readonly(
          "dtypes", [](const T& x) { return DTypeNames(x.components); },
          "Component dtype names ('bfloat16' components are viewed as uint16).");
}

// A read-only view of a batch's per-row tensor `field` (labels, ...).
auto RowsView(Tensor Batch::*field) {
  return [field](const py::object& self) {
    return TensorView(self.cast<const Batch&>().*field, self);
  };
}

// The tensor a to_dlpack() argument names: a component index or a row field.
const Tensor& BatchTensor(const Batch& b, const py::object& which) {
  if (py::isinstance<py::str>(which)) {
    const std::string name = which.cast<std::string>();
    if (name == "labels") return b.labels;
    if (name == "source_indices") return b.source_indices;
    if (name == "repeat_indices") return b.repeat_indices;
    throw py::value_error("to_dlpack(): '" + name +
                          "' is not labels, source_indices or repeat_indices");
  }
  const auto i = which.cast<py::ssize_t>();
  if (i < 0 || i >= static_cast<py::ssize_t>(b.components.size())) {
    throw py::index_error("to_dlpack(): no component " + std::to_string(i));
  }
  return b.components[static_cast<size_t>(i)];
}

void RegisterRecord(py::module_& m) {
  py::class_<Record>(m, "Record", R"(One record read from a file, before decoding.

Attributes: data (read-only uint8 array viewing the payload), uri (the file, as
it may be shown: no credentials), offset (byte offset of the record in the
uncompressed file), source_index ((file index << 40) | record index), repeat_index
(0 = fresh, k = k-th echo), fresh.)")
      .def_property_readonly("data",
                             [](const py::object& self) {
                               const Record& r = self.cast<const Record&>();
                               Tensor t = ValueOrThrow(Tensor::Make(
                                   DType::kUInt8, {static_cast<int64_t>(r.data.size())}, r.data));
                               return TensorView(t, self);
                             })
      .def(
          "tobytes", [](const Record& r) { return py::bytes(std::string(r.data.view())); },
          "A copy of the payload as bytes.")
      .def_property_readonly("uri", [](const Record& r) { return PathStr(r.uri()); })
      .def_readonly("offset", &Record::offset)
      .def_readonly("source_index", &Record::source_index)
      .def_readonly("repeat_index", &Record::repeat_index)
      .def_readonly("epoch", &Record::epoch)
      .def_property_readonly("fresh", &Record::fresh)
      .def("__len__", [](const Record& r) { return r.data.size(); })
      .def("__repr__", [](const Record& r) {
        return fmt::format("Record({} bytes at {}:{}, source_index={}, repeat_index={}, epoch={})",
                           r.data.size(), r.uri(), r.offset, r.source_index, r.repeat_index,
                           r.epoch);
      });
}

void RegisterExample(py::module_& m) {
  py::class_<Example> cls(m, "Example", R"(One training item: tensor components, a label, its
source index and its repeat index (0 = fresh, k = the k-th echo of it).

Example(components, label=0, source_index=0, repeat_index=0) copies the arrays
(one array or a list of them; dtypes uint8, int32, int64, float32, float16).
`.components` are read-only views of the example's buffers.)");
  DefComponents(cls);
  cls.def(py::init([](const py::object& components, int64_t label, uint64_t source_index,
                      uint32_t repeat_index) {
            Example e;
            e.components = TensorsFromPython(components);
            e.label = label;
            e.source_index = source_index;
            e.repeat_index = repeat_index;
            return e;
          }),
          py::arg("components"), py::arg("label") = 0, py::arg("source_index") = 0,
          py::arg("repeat_index") = 0)
      .def_readonly("label", &Example::label)
      .def_readonly("source_index", &Example::source_index)
      .def_readonly("repeat_index", &Example::repeat_index)
      .def_readonly("epoch", &Example::epoch)
      .def_property_readonly("fresh", &Example::fresh)
      .def(
          "replace",
          [](const Example& e, const py::object& components, const py::object& label) {
            Example out = e;
            if (!components.is_none()) out.components = TensorsFromPython(components);
            if (!label.is_none()) out.label = label.cast<int64_t>();
            return out;
          },
          py::arg("components") = py::none(), py::arg("label") = py::none(),
          "A copy with new components (copied) and/or label; indices are kept, so a map "
          "function returns `example.replace(components=[new_image])`.")
      .def(
          "to_dlpack",
          [](const Example& e, size_t i) {
            if (i >= e.components.size())
              throw py::index_error("no component " + std::to_string(i));
            return ToDlpack(e.components[i]);
          },
          py::arg("component") = 0, "A DLPack capsule viewing a component (no copy).")
      .def("__repr__", [](const Example& e) {
        return absl::StrCat("Example(", Describe(e.components), ", label=", e.label,
                            ", source_index=", e.source_index, ", repeat_index=", e.repeat_index,
                            ", epoch=", e.epoch, ")");
      });
}

void RegisterBatch(py::module_& m) {
  py::class_<Batch> cls(m, "Batch", R"(Fused rows: one contiguous buffer per component with a
leading row dimension, and per-row labels, source and repeat indices.

Every array is a read-only, zero-copy view of the batch's buffers; the arrays keep
the buffers alive, and a pooled buffer is reused only once no batch and no view of
it remains. `fresh_rows` counts rows whose example was fresh (0 for a batch-level
repeat); `repeat_index` is the batch's own repeat index (batch echoing).)");
  DefComponents(cls);
  cls.def_property_readonly("labels", RowsView(&Batch::labels), "int64 [rows]")
      .def_property_readonly("source_indices", RowsView(&Batch::source_indices), "int64 [rows]")
      .def_property_readonly("repeat_indices", RowsView(&Batch::repeat_indices),
                             "int32 [rows]: each row's example-level repeat index")
      .def_readonly("num_rows", &Batch::num_rows)
      .def_readonly("fresh_rows", &Batch::fresh_rows)
      .def_readonly("repeat_index", &Batch::repeat_index)
      .def_readonly("epoch", &Batch::epoch,
                    "The newest epoch among its rows (repeat(): a new epoch starts a new batch, "
                    "so every row has it unless a shuffle mixed the end of one epoch with the "
                    "start of the next).")
      .def_property_readonly("fresh", &Batch::fresh)
      .def(
          "data_pointer",
          [](const Batch& b, const py::object& which) {
            return reinterpret_cast<uintptr_t>(BatchTensor(b, which).buffer().data());
          },
          py::arg("which") = 0,
          "Address of a fused buffer (a component index, or 'labels', 'source_indices', "
          "'repeat_indices'): what the arrays view.")
      .def(
          "to_dlpack",
          [](const Batch& b, const py::object& which) { return ToDlpack(BatchTensor(b, which)); },
          py::arg("which") = 0,
          "A DLPack capsule viewing a fused buffer (a component index, or 'labels', "
          "'source_indices', 'repeat_indices'), for torch.utils.dlpack.from_dlpack: no copy, "
          "and bfloat16 stays bfloat16.")
      .def(
          "without_components",
          [](const Batch& b) {
            Batch rows = b;
            rows.components.clear();
            return rows;
          },
          "This batch without its components: its rows' labels, source and repeat indices, "
          "counts and epoch (what Pipeline.report_loss reads), so that holding it does not hold "
          "the fused buffers.")
      .def("__len__", [](const Batch& b) { return b.num_rows; })
      .def("__repr__", [](const Batch& b) {
        return absl::StrCat("Batch(rows=", b.num_rows, ", fresh_rows=", b.fresh_rows,
                            ", components=", Describe(b.components),
                            ", repeat_index=", b.repeat_index, ", epoch=", b.epoch, ")");
      });
}

}  // namespace

py::array TensorView(const Tensor& tensor, py::handle owner) {
  const py::dtype dt = NumpyDType(tensor.dtype());
  std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = dt.itemsize();
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  py::array out = tensor.byte_size() == 0
                      ? py::array(dt, shape, strides)
                      : py::array(dt, shape, strides, tensor.buffer().data(), owner);
  py::detail::array_proxy(out.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return out;
}

Tensor TensorFromArray(const py::handle& value) {
  const auto a = py::array::ensure(value, py::array::c_style);
  if (!a) throw py::type_error("expected an array, got " + py::repr(value).cast<std::string>());
  const DType dtype = DTypeOfArray(a);
  Shape shape(a.shape(), a.shape() + a.ndim());
  const auto bytes = static_cast<size_t>(a.nbytes());
  MutableBuffer mb(bytes);
  if (bytes > 0) std::memcpy(mb.data(), a.data(), bytes);
  return ValueOrThrow(Tensor::Make(dtype, std::move(shape), std::move(mb).Freeze()));
}

absl::StatusOr<Example> ExampleFromPython(py::handle value, const char* what) {
  if (py::isinstance<Example>(value)) return value.cast<Example>();
  return absl::InvalidArgumentError(absl::StrCat(
      what, " returned ", py::str(py::type::of(value).attr("__name__")).cast<std::string>(),
      ", expected a dataecho.Example (e.g. example.replace(components=[...]))"));
}

void RegisterElements(py::module_& m) {
  RegisterRecord(m);
  RegisterExample(m);
  RegisterBatch(m);
}

}  // namespace dataecho::python
