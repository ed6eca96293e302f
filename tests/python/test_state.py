# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""save_state() / restore_state() and set_epoch() on dataecho.Pipeline."""

import time

import numpy as np
import pytest

import dataecho


def build(arrays, shard=None):
    p = dataecho.from_arrays(*arrays)
    if shard is not None:
        p = p.shard(rank=shard[0], world_size=shard[1])
    return (p.echo(factor=2, seed=1).shuffle(buffer_size=16, seed=2)
            .batch(batch_size=8))


def rows(batches):
    return [(b.source_indices.tolist(), b.repeat_indices.tolist(), b.epoch) for b in batches]


@pytest.mark.parametrize("shard", [None, (1, 3)])
def test_a_restored_pipeline_continues_exactly_where_the_saved_one_was(small_arrays, shard):
    whole = rows(build(small_arrays, shard))
    assert len(whole) >= 5
    for taken in [0, 1, 3, len(whole) - 1, len(whole)]:
        p = build(small_arrays, shard)
        first = rows(next(p) for _ in range(taken))
        state = p.save_state()
        assert isinstance(state, bytes)
        # Saving moves nothing: a second state (its bytes may differ: the
        # binding may have pulled ahead meanwhile) continues the same way.
        again = p.save_state()
        for s in (state, again):
            q = build(small_arrays, shard)
            q.restore_state(s)
            assert first + rows(q) == whole, taken
        assert first + rows(p) == whole  # the saved one goes on too


def test_the_elements_pulled_ahead_are_part_of_the_state(small_arrays):
    # The binding pulls a few elements ahead of Python: after next() returned
    # batch k, the pipeline already made batches k + 1, k + 2, ... The state
    # must still resume at batch k + 1, skipping none of them.
    whole = rows(dataecho.from_arrays(*small_arrays).batch(batch_size=4))
    for ahead in (1, 2):
        p = dataecho.from_arrays(*small_arrays).batch(batch_size=4)
        first = rows([next(p), next(p)])
        while p.stats()[0]["elements"] < 4 * (2 + ahead):  # batches 2 .. 1 + ahead made
            time.sleep(0.001)
        state = p.save_state()
        q = dataecho.from_arrays(*small_arrays).batch(batch_size=4)
        q.restore_state(state)
        assert first + rows(q) == whole, ahead
        assert first + rows(p) == whole, ahead


def test_a_padded_batch_pipeline_saves_with_its_batch_pulled_ahead():
    # The binding pulls batches ahead of a PaddedBatch, which references the
    # last 16 it made, so its state can be saved.
    examples = [dataecho.Example([np.arange(1 + i % 5, dtype=np.int32)], label=i, source_index=i)
                for i in range(20)]

    def padded():
        return dataecho.from_examples(examples).padded_batch(batch_size=2, padding_values=[-1])

    def contents(batches):
        return [(b.components[0].tolist(), b.labels.tolist()) for b in batches]

    whole = contents(padded())
    p = padded()
    first = contents([next(p), next(p)])
    while p.stats()[0]["elements"] < 6:  # batch 2 made: pulled ahead
        time.sleep(0.001)
    state = p.save_state()
    q = padded()
    q.restore_state(state)
    assert first + contents(q) == whole
    assert first + contents(p) == whole


def test_state_of_a_file_source_through_a_shard(tmp_path):
    records = [bytes([i]) * (i + 1) for i in range(40)]
    for k in range(2):
        dataecho.write_tfrecord(str(tmp_path / f"part-{k}"), records[20 * k:20 * k + 20])

    def records_of():
        return (dataecho.from_tfrecord(str(tmp_path / "part-*")).shard(rank=0, world_size=2)
                .shuffle(buffer_size=8, seed=5))

    whole = [r.tobytes() for r in records_of()]
    p = records_of()
    first = [next(p).tobytes() for _ in range(7)]
    q = records_of()
    q.restore_state(p.save_state())
    assert first + [r.tobytes() for r in q] == whole


