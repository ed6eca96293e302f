// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// docs_snippet_context.h: what the code blocks of README.md and docs/*.md use
// without defining it, the parts a reader's own program supplies (their
// store, their shard list, their decode and augment functions). The blocks
// are compiled inside namespace docs_snippets (docs_snippets.cmake), so they
// see these names unqualified. The definitions only have to compile and
// link: the blocks are never run.
#ifndef DATAECHO_TESTS_PACKAGING_DOCS_SNIPPET_CONTEXT_H_
#define DATAECHO_TESTS_PACKAGING_DOCS_SNIPPET_CONTEXT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dataecho/dataecho.h"

namespace docs_snippets {

// Where the data is.
inline std::shared_ptr<dataecho::ObjectStore> store;
inline std::vector<std::string> shards;
inline std::vector<std::string> files;
// Data already in memory, and a decoded upstream (ending in its Prefetch).
inline std::vector<dataecho::Example> examples;
inline std::vector<int64_t> numbers;
inline dataecho::Pipeline<dataecho::Example> decoded{absl::UnimplementedError("docs placeholder")};
// A command-line flag's value.
inline std::string flag;

// The reader's decode and augment functions (Map functions).
inline absl::StatusOr<dataecho::Example> Decode(dataecho::Example e) { return e; }
inline absl::StatusOr<dataecho::Example> RandomCropAndFlip(dataecho::Example e) { return e; }
inline absl::StatusOr<dataecho::Example> Augment(dataecho::Example e) { return e; }
// A training step, and anything else done with an element.
inline void Train(const dataecho::Batch&) {}
template <typename... Args>
void Use(const Args&...) {}

}  // namespace docs_snippets

#endif  // DATAECHO_TESTS_PACKAGING_DOCS_SNIPPET_CONTEXT_H_
