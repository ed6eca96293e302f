// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// export.h: DATAECHO_EXPORT, the mark on every class and function a program
// may link to.
//
// The library is compiled with hidden visibility (-fvisibility=hidden
// -fvisibility-inlines-hidden): a name defined in src/ is visible outside
// libdataecho.so only if its declaration carries DATAECHO_EXPORT.
//
//   DATAECHO_EXPORT std::string_view Version();
//   class DATAECHO_EXPORT ObjectStore { ... };
//
// The mark is the same in a static and a shared build, so libdataecho.a
// linked into a shared library of yours exports the same API and keeps the
// internals to itself. Templates and inline functions need no mark: every
// program instantiates its own. docs/api.md ("Exported symbols") says what is
// exported; tests/packaging/check_symbols.cmake checks it.
#ifndef DATAECHO_EXPORT_H_
#define DATAECHO_EXPORT_H_

#if defined(__GNUC__) || defined(__clang__)
#define DATAECHO_EXPORT __attribute__((visibility("default")))
#else
#define DATAECHO_EXPORT
#endif

// A class template of the library instantiated for its three element types
// (Record, Example, Batch), compiled once: its header declares
//
//   DATAECHO_EXTERN_TEMPLATES_FOR_ELEMENTS(FooStage);  // in foo.h, after FooStage
//
// and src/foo.cc defines them with DATAECHO_TEMPLATES_FOR_ELEMENTS(FooStage).
// Programs link those instead of compiling them again; other types are
// instantiated where they are used, as usual.
#define DATAECHO_EXTERN_TEMPLATES_FOR_ELEMENTS(Class)   \
  extern template class DATAECHO_EXPORT Class<Record>;  \
  extern template class DATAECHO_EXPORT Class<Example>; \
  extern template class DATAECHO_EXPORT Class<Batch>
#define DATAECHO_TEMPLATES_FOR_ELEMENTS(Class) \
  template class Class<Record>;                \
  template class Class<Example>;               \
  template class Class<Batch>

#endif  // DATAECHO_EXPORT_H_
