// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
#include "py_pipeline.h"

#include <pthread.h>
#include <pybind11/stl.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "dataecho/stats.h"
#include "dataecho/status_macros.h"
#include "stats.h"
#include "status.h"

namespace dataecho::python {
namespace {

// How long next() waits with the GIL released before it checks for signals.
constexpr absl::Duration kSignalCheckInterval = absl::Milliseconds(50);

absl::Mutex registry_mu;
std::vector<std::weak_ptr<PipelineHandle>>& Registry() ABSL_EXCLUSIVE_LOCKS_REQUIRED(registry_mu) {
  static auto* handles = new std::vector<std::weak_ptr<PipelineHandle>>();
  return *handles;
}

// Threads inside next(): interpreter exit waits for them to leave it (they
// hold no GIL while they wait, and a thread that takes the GIL back during
// finalization is ended by Python mid-C++, which aborts).
absl::Mutex waiters_mu;
int waiters ABSL_GUARDED_BY(waiters_mu) = 0;
// How long CloseAll waits for them.
constexpr absl::Duration kExitWaitLimit = absl::Seconds(10);

// Counts the fork()s that led to this process: a child increments it (an
// at-fork handler, RegisterPipeline). A handle made under another count was
// inherited: its threads run in the process that made it, not here.
std::atomic<uint64_t> fork_generation{0};

// The error every use of an inherited handle raises.
absl::Status InheritedError(pid_t owner) {
  return absl::FailedPreconditionError(
      absl::StrCat("this pipeline belongs to the parent process (pid ", owner,
                   "), whose threads run it; build a new one in the child (pid ", getpid(), ")"));
}

class WaiterScope {
 public:
  WaiterScope() {
    absl::MutexLock lock(&waiters_mu);
    ++waiters;
  }
  ~WaiterScope() {
    absl::MutexLock lock(&waiters_mu);
    --waiters;
  }
  WaiterScope(const WaiterScope&) = delete;
  WaiterScope& operator=(const WaiterScope&) = delete;
};

const char* ElementNameOf(const AnyPipeline& p) {
  return std::visit(
      [](const auto& pl) { return ElementName<typename std::decay_t<decltype(pl)>::value_type>(); },
      p);
}

// Runs `fn` without the GIL if this thread holds it.
template <typename F>
void WithoutGil(F&& fn) {
  if (Py_IsInitialized() != 0 && PyGILState_Check() != 0) {
    py::gil_scoped_release nogil;
    fn();
  } else {
    fn();
  }
}

template <typename T>
py::object NextFrom(Puller<T>& puller) {
  const WaiterScope waiter;
  // An element already waiting is taken with the GIL held: Pop() without a
  // timeout only takes the puller's mutex, which no thread holds while it
  // waits for the GIL or for a stage.
  std::optional<typename Puller<T>::Item> item = puller.Pop(absl::ZeroDuration());
  while (true) {
    if (!item.has_value()) {
      py::gil_scoped_release nogil;
      item = puller.Pop(kSignalCheckInterval);
    }
    if (item.has_value()) {
      if (!item->ok()) ThrowStatus(item->status());
      if (!(*item)->has_value()) throw py::stop_iteration();
      return py::cast(std::move(***item));
    }
    // Still waiting: let Python run its signal handlers (Ctrl-C raises
    // KeyboardInterrupt here). The element keeps coming: the next call gets it.
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
}

}  // namespace

PipelineHandle::PipelineHandle(AnyPipeline pipeline)
    : element_type_(ElementNameOf(pipeline)),
      pid_(getpid()),
      generation_(fork_generation.load()),
      builder_(std::move(pipeline)) {}

bool PipelineHandle::Inherited() const { return generation_ != fork_generation.load(); }

void PipelineHandle::CheckOwnProcess() const {
  if (Inherited()) ThrowStatus(InheritedError(pid_));
}

PipelineHandle::~PipelineHandle() { Close(); }

AnyPipeline PipelineHandle::TakeForBuilder(const char* method) {
  if (Inherited()) ThrowStatus(InheritedError(pid_));
  absl::MutexLock lock(&mu_);
  switch (state_) {
    case State::kBuilding:
      if (restored_) {
        ThrowStatus(absl::FailedPreconditionError(absl::StrCat(
            ".", method,
            "() after restore_state(): restore the state into the finished pipeline, after its "
            "last builder call")));
      }
      break;
    case State::kConsumed:
      throw py::value_error(std::string("this pipeline was consumed by .") + consumed_by_ +
                            "(): use the pipeline that call returned");
    case State::kIterating:
      throw py::value_error(std::string(".") + method +
                            "() on a pipeline that is being iterated: add stages before the "
                            "first next()");
    case State::kClosed:
      throw py::value_error(std::string(".") + method + "() on a closed pipeline");
    case State::kRestoring: ThrowStatus(CheckBuildingLocked(method));
  }
  state_ = State::kConsumed;
  consumed_by_ = method;
  AnyPipeline out = *std::move(builder_);
  builder_.reset();
  return out;
}

absl::Status PipelineHandle::CheckBuildingLocked(const char* method) const {
  switch (state_) {
    case State::kBuilding: return absl::OkStatus();
    case State::kRestoring:
      return absl::FailedPreconditionError(
          absl::StrCat(method, "() while restore_state() runs in another thread"));
    case State::kConsumed:
      return absl::FailedPreconditionError(
          absl::StrCat(method, "() on a pipeline consumed by .", consumed_by_,
                       "(): call it on the pipeline that call returned"));
    case State::kIterating:
      return absl::FailedPreconditionError(
          absl::StrCat(method, "() after the first next(): call it on a freshly built pipeline"));
    case State::kClosed:
      return absl::FailedPreconditionError(absl::StrCat(method, "() on a closed pipeline"));
  }
  return absl::OkStatus();
}

PipelineHandle::AnyPuller PipelineHandle::StartLocked() {
  AnyAhead ahead = std::move(ahead_);
  ahead_ = std::monostate();
  return std::visit(
      [&](auto& p) -> AnyPuller {
        using T = typename std::decay_t<decltype(p)>::value_type;
        StagePtr<T> stage = ValueOrThrow(std::move(p).Release());
        loss_feedback_ = stage->loss_feedback();
        if (absl::Status s = ApplyEpochLocked(*stage); !s.ok()) {
          p = Pipeline<T>(s);  // sticky: every next() raises it
          ThrowStatus(s);
        }
        std::vector<T> first;
        if (auto* a = std::get_if<std::vector<T>>(&ahead)) first = std::move(*a);
        return std::make_shared<Puller<T>>(std::move(stage), std::move(first));
      },
      *builder_);
}

py::object PipelineHandle::Next() {
  if (Inherited()) ThrowStatus(InheritedError(pid_));
  AnyPuller puller;
  {
    absl::MutexLock lock(&mu_);
    switch (state_) {
      case State::kBuilding:
        puller_ = StartLocked();
        builder_.reset();
        restored_ = false;
        state_ = State::kIterating;
        break;
      case State::kIterating: break;
      case State::kConsumed:
        throw py::value_error(std::string("this pipeline was consumed by .") + consumed_by_ +
                              "(): iterate the pipeline that call returned");
      case State::kClosed: ThrowStatus(absl::CancelledError("pipeline closed"));
      case State::kRestoring: ThrowStatus(CheckBuildingLocked("next"));
    }
    puller = puller_;  // kept alive while we wait, even if closed meanwhile
  }
  return std::visit(
      [](auto& p) -> py::object {
        if constexpr (std::is_same_v<std::decay_t<decltype(p)>, std::monostate>) {
          throw py::stop_iteration();
        } else {
          return NextFrom(*p);
        }
      },
      puller);
}

void PipelineHandle::Cancel() {
  if (Inherited()) return;  // its stages and their locks are the parent's
  absl::MutexLock lock(&mu_);
  if (builder_.has_value()) std::visit([](auto& p) { p.Cancel(); }, *builder_);
  std::visit(
      [](auto& p) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(p)>, std::monostate>) p->Cancel();
      },
      puller_);
}

