// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// ThreadSanitizer support for an uninstrumented Abseil (TSan builds only).
//
// Why this exists: dataecho's mutex is absl::Mutex (with absl::CondVar where
// a hand-off signals explicitly), because its Await(Condition) waits cannot
// miss a wake-up and ABSL_GUARDED_BY / ABSL_EXCLUSIVE_LOCKS_REQUIRED annotate
// every field it protects (docs/design.md, "Threading"); only the run-ahead
// core's locks are POSIX mutexes (internal/mutex.h), which TSan sees without
// help. The price is this shim: without it a TSan build over the system
// Abseil reports false races.
//
// Debian's libabsl is not built with -fsanitize=thread, so TSan cannot see
// absl::Mutex acquire or release memory (its fast path is an atomic in the
// shared library, its slow path a futex) and reports every access guarded by
// an absl::Mutex as a race. This file wraps the Mutex and CondVar entry
// points (the linker's --wrap, set up by cmake/Sanitize.cmake) and tells TSan
// about each lock (acquire) and unlock (release), which restores the
// happens-before edges the mutex provides. Real races (unguarded accesses)
// are still reported. Readers are treated like writers, which can only hide
// a race between two readers (there is none: readers only read).
//
// The symbol names depend on Abseil's inline namespace;
// DATAECHO_ABSL_MANGLED_NS is its mangled form, e.g. "7debian3" (empty when
// Abseil uses no inline namespace).
#include <type_traits>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

extern "C" void __tsan_acquire(void* addr);  // NOLINT(bugprone-reserved-identifier)
extern "C" void __tsan_release(void* addr);  // NOLINT(bugprone-reserved-identifier)

#define DE_SYM(prefix, name) prefix "_ZN4absl" DATAECHO_ABSL_MANGLED_NS name
#define DE_WRAP(ret, id, name, ...)                                      \
  extern "C" ret Real##id(__VA_ARGS__) __asm__(DE_SYM("__real_", name)); \
  extern "C" ret Wrap##id(__VA_ARGS__) __asm__(DE_SYM("__wrap_", name))

using absl::Condition;
using absl::CondVar;
using absl::Duration;
using absl::Mutex;
using absl::Time;

namespace {
void Acquired(Mutex* mu) { __tsan_acquire(mu); }
void Releasing(Mutex* mu) { __tsan_release(mu); }

// A condition is evaluated with the mutex held, by the waiter or by whichever
// thread releases the mutex: each evaluation acquires and releases it.
struct Guarded {
  const Condition* cond;
  Mutex* mu;
  static bool Eval(void* arg) {
    auto* g = static_cast<Guarded*>(arg);
    Acquired(g->mu);
    const bool r = g->cond->Eval();
    Releasing(g->mu);
    return r;
  }
};

// Calls real(mu, c', args...), where c' evaluates `c` with `mu` visible to
// TSan as held, then tells TSan that `mu` is held. kWait: the call is a wait,
// which holds `mu` on entry and lets go of it while it blocks.
template <bool kWait, typename R, typename... Args>
R Guard(R (*real)(Mutex*, const Condition&, Args...), Mutex* mu, const Condition& c, Args... args) {
  Guarded g{&c, mu};
  if (kWait) Releasing(mu);
  if constexpr (std::is_void_v<R>) {
    real(mu, Condition(&Guarded::Eval, &g), args...);
    Acquired(mu);
  } else {
    const R r = real(mu, Condition(&Guarded::Eval, &g), args...);
    Acquired(mu);
    return r;
  }
}
}  // namespace

DE_WRAP(void, Lock, "5Mutex4LockEv", Mutex*);
DE_WRAP(void, Unlock, "5Mutex6UnlockEv", Mutex*);
DE_WRAP(bool, TryLock, "5Mutex7TryLockEv", Mutex*);
DE_WRAP(void, ReaderLock, "5Mutex10ReaderLockEv", Mutex*);
DE_WRAP(void, ReaderUnlock, "5Mutex12ReaderUnlockEv", Mutex*);
DE_WRAP(bool, ReaderTryLock, "5Mutex13ReaderTryLockEv", Mutex*);
DE_WRAP(void, LockWhen, "5Mutex8LockWhenERKNS0_9ConditionE", Mutex*, const Condition&);
DE_WRAP(void, ReaderLockWhen, "5Mutex14ReaderLockWhenERKNS0_9ConditionE", Mutex*, const Condition&);
DE_WRAP(bool, LockWhenWithTimeout, "5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE",
        Mutex*, const Condition&, Duration);
