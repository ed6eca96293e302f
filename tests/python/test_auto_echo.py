# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""echoed_batches(placement="auto"): placement and factor from measured costs."""
import time

import numpy as np
import pytest

import dataecho
from conftest import auto_echo_pipeline


def test_auto_placement_decides_and_reports(small_arrays):
    images = np.repeat(small_arrays[0], 40, axis=0)  # 2560 rows
    labels = np.repeat(small_arrays[1], 40)
    p = (dataecho.from_arrays(images, labels)
         .throttle(latency=0.002)  # 2 ms per row, 8 rows per batch: 16 ms per fresh batch
         .prefetch(depth=32)
         .echoed_batches(dataecho.RandomFlip(seed=1), placement="auto",
                         auto_placement=dataecho.AutoPlacementOptions(
                             max_factor=4, prefer="quality", decide_every=4),
                         shuffle={"buffer_size": 32, "seed": 2}, batch={"batch_size": 8},
                         prefetch={"depth": 2}))
    rows = fresh = 0
    it = iter(p)
    for _ in range(40):
        b = next(it)
        rows += b.num_rows
        fresh += b.fresh_rows
        time.sleep(0.004)  # the step: R = 4
    planner = [s for s in p.stats() if s["stage"] == "echo_planner"][0]
    assert planner["decisions"], planner
    assert "echo, e = " in planner["decisions"][0]
    assert planner["factor"] > 1.5, planner
    assert rows > fresh
    with pytest.raises(dataecho.InvalidArgumentError, match="prefer"):
        dataecho.AutoPlacementOptions(prefer="fastest")


def test_auto_placement_copy_values(small_arrays):
    o = dataecho.AutoPlacementOptions(copy_value_batch=0.5)
    assert o.copy_value_batch == 0.5
    assert dataecho.AutoPlacementOptions().copy_value_batch is None  # not set: the gains
    defaults = dataecho.AutoPlacementOptions()
    assert defaults.prefer == "progress"
    assert defaults.copy_gains_batch[-1] < defaults.copy_gains_after[-1] < \
        defaults.copy_gains_before[-1]
    o = dataecho.AutoPlacementOptions(copy_gains_batch=[1.5, 1.8])
    assert o.copy_gains_batch == [1.5, 1.8]
    with pytest.raises(dataecho.InvalidArgumentError, match="copy_gains_after"):
        p = dataecho.from_arrays(*small_arrays).prefetch(depth=8).echoed_batches(
            dataecho.RandomFlip(seed=1), placement="auto",
            auto_placement=dataecho.AutoPlacementOptions(copy_gains_after=[1.2, float("nan")]),
            batch={"batch_size": 8})
        next(iter(p))
    with pytest.raises(dataecho.InvalidArgumentError, match="copy_value_batch"):
        p = dataecho.from_arrays(*small_arrays).prefetch(depth=8).echoed_batches(
            dataecho.RandomFlip(seed=1), placement="auto",
            auto_placement=dataecho.AutoPlacementOptions(copy_value_batch=1.5),
            batch={"batch_size": 8})
        next(iter(p))


def test_echo_diagnostics(small_arrays):
    p = dataecho.from_arrays(*small_arrays).prefetch(depth=8).echoed_batches(
        dataecho.RandomFlip(seed=1), placement="batch", echo={"factor": 2, "seed": 1},
        shuffle={"buffer_size": 16, "seed": 2}, batch={"batch_size": 8}, prefetch={"depth": 2},
        diagnostics=True)
    assert sum(b.num_rows for b in p) == 128
    diag = [s for s in p.stats() if s["stage"] == "echo_diagnostics"][0]
    assert diag["fresh_row_fraction"] == 0.5
    assert diag["copy_distance_steps"] == 1  # a batch's copy is the next step
    assert diag["dup_rows_per_batch"] == 0


def test_the_iterating_threads_cpu_is_the_trainers_not_the_upstreams():
    # The puller's thread pulls the planner; this thread trains (burns CPU)
    # between batches. Its CPU is the trainer's: read as the upstream's, a
    # 2 ms step over 8 rows would be ~0.25 ms of upstream CPU per item.
    images = np.zeros((4096, 4, 4, 1), np.uint8)
    p = (dataecho.from_arrays(images, np.arange(4096) % 10)
         .prefetch(depth=32)
         .echoed_batches(dataecho.RandomFlip(seed=1), placement="auto",
                         auto_placement=dataecho.AutoPlacementOptions(decide_every=4),
                         shuffle={"buffer_size": 32, "seed": 2}, batch={"batch_size": 8},
                         prefetch={"depth": 2}))
    it = iter(p)
    for _ in range(60):
        next(it)
        end = time.thread_time() + 0.002
        while time.thread_time() < end:
            pass
    planner = [s for s in p.stats() if s["stage"] == "echo_planner"][0]
    assert planner["decisions"], planner
    assert planner["cost_upstream_cpu_ms"] < 0.08, planner


def test_report_loss_teaches_the_planner_what_a_copy_is_worth(small_arrays):
    images = np.repeat(small_arrays[0], 40, axis=0)
    labels = np.repeat(small_arrays[1], 40)
    p = auto_echo_pipeline(images, labels)
    copies = 0
    for i, b in enumerate(p):
        if i == 56:
            break
        repeats = np.asarray(b.repeat_indices)
        copies += int((repeats > 0).sum())
        # The copies are memorized (loss 0), the fresh rows not (loss 1).
        p.report_loss(b, np.where(repeats > 0, 0.0, 1.0))
        if i % 2:
            p.report_loss(b, float(b.fresh_rows) / b.num_rows)  # a mean works too
        time.sleep(0.004)
    planner = [s for s in p.stats() if s["stage"] == "echo_planner"][0]
    assert planner["loss_reports"] == 56 + 28, planner
    assert copies > 0, planner
    assert planner["copy_value_before"] < 0.2, planner
    with pytest.raises(dataecho.InvalidArgumentError, match="row losses"):
        p.report_loss(b, [1.0])
    with pytest.raises(ValueError, match="1-D"):
        p.report_loss(b, np.zeros((2, 2)))


def test_report_loss_needs_a_planner(small_arrays):
    p = dataecho.from_arrays(*small_arrays).echoed_batches(
        None, placement="before_augment", echo={"factor": 2}, batch={"batch_size": 8})
    b = next(iter(p))
    with pytest.raises(dataecho.FailedPreconditionError, match="no echo planner"):
        p.report_loss(b, 0.5)