void PipelineHandle::Close() {
  std::optional<AnyPipeline> builder;
  AnyPuller puller;
  std::vector<Buffer> kept;  // freed last, after the stages
  if (Inherited()) {
    // The threads that run these stages exist only in the parent, and locks
    // they held at fork() stay held here: touch nothing (no stats, no cancel,
    // no join), leak it all on purpose.
    absl::MutexLock lock(&mu_);
    if (state_ == State::kClosed) return;
    state_ = State::kClosed;
    new std::optional<AnyPipeline>(std::move(builder_));  // NOLINT: leaked on purpose
    new AnyPuller(std::move(puller_));                    // NOLINT: leaked on purpose
    builder_.reset();
    puller_ = std::monostate();
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    if (state_ == State::kClosed) return;
    std::vector<StageStats> stats;
    if (builder_.has_value()) stats = std::visit([](auto& p) { return p.Stats(); }, *builder_);
    std::visit(
        [&](auto& p) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(p)>, std::monostate>) {
            p->AppendStats(&stats);
          }
        },
        puller_);
    if (state_ != State::kConsumed) final_stats_ = std::move(stats);
    state_ = State::kClosed;
    builder = std::move(builder_);
    builder_.reset();
    puller = std::move(puller_);
    puller_ = std::monostate();
    kept.swap(kept_);
  }
  WithoutGil([&] {
    std::visit(
        [](auto& p) {
          if constexpr (!std::is_same_v<std::decay_t<decltype(p)>, std::monostate>) p->Shutdown();
        },
        puller);
    builder.reset();
    puller = std::monostate();
    kept.clear();
  });
}