DE_WRAP(bool, LockWhenWithDeadline, "5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE",
        Mutex*, const Condition&, Time);
DE_WRAP(bool, ReaderLockWhenWithTimeout,
        "5Mutex25ReaderLockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE", Mutex*,
        const Condition&, Duration);
DE_WRAP(bool, ReaderLockWhenWithDeadline,
        "5Mutex26ReaderLockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE", Mutex*, const Condition&,
        Time);
DE_WRAP(void, Await, "5Mutex5AwaitERKNS0_9ConditionE", Mutex*, const Condition&);
DE_WRAP(bool, AwaitWithTimeout, "5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE", Mutex*,
        const Condition&, Duration);
DE_WRAP(bool, AwaitWithDeadline, "5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE", Mutex*,
        const Condition&, Time);
DE_WRAP(void, CondVarWait, "7CondVar4WaitEPNS0_5MutexE", CondVar*, Mutex*);
DE_WRAP(bool, CondVarWaitWithTimeout, "7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE",
        CondVar*, Mutex*, Duration);
DE_WRAP(bool, CondVarWaitWithDeadline, "7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE",
        CondVar*, Mutex*, Time);

// Locks: acquire once held. The *When / Await forms hold the mutex on return
// whatever they return.
void WrapLock(Mutex* mu) { RealLock(mu), Acquired(mu); }
void WrapReaderLock(Mutex* mu) { RealReaderLock(mu), Acquired(mu); }
bool WrapTryLock(Mutex* mu) {
  const bool held = RealTryLock(mu);
  if (held) Acquired(mu);
  return held;
}
bool WrapReaderTryLock(Mutex* mu) {
  const bool held = RealReaderTryLock(mu);
  if (held) Acquired(mu);
  return held;
}
void WrapLockWhen(Mutex* mu, const Condition& c) { Guard<false>(RealLockWhen, mu, c); }
void WrapReaderLockWhen(Mutex* mu, const Condition& c) { Guard<false>(RealReaderLockWhen, mu, c); }
bool WrapLockWhenWithTimeout(Mutex* mu, const Condition& c, Duration d) {
  return Guard<false>(RealLockWhenWithTimeout, mu, c, d);
}
bool WrapLockWhenWithDeadline(Mutex* mu, const Condition& c, Time t) {
  return Guard<false>(RealLockWhenWithDeadline, mu, c, t);
}
bool WrapReaderLockWhenWithTimeout(Mutex* mu, const Condition& c, Duration d) {
  return Guard<false>(RealReaderLockWhenWithTimeout, mu, c, d);
}
bool WrapReaderLockWhenWithDeadline(Mutex* mu, const Condition& c, Time t) {
  return Guard<false>(RealReaderLockWhenWithDeadline, mu, c, t);
}

// Unlocks: release before letting go.
void WrapUnlock(Mutex* mu) { Releasing(mu), RealUnlock(mu); }
void WrapReaderUnlock(Mutex* mu) { Releasing(mu), RealReaderUnlock(mu); }

// Waits release the mutex while blocked and hold it again on return.
void WrapAwait(Mutex* mu, const Condition& c) { Guard<true>(RealAwait, mu, c); }
bool WrapAwaitWithTimeout(Mutex* mu, const Condition& c, Duration d) {
  return Guard<true>(RealAwaitWithTimeout, mu, c, d);
}
bool WrapAwaitWithDeadline(Mutex* mu, const Condition& c, Time t) {
  return Guard<true>(RealAwaitWithDeadline, mu, c, t);
}
void WrapCondVarWait(CondVar* cv, Mutex* mu) {
  Releasing(mu);
  RealCondVarWait(cv, mu);
  Acquired(mu);
}
bool WrapCondVarWaitWithTimeout(CondVar* cv, Mutex* mu, Duration d) {
  Releasing(mu);
  const bool r = RealCondVarWaitWithTimeout(cv, mu, d);
  Acquired(mu);
  return r;
}
bool WrapCondVarWaitWithDeadline(CondVar* cv, Mutex* mu, Time t) {
  Releasing(mu);
  const bool r = RealCondVarWaitWithDeadline(cv, mu, t);
  Acquired(mu);
  return r;
}
