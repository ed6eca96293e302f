// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// python/src/options.h: C++ option structs as Python keyword arguments.
//
// One OptionsSpec<T> per option struct lists its fields once: Python name (the
// C++ field name), member and docstring line. From it the binding gets
//   - keyword arguments for builder methods, with the defaults of the C++
//     struct (a default-constructed T), so they cannot drift apart:
//       EchoOptions o = Spec<EchoOptions>().FromKwargs(kwargs, "echo");
//   - the docstring lines "factor: float = 2.0 -- ..." (Doc());
//   - the text signature Python shows, with those names and defaults
//     (Signature below: inspect.signature(Pipeline.echo) is
//     "(self, *, factor=2.0, seed=0, name='echo')", help() shows it too);
//   - a Python class with the same fields, for nested options
//     (dataecho.EchoOptions(factor=2, seed=1), or a dict in its place).
// An unknown keyword raises TypeError naming the valid ones; a value of the
// wrong type raises TypeError naming the field; an integer that does not fit
// the field's C++ type (batch_size=2**63) raises InvalidArgumentError naming
// the field, the value and the range. Other values are checked by the stage
// factories (InvalidArgumentError), as in C++.
//
// Thread safety: specs are built once, at import, and then only read.
#ifndef DATAECHO_PYTHON_SRC_OPTIONS_H_
#define DATAECHO_PYTHON_SRC_OPTIONS_H_

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "casters.h"
#include "dataecho/augment.h"
#include "dataecho/batch.h"
#include "dataecho/cache.h"
#include "dataecho/echo_options.h"
#include "dataecho/echo_placement.h"
#include "dataecho/filter.h"
#include "dataecho/formats/fixed_length.h"
#include "dataecho/formats/idx.h"
#include "dataecho/formats/jpeg.h"
#include "dataecho/formats/tfrecord.h"
#include "dataecho/interleave.h"
#include "dataecho/map.h"
#include "dataecho/mix_options.h"
#include "dataecho/padded_batch.h"
#include "dataecho/prefetch.h"
#include "dataecho/random_resized_crop.h"
#include "dataecho/shuffle.h"
#include "dataecho/storage/sharding.h"
#include "dataecho/storage/store_options.h"
#include "dataecho/storage/throttled_store.h"
#include "dataecho/throttle.h"
#include "dataecho/zip.h"
#include "signature.h"

namespace dataecho::python {

namespace py = pybind11;

// Raises TypeError("<caller>() got an unexpected keyword argument ...").
[[noreturn]] void ThrowUnknownOption(std::string_view caller, std::string_view key,
                                     const std::vector<std::string>& valid);
// Raises TypeError for a value of the wrong type for `field`.
[[noreturn]] void ThrowBadOptionType(std::string_view caller, std::string_view field,
                                     py::handle value, std::string_view what);
// Raises InvalidArgumentError for an integer outside `range` (the field's C++
// type), with the field's doc (which says what the stage accepts).
[[noreturn]] void ThrowOptionOutOfRange(std::string_view caller, std::string_view field,
                                        py::handle value, std::string_view range,
                                        std::string_view doc);

// dataecho.AUTOTUNE: an int (MapOptions' kAutotune) whose repr is "AUTOTUNE",
// so signatures and docs show the name. Made on first use. REQUIRES: the GIL.
py::object Autotune();
// `value` as Python source for a signature default: its repr, which for the
// values options hold (numbers, strings, None, lists, AUTOTUNE) is a literal
// that inspect.signature() can read back. inf and nan have none: raises.
std::string DefaultLiteral(py::handle value);

template <typename T>
class OptionsSpec {
 public:
  using Setter = std::function<void(T&, py::handle)>;
  using Getter = std::function<py::object(const T&)>;
  // The field's value as signature text (nested structs: a dict literal).
  using Literal = std::function<std::string(const T&)>;
  struct Field {
    std::string name;
    std::string type;  // shown in docs: "float", "int", "str", ...
    Setter set;
    Getter get;
    std::string doc;
    std::string range;  // integer fields: the C++ type's "[min, max]", else empty
    Literal literal;    // empty: DefaultLiteral(get(t))
  };

  // `cpp_name`: the C++ struct ("EchoOptions"), named in docs.
  explicit OptionsSpec(std::string cpp_name) : cpp_name_(std::move(cpp_name)) {}