std::vector<StageStats> PipelineHandle::Stats() const {
  if (Inherited()) ThrowStatus(InheritedError(pid_));
  absl::MutexLock lock(&mu_);
  if (builder_.has_value()) return std::visit([](const auto& p) { return p.Stats(); }, *builder_);
  std::vector<StageStats> stats;
  std::visit(
      [&](const auto& p) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(p)>, std::monostate>) {
          p->AppendStats(&stats);
        }
      },
      puller_);
  return state_ == State::kClosed ? final_stats_ : stats;
}

void PipelineHandle::CloseAll() {
  std::vector<std::shared_ptr<PipelineHandle>> live;
  {
    absl::MutexLock lock(&registry_mu);
    for (const std::weak_ptr<PipelineHandle>& w : Registry()) {
      if (std::shared_ptr<PipelineHandle> h = w.lock()) live.push_back(std::move(h));
    }
    Registry().clear();
  }
  for (const std::shared_ptr<PipelineHandle>& h : live) h->Close();
  // Threads that were waiting in next() now raise CancelledError; let them
  // leave next() before the interpreter finalizes.
  WithoutGil([] {
    absl::MutexLock lock(&waiters_mu);
    waiters_mu.AwaitWithTimeout(absl::Condition(
                                    +[](int* n) { return *n == 0; }, &waiters),
                                kExitWaitLimit);
  });
}

std::shared_ptr<PipelineHandle> MakeHandle(AnyPipeline pipeline) {
  const absl::Status status = std::visit([](const auto& p) { return p.status(); }, pipeline);
  CheckOk(status);
  auto handle = std::make_shared<PipelineHandle>(std::move(pipeline));
  absl::MutexLock lock(&registry_mu);
  std::vector<std::weak_ptr<PipelineHandle>>& all = Registry();
  std::erase_if(all, [](const std::weak_ptr<PipelineHandle>& w) { return w.expired(); });
  all.push_back(handle);
  return handle;
}

