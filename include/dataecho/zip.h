// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// zip.h: pair up the elements of two pipelines.
//
// ZipStage takes one element from each of its two inputs per Next() and
// returns them as a std::pair, in order; it ends when either input ends (the
// rest of the other is not read), like tf.data's zip. An error from either
// input comes out in order and stays. For three or more inputs, nest:
// `a.Zip(b).Zip(c)` gives std::pair<std::pair<A, B>, C>.
//
//   auto pairs = dataecho::FromVector(std::move(images))
//       .Zip(dataecho::FromVector(std::move(captions)));   // Pipeline<std::pair<Example, Example>>
//   for (auto& [image, caption] : pairs) Use(image, caption);
//   auto same = dataecho::ZipStage<Example, Example>::Make(std::move(a), std::move(b));
//
// Both inputs run in the consumer's thread, one after the other, unless they
// end in a Prefetch (then they read ahead in parallel).
//
// ElementTraits<std::pair<A, B>> (below) makes a pair's byte size the sum of
// its halves', its fresh count the smaller of theirs, and marks both halves
// as repeats, so Echo, Shuffle and Prefetch can follow a Zip.
//
// Epochs and checkpoints (stage.h, docs/checkpoint.md): Restart(e) restarts
// both inputs; the state is the first input's, the second's, then whether the
// zip ended; a pair is referenced by its two halves' references, so a Shuffle
// or Echo after a Zip can save its buffer.
//
// Stats: the first input's stages, the second's, then the zip row
// (elements = pairs; input_wait = time blocked on an input with nothing
// ready).
//
// Thread safety: as every stage (stage.h).
#ifndef DATAECHO_ZIP_H_
#define DATAECHO_ZIP_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "dataecho/checkpoint.h"
#include "dataecho/element_traits.h"
#include "dataecho/internal/counter.h"
#include "dataecho/internal/stage_accounting.h"
#include "dataecho/stage.h"
#include "dataecho/stage_options.h"
#include "dataecho/status_macros.h"

namespace dataecho {

template <typename A, typename B>
struct ElementTraits<std::pair<A, B>> {
  static size_t ByteSize(const std::pair<A, B>& p) {
    return ElementTraits<A>::ByteSize(p.first) + ElementTraits<B>::ByteSize(p.second);
  }
  static int64_t FreshCount(const std::pair<A, B>& p) {
    return std::min(ElementTraits<A>::FreshCount(p.first), ElementTraits<B>::FreshCount(p.second));
  }
  static int64_t ItemCount(const std::pair<A, B>&) { return 1; }
  static void MarkRepeat(std::pair<A, B>& p, uint32_t k) {
    ElementTraits<A>::MarkRepeat(p.first, k);
    ElementTraits<B>::MarkRepeat(p.second, k);
  }
};

template <typename A, typename B>
class ZipStage final : public Stage<std::pair<A, B>> {
 public:
  using Pair = std::pair<A, B>;

  // INVALID_ARGUMENT for a null input.
  static absl::StatusOr<StagePtr<Pair>> Make(StagePtr<A> first, StagePtr<B> second,
                                             ZipOptions options = {}) {
    DATAECHO_RETURN_IF_ERROR(internal::CheckInput(first, options.name));
    DATAECHO_RETURN_IF_ERROR(internal::CheckInput(second, options.name));
    return StagePtr<Pair>(new ZipStage(std::move(first), std::move(second), std::move(options)));
  }

  absl::StatusOr<std::optional<Pair>> Next() override {
    if (cancelled_.load(std::memory_order_relaxed)) return CancelledError();
    if (!status_.ok()) return status_;
    if (done_) return std::nullopt;
    absl::StatusOr<std::optional<A>> a;
    absl::StatusOr<std::optional<B>> b = std::nullopt;
    int64_t waited = internal::PullTimed(*first_, &a);
    if (a.ok() && a->has_value()) waited += internal::PullTimed(*second_, &b);
    totals_.input_wait_ns.Add(waited);
    if (!a.ok()) return status_ = a.status();
    if (!b.ok()) return status_ = b.status();
    if (!a->has_value() || !b->has_value()) {
      done_ = true;
      return std::nullopt;
    }
    Pair p(*std::move(*a), *std::move(*b));
    totals_.elements.Add(1);
    totals_.bytes.Add(static_cast<int64_t>(ElementTraits<Pair>::ByteSize(p)));
    return std::optional<Pair>(std::move(p));
  }