  template <typename M>
  OptionsSpec& Add(std::string name, M T::*member, std::string doc) {
    std::string type = py::detail::make_caster<M>::name.text;
    AddCustom(
        std::move(name), std::move(type), [member](T& t, py::handle h) { t.*member = h.cast<M>(); },
        [member](const T& t) { return py::cast(t.*member); }, std::move(doc));
    if constexpr (std::is_integral_v<M> && !std::is_same_v<M, bool>) {
      fields_.back().range = "[" + std::to_string(std::numeric_limits<M>::min()) + ", " +
                             std::to_string(std::numeric_limits<M>::max()) + "]";
    }
    return *this;
  }
  // An int field whose value kAutotune (map.h) reads and shows as AUTOTUNE.
  OptionsSpec& AddAutotune(std::string name, int T::*member, std::string doc) {
    Add(std::move(name), member, std::move(doc));
    fields_.back().type = "int | AUTOTUNE";
    fields_.back().get = [member](const T& t) -> py::object {
      if (t.*member == std::numeric_limits<int>::min()) return Autotune();
      return py::int_(t.*member);
    };
    return *this;
  }
  // A nested option struct: set from None (defaults), a dict of its fields or
  // an instance of its class; shown as a dict of its fields.
  template <typename M>
  OptionsSpec& AddNested(std::string name, M T::*member, std::string doc) {
    const std::string caller = cpp_name_;
    AddCustom(
        std::move(name), Spec<M>().cpp_name() + " | dict",
        [member, caller](T& t, py::handle v) { t.*member = Spec<M>().FromValue(v, caller); },
        [member](const T& t) { return py::cast(t.*member); }, std::move(doc));
    fields_.back().literal = [member](const T& t) { return Spec<M>().DictLiteral(t.*member); };
    return *this;
  }
  OptionsSpec& AddCustom(std::string name, std::string type, Setter set, Getter get,
                         std::string doc) {
    fields_.push_back({std::move(name), std::move(type), std::move(set), std::move(get),
                       std::move(doc), /*range=*/"", /*literal=*/nullptr});
    return *this;
  }

  const std::string& cpp_name() const { return cpp_name_; }
  const std::vector<Field>& fields() const { return fields_; }
  const Field* Find(std::string_view name) const {
    for (const Field& f : fields_) {
      if (f.name == name) return &f;
    }
    return nullptr;
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const Field& f : fields_) names.push_back(f.name);
    return names;
  }

  // Sets `field` of `*out` from `value`.
  void Set(const Field& field, T* out, py::handle value, std::string_view caller) const {
    try {
      field.set(*out, value);
    } catch (const py::cast_error&) {
      // An integer that does not fit the field's type is a bad value, not a
      // bad type.
      if (!field.range.empty() && PyIndex_Check(value.ptr()) != 0) {
        ThrowOptionOutOfRange(caller, field.name, value, field.range, field.doc);
      }
      ThrowBadOptionType(caller, field.name, value, field.type);
    }
  }
  // Sets the fields named in `kwargs` (every key must be a field).
  void Apply(const py::dict& kwargs, T* out, std::string_view caller) const {
    for (const auto& [key, value] : kwargs) {
      const std::string k = py::str(key);
      const Field* f = Find(k);
      if (f == nullptr) ThrowUnknownOption(caller, k, Names());
      Set(*f, out, value, caller);
    }
  }
  T FromKwargs(const py::dict& kwargs, std::string_view caller) const {
    T t;
    Apply(kwargs, &t, caller);
    return t;
  }
  // A nested option: None (defaults), a dict of fields or an instance of the
  // bound class.
  T FromValue(py::handle value, std::string_view caller) const {
    if (value.is_none()) return T();
    if (py::isinstance<py::dict>(value)) return FromKwargs(value.cast<py::dict>(), caller);
    return value.cast<T>();
  }

