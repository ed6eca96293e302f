// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "trainer/train_state.h"

#include <bit>
#include <cstdio>
#include <cstring>
#include <utility>

#include "dataecho/echo_planner.h"
#include "dataecho/text.h"
#include "fmt/format.h"

namespace trainer {

void StateWriter::U64(uint64_t v) {
  for (int i = 0; i < 8; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xff);
}

void StateWriter::F64(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  U64(bits);
}

void StateWriter::String(std::string_view s) {
  U64(s.size());
  out_.append(s);
}

void StateWriter::Floats(const std::vector<float>& v) {
  U64(v.size());
  const size_t at = out_.size();
  out_.resize(at + v.size() * sizeof(float));
  static_assert(std::endian::native == std::endian::little, "the state is little-endian");
  if (!v.empty()) std::memcpy(out_.data() + at, v.data(), v.size() * sizeof(float));
}

void StateWriter::U64s(const std::vector<uint64_t>& v) {
  U64(v.size());
  for (uint64_t x : v) U64(x);
}

void StateReader::Fail(std::string_view why) {
  if (status_.ok()) {
    status_ = absl::DataLossError(fmt::format("checkpoint {}: at byte {}: {}", source_, at_, why));
  }
  at_ = in_.size();
}

bool StateReader::Need(size_t n) {
  if (!status_.ok()) return false;
  if (in_.size() - at_ < n) {
    Fail(fmt::format("{} bytes needed, {} left (a checkpoint of another layout?)", n,
                     in_.size() - at_));
    return false;
  }
  return true;
}

uint64_t StateReader::U64() {
  if (!Need(8)) return 0;
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(in_[at_ + i])} << (8 * i);
  at_ += 8;
  return v;
}

double StateReader::F64() {
  const uint64_t bits = U64();
  double v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

std::string StateReader::String() {
  const uint64_t n = U64();
  if (!Need(n)) return {};
  std::string s(in_.substr(at_, n));
  at_ += n;
  return s;
}

std::vector<float> StateReader::Floats(size_t expected) {
  const uint64_t n = U64();
  if (status_.ok() && n != expected) {
    Fail(fmt::format("{} floats, the model has {}", n, expected));
  }
  if (!Need(n * sizeof(float))) return std::vector<float>(expected, 0.0f);
  std::vector<float> v(n);
  if (n > 0) std::memcpy(v.data(), in_.data() + at_, n * sizeof(float));
  at_ += n * sizeof(float);
  return v;
}

std::vector<uint64_t> StateReader::U64s(size_t max_size) {
  const uint64_t n = U64();
  if (status_.ok() && (n > max_size || n > (in_.size() - at_) / 8)) {
    Fail(fmt::format("a list of {} values (at most {} expected)", n, max_size));
  }
  std::vector<uint64_t> v;
  if (!status_.ok()) return v;
  v.reserve(n);
  for (uint64_t i = 0; i < n; ++i) v.push_back(U64());
  return v;
}

std::string StateReader::Rest() {
  if (!status_.ok()) return {};
  std::string rest(in_.substr(at_));
  at_ = in_.size();
  return rest;
}

absl::Status StateReader::Finish() {
  if (status_.ok() && at_ != in_.size()) {
    Fail(fmt::format("{} bytes left over (a checkpoint of another layout?)", in_.size() - at_));
  }
  return status_;
}

std::string OptionsFingerprint(const TrainOptions& o) {
  return fmt::format(
      "seed={};echo={};insert={};max_echo={};batch_size={};shuffle_buffer={};prefetch_depth={};"
      "fresh_budget={};eval_every={};target_accuracy={};stop_at_target={};learning_rate={};"
      "momentum={};weight_decay={};lr_schedule={};train_shards={};train_limit={};test_limit={};"
      "idx_dir={};prefer={}",
      o.seed, o.echo, EchoInsertName(o.insert), o.max_echo, o.batch_size, o.shuffle_buffer,
      o.prefetch_depth, o.fresh_budget, o.eval_every, o.target_accuracy, o.stop_at_target,
      o.learning_rate, o.momentum, o.weight_decay, o.lr_schedule, o.train_shards, o.train_limit,
      o.test_limit, o.idx_dir, dataecho::EchoPreferName(o.prefer));
}

absl::Status CheckFingerprint(StateReader& r, const TrainOptions& options, std::string_view path) {
  const std::string saved = r.String();
  if (!r.status().ok()) return r.status();
  const std::string here = OptionsFingerprint(options);
  if (saved == here) return absl::OkStatus();
  // The first "name=value" that differs.
  auto split = [](std::string_view s) {
    std::vector<std::string_view> parts;
    while (!s.empty()) {
      const size_t semi = s.find(';');
      parts.push_back(s.substr(0, semi));
      s = semi == std::string_view::npos ? std::string_view() : s.substr(semi + 1);
    }
    return parts;
  };
  const std::vector<std::string_view> a = split(saved), b = split(here);
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string_view x = i < a.size() ? a[i] : "", y = i < b.size() ? b[i] : "";
    if (x != y) {
      return absl::FailedPreconditionError(fmt::format(
          "checkpoint {} was written by a run with other options: {} there, {} here (resume "
          "with the same flags, or use another --checkpoint_dir)",
          path, x, y));
    }
  }
  return absl::FailedPreconditionError(fmt::format("checkpoint {}: other options", path));
}

