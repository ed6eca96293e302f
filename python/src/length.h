// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// python/src/length.h: how many elements a Python pipeline yields per pass,
// where the binding can tell (Pipeline.__len__, dataecho.torch's len()).
//
// A source of known size (from_arrays, from_examples) starts it; every
// builder call carries it on: prefetch, shuffle, throttle, map and cache
// keep it, echo with a whole factor multiplies it, batch divides it (rounding
// as drop_remainder says), take caps it, shard splits it, repeat multiplies
// it (or makes it infinite). A TFRecord source's count is deferred: read
// (counted once per file version and cached) only when len() asks, then
// carried through the same calls. Anything that adds or drops elements by
// chance, data or timing (filter, adaptive and auto echo, a fractional echo
// factor, interleave) makes it unknown, and says which call did:
//
//   Length n = Length::Known(60000);
//   n = EchoedLength(n, 2.0);                 // 120000
//   n = BatchedLength(n, 256, true);          // 468
//   n = LengthAfter("filter", n);             // unknown: "after .filter()"
//
// Thread safety: a value type.
#ifndef DATAECHO_PYTHON_SRC_LENGTH_H_
#define DATAECHO_PYTHON_SRC_LENGTH_H_

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace dataecho::python {

struct Length {
  enum class Kind { kUnknown, kKnown, kInfinite, kDeferred };
  Kind kind = Kind::kUnknown;
  int64_t n = 0;    // kKnown: the count
  std::string why;  // kUnknown: what made it so (for the TypeError)
  // kDeferred: computes it (may throw, e.g. a file that cannot be read).
  std::shared_ptr<const std::function<Length()>> compute;

  static Length Known(int64_t n) { return {Kind::kKnown, n, "", nullptr}; }
  static Length Infinite() { return {Kind::kInfinite, 0, "", nullptr}; }
  static Length Unknown(std::string why) { return {Kind::kUnknown, 0, std::move(why), nullptr}; }
  static Length Deferred(std::function<Length()> f) {
    return {Kind::kDeferred, 0, "", std::make_shared<const std::function<Length()>>(std::move(f))};
  }
  bool known() const { return kind == Kind::kKnown; }
  bool deferred() const { return kind == Kind::kDeferred; }
  // The length itself, computing a deferred one.
  Length Resolve() const { return deferred() ? (*compute)().Resolve() : *this; }
};

// `op` applied to `in` now, or when `in` is computed if it is deferred.
template <typename Op>
Length Then(const Length& in, Op op) {
  if (!in.deferred()) return op(in);
  return Length::Deferred([in, op] { return op(in.Resolve()); });
}

// After a builder call whose count does not depend on its options: kept by
// prefetch, shuffle, throttle, map, cache; unknown after any other.
inline Length LengthAfter(std::string_view method, const Length& in) {
  for (std::string_view same : {"prefetch", "shuffle", "throttle", "map", "cache"}) {
    if (method == same) return in;
  }
  if (in.kind == Length::Kind::kUnknown) return in;
  return Length::Unknown("after ." + std::string(method) + "()");  // deferred too: not counted
}

// echo(factor): every element `factor` times (a fractional part is drawn per
// element, so the count is not known).
inline Length EchoedLength(const Length& in, double factor) {
  if (in.deferred()) return Then(in, [factor](const Length& l) { return EchoedLength(l, factor); });
  if (!in.known()) return in;
  if (factor != std::floor(factor) || factor < 1 ||
      factor > static_cast<double>(std::numeric_limits<int64_t>::max() / (in.n + 1))) {
    return Length::Unknown("after .echo() with a fractional factor");
  }
  return Length::Known(in.n * static_cast<int64_t>(factor));
}

// batch(batch_size, drop_remainder).
inline Length BatchedLength(const Length& in, int64_t batch_size, bool drop_remainder) {
  if (in.deferred()) {
    return Then(in, [=](const Length& l) { return BatchedLength(l, batch_size, drop_remainder); });
  }
  if (!in.known() || batch_size <= 0) return in;
  return Length::Known(drop_remainder ? in.n / batch_size : (in.n + batch_size - 1) / batch_size);
}

// take(n): all of them if n < 0.
inline Length TakenLength(const Length& in, int64_t n) {
  if (in.deferred()) return Then(in, [n](const Length& l) { return TakenLength(l, n); });
  if (n < 0) return in;
  if (in.kind == Length::Kind::kInfinite) return Length::Known(n);
  if (!in.known()) return in;
  return Length::Known(in.n < n ? in.n : n);
}

// shard(rank, world_size): elements rank, rank + world_size, ...
inline Length ShardedLength(const Length& in, int rank, int world_size) {
  if (in.deferred()) {
    return Then(in, [=](const Length& l) { return ShardedLength(l, rank, world_size); });
  }
  if (!in.known() || world_size <= 0) return in;
  return Length::Known(in.n > rank ? (in.n - rank + world_size - 1) / world_size : 0);
}

// repeat(epochs): forever if epochs < 0 (an empty pass ends it).
inline Length RepeatedLength(const Length& in, int64_t epochs) {
  if (in.deferred())
    return Then(in, [epochs](const Length& l) { return RepeatedLength(l, epochs); });
  if (in.known() && in.n == 0) return in;
  if (epochs < 0) return in.kind == Length::Kind::kUnknown ? in : Length::Infinite();
  if (!in.known()) return in;
  if (epochs > 0 && in.n > std::numeric_limits<int64_t>::max() / epochs) {
    return Length::Unknown("after .repeat(): too many elements to count");
  }
  return Length::Known(in.n * epochs);
}

}  // namespace dataecho::python

#endif  // DATAECHO_PYTHON_SRC_LENGTH_H_