  // The value of `f` in `t` as Python source ("2.0", "'echo'", "AUTOTUNE", "{...}").
  std::string LiteralOf(const Field& f, const T& t) const {
    return f.literal ? f.literal(t) : DefaultLiteral(f.get(t));
  }
  // "{'factor': 2.0, 'seed': 0, ...}".
  std::string DictLiteral(const T& t) const {
    std::string out = "{";
    for (const Field& f : fields_) {
      out += (out.size() > 1 ? ", '" : "'") + f.name + "': " + LiteralOf(f, t);
    }
    return out + "}";
  }
  // "factor=2.0", ... for a signature, with the defaults of T.
  std::vector<std::string> Parameters() const {
    const T defaults;
    std::vector<std::string> out;
    for (const Field& f : fields_) out.push_back(f.name + "=" + LiteralOf(f, defaults));
    return out;
  }

  // One line per field: "  name: type = default\n      doc".
  std::string Doc() const {
    const T defaults;
    std::string out;
    for (const Field& f : fields_) {
      out += "  " + f.name + ": " + f.type + " = " + LiteralOf(f, defaults) + "\n      " + f.doc +
             "\n";
    }
    return out;
  }

  // Binds T as the Python class `py_name`: a keyword constructor, the fields
  // as attributes, __repr__ and equality-free value semantics (copies). Its
  // signature is the fields with their defaults.
  void BindClass(py::module_& m, const char* py_name, const std::string& summary) const;

  // "name(field=value, ...)".
  std::string Repr(const std::string& name, const T& t) const {
    std::string out = name + "(";
    bool first = true;
    for (const Field& f : fields_) {
      out += (first ? "" : ", ") + f.name + "=" + py::repr(f.get(t)).template cast<std::string>();
      first = false;
    }
    return out + ")";
  }

 private:
  std::string cpp_name_;
  std::vector<Field> fields_;
};

template <typename O>
Signature& Signature::Options() {
  const OptionsSpec<O>& spec = Spec<O>();
  for (std::string& p : spec.Parameters()) keywords_.push_back(std::move(p));
  sections_ += "\n\nKeyword arguments (C++ " + spec.cpp_name() + ", same names and defaults):\n" +
               spec.Doc();
  return *this;
}

template <typename T>
void OptionsSpec<T>::BindClass(py::module_& m, const char* py_name,
                               const std::string& summary) const {
  const OptionsSpec* spec = this;  // specs live for the life of the module
  Signature sig(py_name);
  sig.Options<T>();
  // The text signature is in the class's docstring (tp_doc; Python shows the
  // rest as __doc__) and in __init__'s (which some Python versions read).
  py::class_<T> cls(m, py_name, sig.Doc(summary));
  DefSignedInit(
      cls, Signature("__init__").Arg("self").Options<T>(), summary,
      py::init([spec, py_name](const py::kwargs& kw) { return spec->FromKwargs(kw, py_name); }));
  for (const Field& f : fields_) {
    const Field* field = &f;
    cls.def_property(
        f.name.c_str(), [field](const T& t) { return field->get(t); },
        [spec, field, py_name](T& t, py::handle v) { spec->Set(*field, &t, v, py_name); },
        f.doc.c_str());
  }
  cls.def("__repr__", [spec, py_name](const T& t) { return spec->Repr(py_name, t); });
}

// The spec of an option struct whose one field is its `name` (FilterOptions,
// ZipOptions, UnbatchOptions): Spec<O>() returns NameOnlySpec<O>("O").
template <typename O>
const OptionsSpec<O>& NameOnlySpec(const char* cpp_name) {
  static const auto* spec =
      &(*new OptionsSpec<O>(cpp_name)).Add("name", &O::name, "Name shown in stats.");
  return *spec;
}

// The specs: built on first use; never destroyed. A new option struct: declare
// it here, define it in options.cc (stages), options_steps.cc (filter, cache,
// zip, interleave, padded_batch) or options_sources.cc (stores, formats,
// decoders, augmenters). An option struct that one binding file alone uses,
// with no Python class of its own (a step's name, say), may instead have its
// spec defined in that file, before the binding that uses it (unbatch's in
// pipeline_steps.cc): a new step then stays in one file.
#define DATAECHO_PYTHON_DECLARE_SPEC(T) \
  template <>                           \
  const OptionsSpec<T>& Spec<T>()