void SaveModel(Mlp& model, Sgd& sgd, StateWriter& w) {
  w.U64(model.layers().size());
  for (size_t l = 0; l < model.layers().size(); ++l) {
    const DenseLayer& layer = model.layers()[l];
    w.Floats(layer.weights);
    w.Floats(layer.bias);
    w.Floats(sgd.velocity_weights()[l]);
    w.Floats(sgd.velocity_bias()[l]);
  }
}

void RestoreModel(StateReader& r, Mlp& model, Sgd& sgd) {
  const uint64_t layers = r.U64();
  if (r.status().ok() && layers != model.layers().size()) {
    r.Fail(fmt::format("{} layers, the model has {}", layers, model.layers().size()));
  }
  for (size_t l = 0; l < model.layers().size() && r.status().ok(); ++l) {
    DenseLayer& layer = model.layers()[l];
    std::vector<float> weights = r.Floats(layer.weights.size());
    std::vector<float> bias = r.Floats(layer.bias.size());
    std::vector<float> vw = r.Floats(layer.weights.size());
    std::vector<float> vb = r.Floats(layer.bias.size());
    if (!r.status().ok()) return;
    layer.weights = std::move(weights);
    layer.bias = std::move(bias);
    sgd.velocity_weights()[l] = std::move(vw);
    sgd.velocity_bias()[l] = std::move(vb);
  }
}

namespace {
void PutOptional(StateWriter& w, const std::optional<int64_t>& v) {
  w.U64(v.has_value());
  w.I64(v.value_or(0));
}
std::optional<int64_t> GetOptional(StateReader& r) {
  const bool has = r.U64() != 0;
  const int64_t v = r.I64();
  return has ? std::optional<int64_t>(v) : std::nullopt;
}
}  // namespace

void SaveLoop(const TrainResult& t, const LoopState& loop, StateWriter& w) {
  w.I64(t.steps_total);
  w.I64(t.examples_total);
  w.I64(t.fresh_examples_total);
  w.U64(t.data_digest);
  PutOptional(w, t.fresh_examples_to_target);
  PutOptional(w, t.steps_to_target);
  w.U64(t.seconds_to_target.has_value());
  w.F64(t.seconds_to_target.value_or(0));
  w.F64(t.eval_seconds);
  w.F64(t.data_wait_seconds);
  w.F64(t.step_seconds);
  w.F64(t.upstream_examples_per_second);
  w.List(t.curve, [&](const CurvePoint& p) {
    w.I64(p.fresh_examples);
    w.F64(p.test_accuracy);
  });
  w.I64(loop.next_eval);
  w.F64(loop.accuracy);
  w.F64(loop.train_seconds);
  w.I64(loop.dump_bytes);
}

void RestoreLoop(StateReader& r, TrainResult& t, LoopState& loop) {
  t.steps_total = r.I64();
  t.examples_total = r.I64();
  t.fresh_examples_total = r.I64();
  t.data_digest = r.U64();
  t.fresh_examples_to_target = GetOptional(r);
  t.steps_to_target = GetOptional(r);
  const bool has_seconds = r.U64() != 0;
  const double seconds = r.F64();
  t.seconds_to_target = has_seconds ? std::optional<double>(seconds) : std::nullopt;
  t.eval_seconds = r.F64();
  t.data_wait_seconds = r.F64();
  t.step_seconds = r.F64();
  t.upstream_examples_per_second = r.F64();
  t.curve.clear();
  r.List(1'000'000, "curve points", [&] {
    CurvePoint p;
    p.fresh_examples = r.I64();
    p.test_accuracy = r.F64();
    t.curve.push_back(p);
  });
  loop.next_eval = r.I64();
  loop.accuracy = r.F64();
  loop.train_seconds = r.F64();
  loop.dump_bytes = r.I64();
  if (r.status().ok() && (t.steps_total < 0 || t.fresh_examples_total < 0 || loop.next_eval < 0 ||
                          loop.dump_bytes < 0)) {
    r.Fail("negative counters");
  }
}

absl::StatusOr<std::unique_ptr<dataecho::CheckpointDir>> OpenCheckpoints(
    const TrainOptions& options, std::string_view program) {
  dataecho::CheckpointDirOptions dir_options{
      .keep = 2,
      .warn =
          [program = std::string(program)](std::string_view warning) {
            std::fprintf(stderr, "%s warning: %s\n", program.c_str(),
                         dataecho::TerminalSafe(warning).c_str());
          },
      .background = true};
  if (options.checkpoint_every > 0) {
    return dataecho::CheckpointDir::OpenForWriting(options.checkpoint_dir, std::move(dir_options));
  }
  if (options.resume) {
    return dataecho::CheckpointDir::OpenForReading(options.checkpoint_dir, std::move(dir_options));
  }
  return nullptr;
}

absl::StatusOr<std::string_view> SectionOf(const dataecho::Checkpoint& checkpoint,
                                           std::string_view name) {
  const std::string* bytes = checkpoint.Section(name);
  if (bytes == nullptr) {
    return absl::DataLossError(
        fmt::format("checkpoint {} has no section \"{}\": not a trainer's", checkpoint.path, name));
  }
  return std::string_view(*bytes);
}

}  // namespace trainer
