// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// Must NOT compile (ctest: builder_needs_pipeline_h): a pipeline of the
// program's own element type through dataecho/builder.h alone, whose stages
// the library does not compile. The compile stops with the message that
// names dataecho/pipeline.h, instead of failing to link.
#include <cstdint>

#include "dataecho/builder.h"

struct Token {
  int64_t id = 0;
};

int main() {
  auto tokens = dataecho::From<dataecho::Example>(nullptr).Map(
      [](const dataecho::Example& e) { return Token{e.source_index}; });
  return tokens.status().ok() ? 0 : 1;
}