  absl::Status EnableRestart() override {
    DATAECHO_RETURN_IF_ERROR(first_->EnableRestart());
    return second_->EnableRestart();
  }
  // Both inputs start over as epoch `epoch`; the zip's end is forgotten.
  absl::Status Restart(uint32_t epoch) override {
    if (!status_.ok()) return status_;
    DATAECHO_RETURN_IF_ERROR(first_->Restart(epoch));
    DATAECHO_RETURN_IF_ERROR(second_->Restart(epoch));
    done_ = false;
    return absl::OkStatus();
  }

  // State: the first input's, the second's, then this stage's: whether it ended.
  absl::Status SaveState(StateWriter& w) override {
    if (!status_.ok()) return CannotSaveAfterError(options_.name, status_);
    DATAECHO_RETURN_IF_ERROR(first_->SaveState(w));
    DATAECHO_RETURN_IF_ERROR(second_->SaveState(w));
    return SaveOwn(w);
  }
  absl::Status RestoreState(StateReader& r) override {
    DATAECHO_RETURN_IF_ERROR(first_->RestoreState(r));
    DATAECHO_RETURN_IF_ERROR(second_->RestoreState(r));
    return RestoreOwn(r);
  }
  // A pair: the references of its first halves, then of its second halves.
  absl::Status SaveRefs(std::span<const Pair* const> items, StateWriter& w) override {
    std::vector<const A*> firsts;
    std::vector<const B*> seconds;
    firsts.reserve(items.size());
    seconds.reserve(items.size());
    for (const Pair* p : items) {
      firsts.push_back(&p->first);
      seconds.push_back(&p->second);
    }
    DATAECHO_RETURN_IF_ERROR(first_->SaveRefs(firsts, w));
    return second_->SaveRefs(seconds, w);
  }
  absl::Status Reread(StateReader& r, size_t n, std::vector<Pair>* out) override {
    std::vector<A> firsts;
    std::vector<B> seconds;
    DATAECHO_RETURN_IF_ERROR(first_->Reread(r, n, &firsts));
    DATAECHO_RETURN_IF_ERROR(second_->Reread(r, n, &seconds));
    if (firsts.size() != n || seconds.size() != n) {
      return absl::DataLossError(
          absl::StrCat("pipeline state: ", options_.name, "'s pairs not read again"));
    }
    for (size_t i = 0; i < n; ++i) out->emplace_back(std::move(firsts[i]), std::move(seconds[i]));
    return absl::OkStatus();
  }

  void Cancel() override {
    cancelled_.store(true, std::memory_order_relaxed);
    first_->Cancel();
    second_->Cancel();
  }

  void AppendStats(std::vector<StageStats>* out) const override {
    first_->AppendStats(out);
    second_->AppendStats(out);
    out->push_back(totals_.Report(options_.name));
  }

 private:
  ZipStage(StagePtr<A> first, StagePtr<B> second, ZipOptions options)
      : first_(std::move(first)), second_(std::move(second)), options_(std::move(options)) {}

  // This stage's own section (after both inputs').
  absl::Status SaveOwn(StateWriter& w) {
    w.BeginStage(options_.name, OptionsHash().Add(std::string_view("zip")).value());
    w.Bool(done_);
    return absl::OkStatus();
  }
  absl::Status RestoreOwn(StateReader& r) {
    DATAECHO_RETURN_IF_ERROR(r.BeginStage(options_.name));
    done_ = r.Bool();
    return r.status();
  }

  StagePtr<A> first_;
  StagePtr<B> second_;
  const ZipOptions options_;
  std::atomic<bool> cancelled_{false};
  absl::Status status_;  // an input's error: sticky (consumer thread only)
  bool done_ = false;    // consumer thread only
  internal::StageTotals<internal::Counter> totals_;
};

}  // namespace dataecho

#endif  // DATAECHO_ZIP_H_