def test_misuse_and_bad_states_raise_the_documented_errors(small_arrays):
    p = build(small_arrays)
    next(p)
    state = p.save_state()
    with pytest.raises(dataecho.FailedPreconditionError, match="after the first next"):
        p.restore_state(state)
    with pytest.raises(dataecho.FailedPreconditionError, match="after the first next"):
        p.set_epoch(1)
    other = dataecho.from_arrays(*small_arrays).batch(batch_size=8)
    with pytest.raises(dataecho.InvalidArgumentError, match="echo|shuffle|batch"):
        other.restore_state(state)
    assert len(list(other)) == 8  # unchanged by the bad state
    with pytest.raises(dataecho.DataLossError):
        build(small_arrays).restore_state(state[:-5])
    flipped = bytearray(state)
    flipped[len(state) // 2] ^= 0x40
    with pytest.raises(dataecho.DataLossError):
        build(small_arrays).restore_state(bytes(flipped))
    q = dataecho.from_arrays(*small_arrays).echo(factor=2, seed=1)
    q.restore_state(dataecho.from_arrays(*small_arrays).echo(factor=2, seed=1).save_state())
    with pytest.raises(dataecho.FailedPreconditionError, match="after restore_state"):
        q.shuffle(buffer_size=16, seed=2)
    with pytest.raises(dataecho.FailedPreconditionError, match="already"):
        q.restore_state(state)
    with pytest.raises(dataecho.FailedPreconditionError, match="after restore_state"):
        q.set_epoch(2)


def test_set_epoch_gives_the_draws_of_that_pass_of_repeat(small_arrays):
    repeated = rows(build(small_arrays).repeat(3))
    for epoch in range(3):
        p = build(small_arrays)
        p.set_epoch(epoch)
        assert p.epoch == epoch
        assert rows(p) == [r for r in repeated if r[2] == epoch]
    assert rows(b for b in build(small_arrays).repeat(3) if b.epoch == 1) != \
        rows(b for b in build(small_arrays).repeat(3) if b.epoch == 0)
    # Builder calls keep the epoch; set on the source, it reaches the whole pipeline.
    src = dataecho.from_arrays(*small_arrays)
    src.set_epoch(2)
    p = src.echo(factor=2, seed=1).shuffle(buffer_size=16, seed=2).batch(batch_size=8)
    assert p.epoch == 2
    assert rows(p) == [r for r in repeated if r[2] == 2]
    with pytest.raises(dataecho.InvalidArgumentError):
        build(small_arrays).set_epoch(-1)


def test_an_epochs_state_restores_into_a_pipeline_of_that_epoch(small_arrays):
    p = build(small_arrays)
    p.set_epoch(4)
    whole = rows(p)
    p = build(small_arrays)
    p.set_epoch(4)
    first = rows([next(p), next(p), next(p)])
    state = p.save_state()
    q = build(small_arrays)
    q.set_epoch(4)
    q.restore_state(state)
    assert first + rows(q) == whole
    assert {r[2] for r in whole} == {4}


def test_an_unbatched_pipeline_resumes_at_the_next_row(small_arrays):
    def build():
        return (dataecho.from_arrays(*small_arrays).shuffle(buffer_size=16, seed=2)
                .batch(batch_size=6).unbatch().echo(factor=2, seed=3))

    def keys(examples):
        return [(e.source_index, e.repeat_index, e.components[0].tobytes()) for e in examples]

    whole = keys(build())
    assert len(whole) == 128
    for taken in [0, 1, 5, 6, 7, 64, 127, 128]:
        p = build()
        first = keys(next(p) for _ in range(taken))
        state = p.save_state()
        q = build()
        q.restore_state(state)
        assert first + keys(q) == whole, taken
    with pytest.raises(dataecho.FailedPreconditionError, match="unbatch can reference only"):
        p = build().shuffle(buffer_size=64, seed=4)
        next(p)
        p.save_state()
