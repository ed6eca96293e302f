# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""fork() while pipelines run: in the child, an inherited pipeline fails at once
(its threads stayed in the parent), a new one works, and exit neither hangs nor
crashes; the parent keeps its pipeline.

Each case runs in a fresh interpreter that forks; an alarm in the child and the
subprocess timeout only catch hangs (an inherited next() used to wait forever,
and so did a child's exit that joined a thread of the parent). Nothing here
measures time.
"""

import textwrap

from conftest import run_python

CHILD_USES_INHERITED = textwrap.dedent("""
    import os, signal, sys
    import numpy as np
    import dataecho

    def ident(e):
        return e

    rows = np.arange(1000, dtype=np.uint8).reshape(1000, 1)
    running = dataecho.from_arrays(rows).map(ident, parallelism=2).prefetch(depth=4)
    next(running)  # its threads run (and wait on full queues) when we fork
    built = dataecho.from_arrays(rows)  # made, never started
    pid = os.fork()
    if pid == 0:
        signal.alarm(30)  # a hang guard: SIGALRM ends a child stuck in C++
        # (The first next() may find an element the parent's puller had ready:
        # the next ones used to wait for that thread forever.)
        for name, call in [("next", lambda: [next(running) for _ in range(3)]),
                           ("built", lambda: next(built)),
                           ("builder", lambda: running.prefetch()), ("stats", running.stats)]:
            try:
                call()
                print(name, "returned", flush=True)
            except dataecho.FailedPreconditionError as e:
                ok = "belongs to the parent process" in str(e) and "new one in the child" in str(e)
                print(name, "raised", "ok" if ok else str(e), flush=True)
        running.cancel()  # no-ops: nothing of the parent's is touched
        running.close()
        new = dataecho.from_arrays(rows[:6], np.arange(6)).map(ident, parallelism=2).prefetch()
        print("new", [e.label for e in new], flush=True)
        sys.exit(0)  # a normal exit: atexit and finalization with `built` alive
    _, status = os.waitpid(pid, 0)
    print("child exit", os.waitstatus_to_exitcode(status), flush=True)
    print("parent", [next(running).source_index for _ in range(2)], flush=True)
""")


def test_inherited_pipeline_fails_fast_in_the_child_and_a_new_one_works():
    result = run_python(CHILD_USES_INHERITED, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "next raised ok", "built raised ok", "builder raised ok", "stats raised ok",
        "new [0, 1, 2, 3, 4, 5]", "child exit 0", "parent [1, 2]"], result.stderr


# At the fork, another thread of the parent waits in next() (the child's exit
# used to wait for it, 10 s, though it never runs there) and a store's HTTP
# client has its network thread (released by every pipeline: the child
# destroys the store).
CHILD_EXITS = textwrap.dedent("""
    import gc, os, signal, sys, threading, time
    import numpy as np
    import dataecho

    store = dataecho.ObjectStore()
    p = None
    try:  # nothing listens on port 1: the client starts, the read fails at once
        p = dataecho.from_tfrecord("http://127.0.0.1:1/x.tfrecord", store=store)
        next(p)
    except dataecho.StatusError as e:
        print("parent", e.code_name, flush=True)
    if p is not None:
        p.close()
    slow = dataecho.from_arrays(np.zeros((10, 1), np.uint8)).throttle(latency=60.0)
    def wait_in_next():
        try:
            next(slow)
        except dataecho.CancelledError:
            pass

    waiter = threading.Thread(target=wait_in_next, daemon=True)
    waiter.start()
    # Its "python" stats row exists once next() started; the GIL is released
    # only inside next(), so the thread is counted as waiting there by then.
    while not any(s["stage"] == "python" for s in slow.stats()):
        time.sleep(0.01)
    pid = os.fork()
    if pid == 0:
        signal.alarm(5)  # a hang guard: exit must not wait for the parent's threads
        del store
        gc.collect()
        print("child deleted the store", flush=True)
        sys.exit(0)
    _, status = os.waitpid(pid, 0)
    print("child exit", os.waitstatus_to_exitcode(status), flush=True)
    slow.cancel()
    waiter.join()
""")


def test_child_exit_leaves_the_parents_threads_alone():
    result = run_python(CHILD_EXITS, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "parent UNAVAILABLE", "child deleted the store", "child exit 0"], result.stderr