void ThrowWrongElement(const char* method, const char* wanted, const char* have, const char* hint) {
  throw py::type_error(std::string(".") + method + "() needs a pipeline of " + wanted +
                       "s; this one yields " + have + "s" + hint);
}

PipelineClass RegisterPipeline(py::module_& m) {
  PipelineClass cls(m, "Pipeline",
                    R"(A dataecho input pipeline: a Python iterator over its elements.

Made by a source (from_tfrecord, from_idx, from_arrays, ...) and extended by
builder calls that mirror the C++ builder (map, prefetch, echo, adaptive_echo,
auto_echo, shuffle, batch, throttle, take, shard, echoed_batches). Each call
returns a new Pipeline and consumes the one it was called on. Options are
keyword arguments named and defaulted as the C++ option structs' fields; a bad
option raises InvalidArgumentError at the call.

Iterating runs the stages on their C++ threads; next() releases the GIL while
it waits, so other Python threads run. The pipeline runs up to three elements
ahead of Python, so it keeps working while Python
handles an element (its "python" stats row). close() (or `with`, or del, or
interpreter exit) cancels it and joins its threads.)");
  cls.def_property_readonly("element_type", &PipelineHandle::element_type,
                            "'Record', 'Example' or 'Batch': what next() returns.")
      .def("__iter__", [](const py::object& self) { return self; })
      .def("__next__", &PipelineHandle::Next,
           "The next element. Waits with the GIL released; Ctrl-C raises KeyboardInterrupt "
           "(the element still comes with the next call). StopIteration at the end; an "
           "error raises its StatusError subclass, and every later call raises it again.")
      .def("cancel", &PipelineHandle::Cancel,
           "Cancels the pipeline from any thread: blocked and later next() calls raise "
           "CancelledError.")
      .def("close", &PipelineHandle::Close,
           "Cancels the pipeline, joins its threads and frees its stages. Idempotent.")
      .def("__enter__", [](const py::object& self) { return self; })
      .def("__exit__",
           [](PipelineHandle& self, const py::args&) {
             self.Close();
             return false;
           })
      .def(
          "stats",
          [](const PipelineHandle& self) {
            py::list out;
            for (const StageStats& s : self.Stats()) out.append(StatsDict(s));
            return out;
          },
          "Every stage's statistics, source first, as dicts: stage, elements, bytes, "
          "input_wait_s, consumer_wait_s and the stage's own figures (echo: fresh, repeats, "
          "realized_factor; batch: fresh_rows, buffer_allocations; ...).")
      .def(
          "format_stats", [](const PipelineHandle& self) { return FormatStatsTable(self.Stats()); },
          "The stats as an aligned text table.")
      .def("__repr__", [](const PipelineHandle& self) {
        return std::string("<dataecho.Pipeline of ") + self.element_type() + "s>";
      });
  RegisterPipelineState(cls);
  RegisterPipelineLoss(cls);
  // A child of fork() (a DataLoader worker) makes pipelines of its own: the
  // registry's and the waiters' locks must not be copied while another thread
  // holds them. In the child, the handles made before are inherited (they
  // raise FailedPreconditionError) and no thread waits in next().
  static const int at_fork = pthread_atfork(
      [] {
        registry_mu.Lock();
        waiters_mu.Lock();
      },
      [] {
        waiters_mu.Unlock();
        registry_mu.Unlock();
      },
      [] {
        waiters_mu.Unlock();
        registry_mu.Unlock();
        fork_generation.fetch_add(1);
        absl::MutexLock lock(&waiters_mu);
        waiters = 0;  // the threads in next() stayed in the parent
      });
  static_cast<void>(at_fork);
  m.def("_close_all", &PipelineHandle::CloseAll,
        "Closes every live pipeline (registered with atexit by the package).");
  return cls;
}

}  // namespace dataecho::python
