# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""dataecho.mix(): pipelines mixed with weights, as C++ dataecho::Mix."""

import math

import numpy as np
import pytest

import dataecho

SPAN = 1_000_000


def inputs(sizes, echo=None):
    """Pipeline k yields Examples with source indices k * SPAN + [0, sizes[k])."""
    out = []
    for k, n in enumerate(sizes):
        rows = [dataecho.Example([np.full(4, (k * 7 + i) % 251, np.uint8)], label=k,
                                 source_index=k * SPAN + i) for i in range(n)]
        p = dataecho.from_examples(rows)
        if echo is not None and echo[k] > 1:
            p = p.echo(factor=echo[k], seed=1)
        out.append(p)
    return out


def indices(pipeline):
    return [(e.epoch, e.source_index) for e in pipeline]


def within_binomial(count, n, p):
    return abs(count - n * p) <= 5 * math.sqrt(n * p * (1 - p))


def test_proportions_within_binomial_bounds():
    weights = [5, 3, 2]
    got = [e.label for e in dataecho.mix(inputs([40_000] * 3), weights=weights, seed=7).take(30_000)]
    for k in range(3):
        assert within_binomial(got.count(k), 30_000, weights[k] / 10), (k, got.count(k))


def test_same_semantics_as_cpp_every_element_once_per_epoch():
    sizes = [50, 13, 1]
    p = dataecho.mix(inputs(sizes), weights=[0.2, 0.5, 0.3], seed=2,
                     on_empty="continue_renormalized").repeat(2)
    seen = indices(p)
    expected = [(e, k * SPAN + i) for e in range(2) for k, n in enumerate(sizes) for i in range(n)]
    assert sorted(seen) == sorted(expected)
    # The same seed gives the same order; another seed another.
    again = indices(dataecho.mix(inputs(sizes), weights=[0.2, 0.5, 0.3], seed=2).repeat(2))
    assert again == seen
    assert indices(dataecho.mix(inputs(sizes), weights=[0.2, 0.5, 0.3], seed=3).repeat(2)) != seen


def test_stop_on_first_empty_and_restart_input():
    stopped = indices(dataecho.mix(inputs([20, 500]), seed=1, on_empty="stop_on_first_empty"))
    small = [i for _, i in stopped if i < SPAN]
    large = [i - SPAN for _, i in stopped if i >= SPAN]
    assert small == list(range(20)) and large == list(range(len(large))) and len(large) < 500

    cycled = indices(dataecho.mix(inputs([20, 500]), seed=1, on_empty="restart_input"))
    large = [i for _, i in cycled if i >= SPAN]
    assert sorted(large) == [SPAN + i for i in range(500)]  # the large one read once
    passes = {}
    for epoch, i in cycled:
        if i < SPAN:
            passes.setdefault(epoch, []).append(i)
    assert sorted(passes) == list(range(len(passes))) and len(passes) > 10
    for epoch, items in passes.items():
        assert len(set(items)) == len(items)
        if epoch < len(passes) - 1:
            assert sorted(items) == list(range(20))


def test_weights_of_fresh_divide_out_each_inputs_echo():
    p = dataecho.mix(inputs([20_000, 20_000], echo=[3.0, 1.0]), seed=3,
                     weights_of="fresh").take(20_000)
    fresh = [0, 0]
    for e in p:
        fresh[e.label] += e.repeat_index == 0
    assert abs(fresh[0] / sum(fresh) - 0.5) < 0.03, fresh
    (row,) = [s for s in p.stats() if s["stage"] == "mix"]
    assert row["input0_fresh"] == fresh[0] and row["input1_fresh"] == fresh[1]
    assert row["input0_echoed"] == row["input0_elements"] - fresh[0] > 0
    assert row["input1_echoed"] == 0 and row["input0_weight"] == 0.5


def build():
    return (dataecho.mix(inputs([30, 45], echo=[1.0, 1.5]), weights=[0.4, 0.6], seed=5,
                         on_empty="restart_input", weights_of="fresh")
            .shuffle(buffer_size=8, seed=1))


def test_state_resumes_exactly_and_set_epoch():
    whole = indices(build())
    for taken in [0, 1, 17, len(whole) - 1, len(whole)]:
        p = build()
        first = [(e.epoch, e.source_index) for e in (next(p) for _ in range(taken))]
        state = p.save_state()
        q = build()
        q.restore_state(state)
        assert first + indices(q) == whole, taken
    p = build()
    p.set_epoch(4)
    fourth = indices(p)
    assert fourth != whole and min(e for e, _ in fourth) == 4


@pytest.mark.parametrize("weights, match", [
    ([float("nan"), 1], "weights"), ([-1, 1], "weights"), ([0, 0], "weights"),
    ([1], "weights"), ([1, 2, 3], "weights")])
def test_bad_weights_are_refused_naming_the_option(weights, match):
    with pytest.raises(dataecho.InvalidArgumentError, match=match):
        dataecho.mix(inputs([2, 2]), weights=weights)


def test_bad_arguments():
    with pytest.raises(dataecho.InvalidArgumentError, match="inputs"):
        dataecho.mix([])
    with pytest.raises(dataecho.InvalidArgumentError, match="on_empty"):
        dataecho.mix(inputs([2, 2]), on_empty="sometimes")
    with pytest.raises(dataecho.InvalidArgumentError, match="weights_of"):
        dataecho.mix(inputs([2, 2]), weights_of="all")
    a, b = inputs([2, 2])
    with pytest.raises(TypeError, match="one element type"):
        dataecho.mix([a, b.batch(batch_size=2)])
    with pytest.raises(ValueError, match="itself"):
        dataecho.mix([a, a])


def test_each_rank_mixes_its_own_shards():
    seen = []
    for rank in range(3):
        parts = [p.shard(rank=rank, world_size=3) for p in inputs([30, 12])]
        got = [i for _, i in indices(dataecho.mix(parts, weights=[0.7, 0.3], seed=1))]
        assert got, rank
        seen += got
    # Every element of both inputs once over the ranks, none on two ranks.
    assert sorted(seen) == sorted([i for i in range(30)] + [SPAN + i for i in range(12)])
