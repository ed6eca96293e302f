// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// python/src/signature.h: the signatures Python shows for functions that take
// **kwargs in C++ (builder methods, sources, option classes).
//
// pybind11 shows such a function as `echo(self, **kwargs)`, and
// inspect.signature() finds nothing. A docstring that opens with a text
// signature in CPython's convention ("name(params)\n--\n\n") gives both the
// real parameters: CPython reads it as __text_signature__ and shows the rest
// as __doc__. The parameters come from the option specs (options.h), so names
// and defaults are those of the C++ structs.
//
// Thread safety: used while the module is imported (with the GIL).
#ifndef DATAECHO_PYTHON_SRC_SIGNATURE_H_
#define DATAECHO_PYTHON_SRC_SIGNATURE_H_

#include <pybind11/pybind11.h>

#include <string>
#include <utility>
#include <vector>

namespace dataecho::python {

namespace py = pybind11;

template <typename T>
class OptionsSpec;
// The spec of each option struct the binding uses (options.h).
template <typename T>
const OptionsSpec<T>& Spec();

// A docstring kept for the life of the module (pybind11 keeps the pointer).
const char* KeepDoc(std::string doc);

// A docstring that opens with a text signature in CPython's convention
// ("name(params)\n--\n\n"), from which inspect.signature() and help() show
// the real parameters of a function that takes **kwargs in C++:
//
//   Signature sig("echo");
//   sig.Arg("self").Options<EchoOptions>();      // (self, *, factor=2.0, seed=0, name='echo')
//   DefSigned(cls, sig, "Data echoing ...", [](PipelineHandle& self, const py::kwargs& kw) {...});
//
// Options<O>() adds O's fields as keyword-only parameters with the struct's
// defaults and O's "Keyword arguments" section to the doc; Keyword() adds one
// more (store=None). Arg() adds a positional parameter ("fn", "labels=None").
class Signature {
 public:
  explicit Signature(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

  Signature& Arg(std::string param) {
    args_.push_back(std::move(param));
    return *this;
  }
  Signature& Keyword(std::string param) {
    keywords_.push_back(std::move(param));
    return *this;
  }
  // (Defined in options.h, which every user of it includes.)
  template <typename O>
  Signature& Options();
  // "name(args, *, keywords)".
  std::string Text() const;
  // The whole docstring: the text signature, `summary`, the options' sections.
  // Kept for the life of the module.
  const char* Doc(const std::string& summary) const;

 private:
  std::string name_;
  std::vector<std::string> args_, keywords_;
  std::string sections_;
};

// Defines `sig.name()` on `scope` (a module or a class) with the docstring
// sig.Doc(summary), without pybind11's own signature line (which would hide
// the text signature).
template <typename Scope, typename F, typename... Extra>
void DefSigned(Scope& scope, const Signature& sig, const std::string& summary, F&& f,
               const Extra&... extra) {
  py::options options;
  options.disable_function_signatures();
  scope.def(sig.name().c_str(), std::forward<F>(f), extra..., sig.Doc(summary));
}
// The same for a constructor: `init` is a py::init(...); sig.name() is "__init__".
template <typename Class, typename Init>
void DefSignedInit(Class& cls, const Signature& sig, const std::string& summary, Init&& init) {
  py::options options;
  options.disable_function_signatures();
  cls.def(std::forward<Init>(init), sig.Doc(summary));
}

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_SIGNATURE_H_