DATAECHO_PYTHON_DECLARE_SPEC(PrefetchOptions);
DATAECHO_PYTHON_DECLARE_SPEC(MapOptions);
DATAECHO_PYTHON_DECLARE_SPEC(EchoOptions);
DATAECHO_PYTHON_DECLARE_SPEC(AdaptiveEchoOptions);
DATAECHO_PYTHON_DECLARE_SPEC(AutoEchoOptions);
DATAECHO_PYTHON_DECLARE_SPEC(ShuffleOptions);
DATAECHO_PYTHON_DECLARE_SPEC(BatchOptions);
DATAECHO_PYTHON_DECLARE_SPEC(ThrottleOptions);
DATAECHO_PYTHON_DECLARE_SPEC(EchoedBatchesOptions);
DATAECHO_PYTHON_DECLARE_SPEC(TFRecordReaderOptions);
DATAECHO_PYTHON_DECLARE_SPEC(InterleaveOptions);
DATAECHO_PYTHON_DECLARE_SPEC(IdxOptions);
DATAECHO_PYTHON_DECLARE_SPEC(FixedLengthOptions);
DATAECHO_PYTHON_DECLARE_SPEC(FixedImageLayout);
DATAECHO_PYTHON_DECLARE_SPEC(ShardOptions);
DATAECHO_PYTHON_DECLARE_SPEC(RandomCropOptions);
DATAECHO_PYTHON_DECLARE_SPEC(RandomFlipOptions);
DATAECHO_PYTHON_DECLARE_SPEC(NormalizeOptions);
DATAECHO_PYTHON_DECLARE_SPEC(CastOptions);
DATAECHO_PYTHON_DECLARE_SPEC(JpegDecodeOptions);
DATAECHO_PYTHON_DECLARE_SPEC(JpegCropOptions);
DATAECHO_PYTHON_DECLARE_SPEC(RandomResizedCropOptions);
DATAECHO_PYTHON_DECLARE_SPEC(RetryOptions);
DATAECHO_PYTHON_DECLARE_SPEC(HttpOptions);
DATAECHO_PYTHON_DECLARE_SPEC(GcsOptions);
DATAECHO_PYTHON_DECLARE_SPEC(S3Options);
DATAECHO_PYTHON_DECLARE_SPEC(ObjectStoreOptions);
DATAECHO_PYTHON_DECLARE_SPEC(ThrottledStoreOptions);
DATAECHO_PYTHON_DECLARE_SPEC(FilterOptions);
DATAECHO_PYTHON_DECLARE_SPEC(CacheOptions);
DATAECHO_PYTHON_DECLARE_SPEC(ZipOptions);
DATAECHO_PYTHON_DECLARE_SPEC(InterleaveStageOptions);
DATAECHO_PYTHON_DECLARE_SPEC(PaddedBatchOptions);
DATAECHO_PYTHON_DECLARE_SPEC(MixOptions);
#undef DATAECHO_PYTHON_DECLARE_SPEC

// Splits `kwargs` between several option structs whose field names differ:
// each key goes to the spec that has it; a key none has raises TypeError.
//
//   KwargsSplit split(kwargs, "from_tfrecord");
//   auto reader = split.Take<TFRecordReaderOptions>();
//   auto interleave = split.Take<InterleaveOptions>();
//   split.CheckAllUsed();
class KwargsSplit {
 public:
  KwargsSplit(py::dict kwargs, std::string_view caller)
      : kwargs_(std::move(kwargs)), caller_(caller) {}
  // A default T with the fields of T found in the kwargs.
  template <typename T>
  T Take() {
    const OptionsSpec<T>& spec = Spec<T>();
    T t;
    for (const auto& [key, value] : kwargs_) {
      const std::string k = py::str(key);
      if (const auto* f = spec.Find(k)) {
        spec.Set(*f, &t, value, caller_);
        used_.push_back(k);
      }
    }
    for (std::string& n : spec.Names()) valid_.push_back(std::move(n));
    return t;
  }
  // Takes a keyword argument of the caller's own (not a spec field), if given.
  py::object Pop(const char* name) {
    valid_.emplace_back(name);
    if (!kwargs_.contains(name)) return py::none();
    used_.emplace_back(name);
    return kwargs_[name];
  }
  // Raises TypeError for a key that no Take() or Pop() used.
  void CheckAllUsed() const;

 private:
  py::dict kwargs_;
  std::string caller_;
  std::vector<std::string> used_, valid_;
};

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_OPTIONS_H_
