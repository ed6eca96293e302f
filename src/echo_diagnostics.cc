// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "dataecho/echo_diagnostics.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "internal/echo_diagnostics.h"

namespace dataecho {
namespace {

class EchoDiagnosticsStage final : public UnaryStage<Batch, Batch> {
 public:
  EchoDiagnosticsStage(StagePtr<Batch> input, std::string name)
      : UnaryStage<Batch, Batch>(std::move(input)), name_(std::move(name)) {}

  absl::StatusOr<std::optional<Batch>> Next() override {
    absl::StatusOr<std::optional<Batch>> r = this->input().Next();
    See(r);
    return r;
  }
  bool TryNext(absl::StatusOr<std::optional<Batch>>* out) override {
    if (!this->input().TryNext(out)) return false;
    See(*out);
    return true;
  }

 protected:
  StageStats OwnStats() const override {
    StageStats s;
    s.name = name_;
    s.elements = elements_.Get();
    diagnostics_.AppendTo(&s.extra);
    return s;
  }

 private:
  void See(const absl::StatusOr<std::optional<Batch>>& r) {
    if (!r.ok() || !r->has_value()) return;
    elements_.Add(1);
    diagnostics_.Add(**r);
  }

  const std::string name_;
  internal::Counter elements_;
  internal::EchoDiagnostics diagnostics_;
};

}  // namespace

Pipeline<Batch> WithEchoDiagnostics(Pipeline<Batch> batches, std::string name) {
  return std::move(batches).Apply([&](StagePtr<Batch> in) -> StagePtr<Batch> {
    return std::make_unique<EchoDiagnosticsStage>(std::move(in), std::move(name));
  });
}

}  // namespace dataecho
