// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// pipeline_iterator.h: range-for over a pipeline, with errors kept.
//
// `for (auto& x : pipeline)` takes the elements one by one (Next()) until the
// end of the stream or the first error; either way the loop simply ends. The
// error is not lost: it becomes the pipeline's status(). So the pattern is
//
//   for (dataecho::Batch& batch : pipeline) Train(batch);
//   if (!pipeline.status().ok()) return pipeline.status();  // the error that ended it
//
// A loop that stops at an error has seen every element produced before it
// (errors arrive in order, stage.h). A pipeline that failed to build ends the
// loop at once, with its build error in status().
//
// The iterator is a single-pass input iterator over one pipeline: begin()
// takes the next element from where the last Next() or loop left off, and
// `x` is valid until the iterator advances. Breaking out of a loop and
// looping again continues the stream; the element the first loop held when
// it broke out is not seen again.
//
// Thread safety: as Next(): one consumer thread.
#ifndef DATAECHO_PIPELINE_ITERATOR_H_
#define DATAECHO_PIPELINE_ITERATOR_H_

#include <cstddef>
#include <iterator>
#include <optional>
#include <utility>

namespace dataecho {

// `P` is a Pipeline<T> (builder.h): value_type and Next() are what it uses.
// Its begin() and end() make these; users never name the type.
template <typename P>
class PipelineIterator {
 public:
  using value_type = typename P::value_type;
  using difference_type = std::ptrdiff_t;
  using reference = value_type&;
  using iterator_category = std::input_iterator_tag;

  PipelineIterator() = default;
  // Takes the first element (or finds the end or the error).
  explicit PipelineIterator(P* pipeline) : pipeline_(pipeline) { Advance(); }

  reference operator*() const { return *current_; }
  value_type* operator->() const { return &*current_; }

  PipelineIterator& operator++() {
    Advance();
    return *this;
  }
  void operator++(int) { Advance(); }

  // At the end: no element (end of stream, an error, or a failed build).
  friend bool operator==(const PipelineIterator& it, std::default_sentinel_t) {
    return !it.current_.has_value();
  }

 private:
  void Advance() {
    current_.reset();
    if (pipeline_ == nullptr) return;
    auto next = pipeline_->Next();  // an error is kept by the pipeline (status())
    if (next.ok() && next->has_value()) current_.emplace(*std::move(*next));
  }

  P* pipeline_ = nullptr;
  // mutable: operator* is const, as for every iterator, and hands out the
  // element the iterator owns.
  mutable std::optional<value_type> current_;
};

}  // namespace dataecho

#endif  // DATAECHO_PIPELINE_ITERATOR_H_
