# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""next() releases the GIL while it waits for a slow upstream."""

import threading

import pytest

import dataecho


def test_a_python_thread_runs_while_next_waits(small_arrays):
    # The first element takes 30 s (a throttled upstream). Another Python thread
    # waits until next() has started, counts to a million and then cancels the
    # pipeline. Only if next() lets it run while it waits does next() end early,
    # with CancelledError; holding the GIL it would wait the 30 s and return the
    # element.
    p = dataecho.from_arrays(*small_arrays).throttle(latency=30.0)
    counted = []

    def count_then_cancel():
        while [s["stage"] for s in p.stats()][-1] != "python":  # next() has started
            pass
        n = 0
        while n < 1_000_000:
            n += 1
        counted.append(n)
        p.cancel()

    counter = threading.Thread(target=count_then_cancel)
    counter.start()
    with pytest.raises(dataecho.CancelledError):
        next(p)
    counter.join()
    assert counted == [1_000_000]
    p.close()
