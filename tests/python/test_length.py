# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""len() of a pipeline and of dataecho.torch.PipelineDataset where the pipeline knows it."""

import pytest

import dataecho


def test_len_follows_the_builder_calls_and_matches_what_is_yielded(small_arrays):
    def src():
        return dataecho.from_arrays(*small_arrays)

    cases = [
        (lambda: src(), 64),
        (lambda: src().prefetch(depth=4).shuffle(buffer_size=8, seed=1), 64),
        (lambda: src().echo(factor=3, seed=1), 192),
        (lambda: src().echo(factor=2, seed=1).batch(batch_size=10), 13),
        (lambda: src().echo(factor=2, seed=1).batch(batch_size=10, drop_remainder=True), 12),
        (lambda: src().shard(rank=1, world_size=3).batch(batch_size=4), 6),  # 21 rows
        (lambda: src().take(10).repeat(3), 30),
        (lambda: src().repeat(2).take(100), 100),
        (lambda: src().map(dataecho.RandomFlip(seed=1)).batch(batch_size=64), 1),
        (lambda: dataecho.from_examples([dataecho.Example(small_arrays[0][0])] * 5), 5),
    ]
    for make, n in cases:
        assert len(make()) == n
        assert sum(1 for _ in make()) == n


def test_len_is_a_type_error_where_the_pipeline_cannot_know(small_arrays, tmp_path):
    with pytest.raises(TypeError, match=r"after \.echo\(\) with a fractional factor"):
        len(dataecho.from_arrays(*small_arrays).echo(factor=1.5, seed=1).batch(batch_size=8))
    with pytest.raises(TypeError, match=r"after \.adaptive_echo\(\)"):
        len(dataecho.from_arrays(*small_arrays).adaptive_echo())
    with pytest.raises(TypeError, match="repeats forever"):
        len(dataecho.from_arrays(*small_arrays).repeat())
    dataecho.write_tfrecord(str(tmp_path / "r"), [b"a", b"b"])
    with pytest.raises(TypeError, match="not known"):
        len(dataecho.from_tfrecord(str(tmp_path / "r")))
    assert bool(dataecho.from_tfrecord(str(tmp_path / "r")))  # truthiness never asks len()
    assert bool(dataecho.from_arrays(*small_arrays).take(0))
    assert len(list(dataecho.from_tfrecord(str(tmp_path / "r")))) == 2  # list() still works


def test_filter_makes_it_unknown(small_arrays):
    with pytest.raises(TypeError, match=r"after \.filter\(\)"):
        len(dataecho.from_arrays(*small_arrays).filter(lambda e: e.label < 5).batch(batch_size=8))


def test_the_torch_dataset_has_the_pipelines_len(small_arrays):
    import dataecho.torch as det
    import torch

    def build(shard):
        return (dataecho.from_arrays(*small_arrays)
                .shard(rank=shard.rank, world_size=shard.world_size)
                .echo(factor=2, seed=1).batch(batch_size=8))

    ds = det.PipelineDataset(build)
    assert len(ds) == 16
    assert len(torch.utils.data.DataLoader(ds, batch_size=None)) == 16
    assert sum(1 for _ in ds) == 16

    def unsized(shard):
        return dataecho.from_arrays(*small_arrays).echo(factor=1.5, seed=1).batch(batch_size=8)

    with pytest.raises(TypeError, match="fractional"):
        len(det.PipelineDataset(unsized))
