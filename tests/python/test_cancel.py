# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""Cancellation: close, del, cancel from another thread, Ctrl-C in next(), and
interpreter exit with pipelines alive all return promptly, without a crash.

The subprocess timeouts only catch hangs; nothing here measures time.
"""

import gc
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import dataecho
from conftest import run_python, settled_task_count, task_count

# A pipeline with threads everywhere: a Python map on 2 workers, a prefetch,
# and a throttle that makes every element take a minute. Its input has no end:
# a map worker that claims the end of its input returns, and with 100 rows
# the workers could read them all ahead (their window grows with their batch)
# and be gone before a test counts them.
SLOW = """
import dataecho, numpy as np
def ident(e):
    return e
def slow_pipeline():
    return (dataecho.from_arrays(np.zeros((100, 4), np.uint8)).repeat()
            .map(ident, parallelism=2).prefetch(depth=4).throttle(latency=60.0)
            .prefetch(depth=2))
"""


def slow_pipeline():
    namespace = {}
    exec(SLOW, namespace)  # noqa: S102
    return namespace["slow_pipeline"]()


def wait_for_threads(at_least=0, at_most=1 << 30):
    """Waits (30 s at most: a hang guard) until the thread count is in range.

    A Python thread's join() returns just before its OS thread ends, so the count
    may take a moment to drop; C++ threads are gone once joined.
    """
    for _ in range(3000):
        if at_least <= task_count() <= at_most:
            return
        time.sleep(0.01)
    raise AssertionError(f"{task_count()} threads, expected [{at_least}, {at_most}]")


def test_close_joins_every_thread():
    baseline = settled_task_count()
    p = slow_pipeline()
    waiter = threading.Thread(target=lambda: pytest.raises(dataecho.CancelledError, next, p))
    waiter.start()  # blocks in next(): the throttle holds the first element a minute
    wait_for_threads(at_least=baseline + 6)  # the waiter, the puller, 2 map workers, 2 prefetches
    p.close()
    assert task_count() <= baseline + 1  # only the waiter may still run
    waiter.join()
    wait_for_threads(at_most=baseline)
    assert [s["stage"] for s in p.stats()][-1] == "python"  # the last stats stay
    with pytest.raises(dataecho.CancelledError):
        next(p)


def test_del_joins_every_thread(small_arrays):
    baseline = settled_task_count()
    p = dataecho.from_arrays(*small_arrays).map(lambda e: e, parallelism=3).prefetch(depth=2)
    next(p)
    assert task_count() > baseline
    del p
    gc.collect()
    assert task_count() == baseline


def test_cancel_from_another_thread_wakes_next():
    p = slow_pipeline()
    timer = threading.Timer(0.2, p.cancel)
    timer.start()
    with pytest.raises(dataecho.CancelledError) as e:
        next(p)
    assert e.value.code == 1
    timer.join()
    p.close()


def test_with_statement_closes():
    baseline = settled_task_count()
    with dataecho.from_arrays(np.zeros((8, 2), np.uint8)).prefetch() as p:
        next(p)
    assert task_count() == baseline


def test_keyboard_interrupt_during_next():
    # The child tells us once its main thread is at next(p) (inside the try:
    # whether SIGINT lands just before the call or during it, KeyboardInterrupt
    # must come out of this line); its stats then show that next() had started.
    child = subprocess.Popen(
        [sys.executable, "-c", SLOW + """
import signal, sys, threading, time
# Ctrl-C as at a terminal, also when this test runs in a background job
# (whose children inherit SIGINT ignored, and Python then leaves it ignored).
signal.signal(signal.SIGINT, signal.default_int_handler)
p = slow_pipeline()
main = threading.main_thread().ident
def report(next_line):
    while sys._current_frames()[main].f_lineno != next_line:
        time.sleep(0.01)
    print("waiting", flush=True)
threading.Thread(target=report, args=(sys._getframe().f_lineno + 2,), daemon=True).start()
try:
    next(p)
except KeyboardInterrupt:
    print("interrupted in", p.stats()[-1]["stage"], flush=True)
    p.close()
    sys.exit(3)
"""], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={"PYTHONPATH": ":".join(p for p in sys.path if p)})
    assert child.stdout.readline() == "waiting\n"
    time.sleep(0.2)  # let next() start waiting (either way the test must pass)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert (child.returncode, out) == (3, "interrupted in python\n"), err


EXIT_STATES = {
    "built": "p = slow_pipeline()\n",
    # Threads running: the map and prefetch blocked on full queues.
    "started": ("p = dataecho.from_arrays(np.zeros((1000, 4), np.uint8))"
                ".map(ident, parallelism=2).prefetch(depth=4)\nnext(p)\n"),
    # A Python map function runs (and holds or wants the GIL) at exit.
    "map_running": ("import time\n"
                    "def nap(e):\n    time.sleep(0.05)\n    return e\n"
                    "p = dataecho.from_arrays(np.zeros((1000, 4), np.uint8))"
                    ".map(nap, parallelism=2).prefetch(depth=64)\n"
                    "next(p)\n"),
    # Another thread blocked in next() (a daemon: exit does not wait for it).
    "daemon_thread_waiting": ("import threading, time\np = slow_pipeline()\n"
                              "t = threading.Thread(target=lambda: next(p), daemon=True)\n"
                              "t.start()\ntime.sleep(0.2)\n"),
}


@pytest.mark.parametrize("state", sorted(EXIT_STATES))
def test_interpreter_exit_with_a_pipeline_alive(state):
    code = SLOW + EXIT_STATES[state] + "print('exiting', flush=True)\n"
    result = run_python(code, timeout=60)
    assert (result.returncode, result.stdout) == (0, "exiting\n"), result.stderr
