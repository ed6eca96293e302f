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
    with pytest.raises(TypeError, match="not known"):  # an interleave of them
        len(dataecho.interleave([dataecho.from_tfrecord(str(tmp_path / "r")),
                                 dataecho.from_tfrecord(str(tmp_path / "r"))]))
    assert bool(dataecho.from_tfrecord(str(tmp_path / "r")))  # truthiness never asks len()
    assert bool(dataecho.from_arrays(*small_arrays).take(0))


def test_a_tfrecord_source_counts_its_records_when_len_asks(tmp_path):
    import numpy as np

    image = dataecho.encode_image_record(np.zeros((2, 2, 1), np.uint8), label=1)
    for f, n in enumerate((5, 7, 9)):
        dataecho.write_tfrecord(str(tmp_path / f"s-{f}.tfrecord"), [image] * n)
    pattern = str(tmp_path / "s-*.tfrecord")

    def images():
        return dataecho.from_tfrecord(pattern).map(dataecho.decode_image_record)

    cases = [
        (lambda: dataecho.from_tfrecord(pattern), 21),
        (lambda: dataecho.from_tfrecord(pattern, cycle_length=3).prefetch(depth=4), 21),
        (lambda: images().echo(factor=2, seed=1).batch(batch_size=4), 11),
        (lambda: dataecho.from_tfrecord(pattern).shard(rank=1, world_size=2), 10),
        (lambda: dataecho.from_tfrecord(pattern, rank=1, world_size=3), 7),  # file 1 of 3
        (lambda: dataecho.from_tfrecord(pattern).take(4).repeat(2), 8),
    ]
    for make, n in cases:
        assert len(make()) == n
        assert sum(1 for _ in make()) == n
    # Counted per file version: a file rewritten with another count is counted again.
    p = images().batch(batch_size=4)
    dataecho.write_tfrecord(str(tmp_path / "s-0.tfrecord"), [image] * 12)
    assert len(p) == 7  # ceil((12 + 7 + 9) / 4)
    # A file that is not TFRecord: the error names it when len() asks.
    (tmp_path / "s-9.tfrecord").write_bytes(b"not a record file at all")
    with pytest.raises(dataecho.DataLossError, match="s-9.tfrecord"):
        len(dataecho.from_tfrecord(pattern))


def test_the_torch_dataset_over_tfrecord_files_has_a_len(tmp_path):
    import dataecho.torch as det
    import torch

    import numpy as np

    image = dataecho.encode_image_record(np.zeros((2, 2, 1), np.uint8), label=1)
    for f in range(4):
        dataecho.write_tfrecord(str(tmp_path / f"t-{f}"), [image] * 10)

    def build(shard):
        return (dataecho.from_tfrecord(str(tmp_path / "t-*"), rank=shard.rank,
                                       world_size=shard.world_size)
                .map(dataecho.decode_image_record)
                .echo(factor=2, seed=1).batch(batch_size=5))

    loader = torch.utils.data.DataLoader(det.PipelineDataset(build), batch_size=None)
    assert len(loader) == 16 and sum(1 for _ in loader) == 16


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
