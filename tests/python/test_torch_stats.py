# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""dataecho.torch.DataLoader.stats(): the workers' pipelines as one, with the training
loop's own pulls; combine_stats and dataecho.format_stats on figures given exactly."""

import numpy as np
import pytest

import dataecho
import dataecho.torch as det


def build(images, labels):
    def make(shard):
        return (dataecho.from_arrays(images, labels)
                .shard(rank=shard.rank, world_size=shard.world_size)
                .prefetch(depth=4)
                .echo(factor=2, seed=1)
                .batch(batch_size=8))
    return make


def test_the_loader_combines_its_workers_stats_with_the_loops_pulls(small_arrays):
    loader = det.DataLoader(det.PipelineDataset(build(*small_arrays)), batch_size=None,
                            num_workers=2)
    batches = list(loader)
    assert len(batches) == 16  # 64 images, echo 2, batches of 8
    workers = loader.dataset.stats()
    assert [w["worker"] for w in workers] == [0, 1]
    stats = loader.stats()
    assert [s["stage"] for s in stats] == [s["stage"] for s in workers[0]["stages"]]
    by_stage = {s["stage"]: s for s in stats}
    assert by_stage["echo"]["fresh"] == 64 and by_stage["echo"]["elements"] == 128
    assert by_stage["echo"]["realized_factor"] == 2
    assert by_stage["batch"]["elements"] == 16
    assert by_stage["prefetch"]["threads"] == 1  # one worker's, not the sum
    top = stats[-1]
    assert top["workers"] == 2
    assert top["consumer_pulls"] == 16  # the training loop's, not a worker's
    assert top["consumer_step_s"] >= 0 and top["consumer_in_next_s"] > 0
    assert top["consumer_first_s"] > 0  # the workers starting, apart
    table = loader.format_stats()
    assert "echo" in table and "bottleneck" in table


def stage(name, **figures):
    row = {"stage": name, "elements": 0, "bytes": 0, "input_wait_s": 0.0,
           "consumer_wait_s": 0.0, "threads": 0}
    row.update(figures)
    return row


def echo_report(worker, fresh, waits):
    """Worker `worker`'s report of vector -> prefetch -> echo: `fresh` items echoed to 30
    elements; `waits` are the prefetch's consumer wait and producer block and the echo's
    input wait."""
    consumer_wait_s, producer_blocked_s, input_wait_s = waits
    factor = 30 // fresh
    return {"worker": worker, "stages": [
        stage("vector", elements=fresh, rank=worker, epoch=3),
        stage("prefetch", elements=fresh, threads=1, consumer_wait_s=consumer_wait_s,
              producer_blocked_s=producer_blocked_s),
        stage("echo", elements=30, fresh=fresh, realized_factor=float(factor),
              input_wait_s=input_wait_s, decisions=[f"factor {factor}"])]}


def test_counts_are_summed_times_averaged_ratios_weighted():
    reports = [
        echo_report(0, 10, (2.0, 0.5, 1.0)),
        echo_report(1, 30, (4.0, 1.5, 3.0)),
        {"worker": 2, "stages": [stage("other", elements=5)]},  # a shape of its own: left out
    ]
    rows = det.combine_stats(reports, {"pulls": 7, "step_s": 1.5, "in_next_s": 0.25})
    assert [r["stage"] for r in rows] == ["vector", "prefetch", "echo"]
    vector, prefetch, echo = rows
    assert vector["elements"] == 40 and prefetch["threads"] == 1
    assert vector["epoch"] == 3 and "rank" not in vector  # the workers' ranks differ
    assert prefetch["consumer_wait_s"] == 3.0 and prefetch["producer_blocked_s"] == 1.0
    assert echo["fresh"] == 40 and echo["elements"] == 60
    assert echo["realized_factor"] == 1.5  # (3 x 10 + 1 x 30) / 40 fresh = 60 / 40
    assert echo["input_wait_s"] == 2.0
    assert echo["decisions"] == ["worker 0: factor 3", "worker 1: factor 1"]
    assert echo["workers"] == 2
    assert (echo["consumer_pulls"], echo["consumer_step_s"], echo["consumer_in_next_s"]) == \
        (7, 1.5, 0.25)
    assert det.combine_stats([]) == []


def test_the_verdict_weighs_the_training_loops_own_wait():
    rows = [stage("vector", elements=1000),
            stage("prefetch", elements=1000, threads=1, consumer_wait_s=0.01,
                  producer_blocked_s=9.0),
            stage("batch", elements=100)]
    # The loop spent 10 s, 0.1 s of it waiting for batches: it is the bottleneck.
    rows[-1].update(consumer_pulls=100, consumer_step_s=9.9, consumer_in_next_s=0.1)
    assert "bottleneck: the consumer" in dataecho.format_stats(rows)
    # The same pipeline, the loop waiting 8 s of 10: the input is.
    rows[-1].update(consumer_step_s=2.0, consumer_in_next_s=8.0)
    rows[1].update(consumer_wait_s=8.0, producer_blocked_s=0.0)
    assert "bottleneck: the consumer" not in dataecho.format_stats(rows)


def test_format_stats_refuses_what_is_not_a_stats_row():
    with pytest.raises(dataecho.InvalidArgumentError, match="stage 1 is a str"):
        dataecho.format_stats([stage("vector"), "prefetch"])
    with pytest.raises(dataecho.InvalidArgumentError, match="'elements' is not a number"):
        dataecho.format_stats([stage("vector", elements="many")])
    assert np.isfinite(len(dataecho.format_stats([])))
