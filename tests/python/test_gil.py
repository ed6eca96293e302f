# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""next() releases the GIL while it waits for a slow upstream."""

import threading

import dataecho


def test_python_threads_run_while_next_waits(small_arrays):
    # Every element takes 0.3 s: next() blocks that long in C++.
    p = dataecho.from_arrays(*small_arrays).throttle(latency=0.3)
    counts = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            counts[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        before = counts[0]
        example = next(p)  # blocks ~0.3 s in the throttle
        during = counts[0] - before
    finally:
        stop.set()
        counter.join()
    assert example.source_index == 0
    # Holding the GIL would have frozen the counter for the whole wait.
    assert during > 10000, during
