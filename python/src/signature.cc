// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "signature.h"

#include <deque>
#include <string>
#include <utility>

namespace dataecho::python {

std::string Signature::Text() const {
  std::string params;
  for (const std::string& a : args_) params += (params.empty() ? "" : ", ") + a;
  if (!keywords_.empty()) {
    params += params.empty() ? "*" : ", *";
    for (const std::string& k : keywords_) params += ", " + k;
  }
  return name_ + "(" + params + ")";
}

const char* Signature::Doc(const std::string& summary) const {
  return KeepDoc(Text() + "\n--\n\n" + summary + sections_);
}

const char* KeepDoc(std::string doc) {
  static auto* docs = new std::deque<std::string>();
  docs->push_back(std::move(doc));
  return docs->back().c_str();
}

}  // namespace dataecho::python
