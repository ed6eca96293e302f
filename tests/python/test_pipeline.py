# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""The builder: sources, stages, transforms, options and stats."""

import numpy as np
import pytest

import dataecho


def test_batches_of_arrays_are_normalized_floats(small_arrays):
    images, labels = small_arrays
    p = dataecho.from_arrays(images, labels).batch(batch_size=16, cast="float32", scale=0.5,
                                                   mean=[1.0], stddev=[2.0])
    assert p.element_type == "Batch"
    batches = list(p)
    assert [b.num_rows for b in batches] == [16] * 4
    x = np.concatenate([b.components[0] for b in batches])
    assert x.dtype == np.float32 and x.shape == (64, 4, 4, 1)
    np.testing.assert_allclose(x, (images.astype(np.float32) * 0.5 - 1.0) / 2.0, rtol=1e-6)
    np.testing.assert_array_equal(np.concatenate([b.labels for b in batches]), labels)
    np.testing.assert_array_equal(np.concatenate([b.source_indices for b in batches]),
                                  np.arange(64))
    assert all(b.fresh_rows == 16 and b.fresh for b in batches)


def test_echo_marks_repeats_and_counts_them(small_arrays):
    images, labels = small_arrays
    p = (dataecho.from_arrays(images, labels).prefetch(depth=8).echo(factor=3.0, seed=1)
         .batch(batch_size=48))
    batches = list(p)
    repeats = np.concatenate([b.repeat_indices for b in batches])
    sources = np.concatenate([b.source_indices for b in batches])
    assert len(sources) == 192
    np.testing.assert_array_equal(np.bincount(sources), np.full(64, 3))
    np.testing.assert_array_equal(np.bincount(repeats), [64, 64, 64])
    assert sum(b.fresh_rows for b in batches) == 64
    echo = next(s for s in p.stats() if s["stage"] == "echo")
    assert echo["fresh"] == 64 and echo["elements"] == 192 and echo["realized_factor"] == 3.0


def test_batch_echo_repeats_whole_batches(small_arrays):
    images, labels = small_arrays
    batches = list(dataecho.from_arrays(images, labels).batch(batch_size=32).echo(factor=2.0))
    assert [(b.repeat_index, b.fresh_rows) for b in batches] == [(0, 32), (1, 0), (0, 32), (1, 0)]
    # A repeat shares its buffer with the batch it repeats.
    assert batches[0].data_pointer(0) == batches[1].data_pointer(0)


def test_builder_consumes_the_pipeline_it_is_called_on(small_arrays):
    p = dataecho.from_arrays(*small_arrays)
    q = p.shuffle(buffer_size=8)
    with pytest.raises(ValueError, match=r"consumed by \.shuffle\(\)"):
        p.prefetch()
    with pytest.raises(ValueError, match="consumed"):
        next(p)
    assert len(list(q)) == 64


def test_no_builder_calls_once_iteration_started(small_arrays):
    p = dataecho.from_arrays(*small_arrays)
    next(p)
    with pytest.raises(ValueError, match="being iterated"):
        p.take(3)


def test_element_types_are_checked(small_arrays, tmp_path):
    batches = dataecho.from_arrays(*small_arrays).batch(batch_size=8)
    with pytest.raises(TypeError, match="Batch"):
        batches.batch(batch_size=2)
    path = tmp_path / "x.tfrecord"
    dataecho.write_tfrecord(str(path), [b"abc"])
    records = dataecho.from_tfrecord(str(path))
    with pytest.raises(TypeError, match="decode them first"):
        records.batch(batch_size=2)
    with pytest.raises(TypeError, match="decode them first"):
        dataecho.from_tfrecord(str(path)).map(dataecho.RandomFlip())


def test_python_map_function(small_arrays):
    images, labels = small_arrays

    def invert(example):
        return example.replace(components=[255 - example.components[0]], label=example.label + 1)

    examples = list(dataecho.from_arrays(images, labels).map(invert, parallelism=2))
    assert [e.source_index for e in examples] == list(range(64))  # input order kept
    np.testing.assert_array_equal(np.stack([e.components[0] for e in examples]), 255 - images)
    assert [e.label for e in examples] == list(labels + 1)


def test_python_map_must_return_an_example(small_arrays):
    p = dataecho.from_arrays(*small_arrays).map(lambda e: 42)
    with pytest.raises(dataecho.InvalidArgumentError, match="expected a dataecho.Example"):
        next(p)


def test_builtin_transforms_in_one_map(fashion_mnist):
    crop = dataecho.RandomCrop(height=24, width=24, padding=0, seed=3)
    flip = dataecho.RandomFlip(probability=1.0)
    assert repr(crop) == "RandomCrop(height=24, width=24, padding=0, seed=3, component=0)"
    p = dataecho.from_idx(*fashion_mnist[:2]).take(10).map([crop, flip], parallelism=2)
    out = list(p)
    assert [e.components[0].shape for e in out] == [(24, 24, 1)] * 10
    # Each transform can also be called directly; the map applied both.
    first = next(dataecho.from_idx(*fashion_mnist[:2]))
    np.testing.assert_array_equal(flip(crop(first)).components[0], out[0].components[0])


def test_tfrecord_image_records_decode(tmp_path):
    images = np.arange(5 * 6 * 3, dtype=np.uint8).reshape(5, 6, 3)
    payloads = [dataecho.encode_image_record(images + i, label=i) for i in range(7)]
    path = tmp_path / "train-00000.tfrecord"
    assert dataecho.write_tfrecord(str(path), payloads) == 7
    records = list(dataecho.from_tfrecord(str(tmp_path / "train-*.tfrecord")))
    assert [r.tobytes() for r in records] == payloads
    assert records[1].uri == str(path) and records[1].offset == len(payloads[0]) + 16
    examples = list(dataecho.from_tfrecord(str(path)).map(dataecho.decode_image_record))
    assert [e.label for e in examples] == list(range(7))
    np.testing.assert_array_equal(examples[3].components[0], images + 3)


def test_file_sharding(tmp_path):
    for i in range(4):
        dataecho.write_tfrecord(str(tmp_path / f"part-{i}"), [bytes([i])])
    got = [list(dataecho.from_tfrecord(str(tmp_path / "part-*"), rank=r, world_size=2))
           for r in range(2)]
    assert [[rec.tobytes() for rec in g] for g in got] == [[b"\0", b"\2"], [b"\1", b"\3"]]
    with pytest.raises(dataecho.FailedPreconditionError, match="would get no file") as e:
        dataecho.from_tfrecord(str(tmp_path / "part-0"), rank=1, world_size=2)
    assert e.value.code == 9
    assert list(dataecho.from_tfrecord(str(tmp_path / "part-0"), rank=1, world_size=2,
                                       allow_empty=True)) == []


def test_element_sharding(small_arrays):
    got = [[e.source_index for e in dataecho.from_arrays(*small_arrays).shard(rank=r, world_size=3)]
           for r in range(3)]
    assert sorted(sum(got, [])) == list(range(64))
    assert got[1][:3] == [1, 4, 7]


def test_options_mirror_the_cpp_defaults():
    assert dataecho.PrefetchOptions().depth == 16
    assert dataecho.ShuffleOptions().buffer_size == 10000
    assert dataecho.BatchOptions().batch_size == 32 and dataecho.BatchOptions().cast is None
    assert (dataecho.BatchOptions().max_bytes, dataecho.BatchOptions().threads,
            dataecho.BatchOptions().parallel_min_rows) == (0, 1, 4096)
    assert dataecho.ShuffleOptions().max_bytes == 0
    assert dataecho.EchoOptions(factor=3).factor == 3.0
    auto = dataecho.AutoEchoOptions(adaptive={"max_factor": 8}, warmup=10)
    assert auto.adaptive.max_factor == 8 and auto.adaptive.pool_size == 64
    assert "depth: int = 16" in dataecho.Pipeline.prefetch.__doc__
    assert "factor: float = 2.0" in dataecho.Pipeline.echo.__doc__


def test_unknown_and_mistyped_options_raise_type_error(small_arrays):
    p = dataecho.from_arrays(*small_arrays)
    with pytest.raises(TypeError, match="unexpected keyword argument 'dpeth'.*depth"):
        p.prefetch(dpeth=3)
    with pytest.raises(TypeError, match="option 'depth' takes int, got str"):
        p.prefetch(depth="3")
    assert len(list(p.take(2))) == 2  # a rejected call does not consume the pipeline


def test_stats_are_dicts_source_first(small_arrays):
    p = dataecho.from_arrays(*small_arrays).prefetch(depth=4).batch(batch_size=16)
    assert [s["stage"] for s in p.stats()] == ["vector", "prefetch", "batch"]
    list(p)
    stats = p.stats()
    assert [s["stage"] for s in stats] == ["vector", "prefetch", "batch", "python"]
    assert stats[-1]["elements"] == 4 and stats[2]["fresh_rows"] == 64
    assert "prefetch" in p.format_stats()


def test_adaptive_and_auto_echo_run(small_arrays):
    adaptive = dataecho.from_arrays(*small_arrays).prefetch().adaptive_echo(max_factor=2, seed=1)
    assert 64 <= len(list(adaptive)) <= 128
    auto = (dataecho.from_arrays(*small_arrays).prefetch()
            .auto_echo(adaptive=dataecho.AdaptiveEchoOptions(max_factor=2), warmup=8))
    assert 64 <= len(list(auto)) <= 128


def test_echoed_batches_before_augment(small_arrays):
    p = dataecho.from_arrays(*small_arrays).prefetch(depth=8).echoed_batches(
        dataecho.RandomFlip(seed=1), placement="before_augment", echo={"factor": 2, "seed": 1},
        shuffle=dataecho.ShuffleOptions(buffer_size=16, seed=2), batch={"batch_size": 32},
        prefetch={"depth": 2})
    batches = list(p)
    assert sum(b.num_rows for b in batches) == 128
    assert sum(b.fresh_rows for b in batches) == 64
    with pytest.raises(dataecho.InvalidArgumentError, match="placement"):
        dataecho.from_arrays(*small_arrays).echoed_batches(placement="sideways")


def test_object_store(tmp_path):
    (tmp_path / "a.bin").write_bytes(b"0123456789")
    store = dataecho.ObjectStore(retry={"max_attempts": 2}).throttled(latency=0.001)
    assert store.stat(str(tmp_path / "a.bin"))["size"] == 10
    assert store.read(str(tmp_path / "a.bin"), offset=2, length=3) == b"234"
    assert store.expand(str(tmp_path / "*.bin")) == [str(tmp_path / "a.bin")]
    assert [o["uri"] for o in store.list(str(tmp_path) + "/")] == [str(tmp_path / "a.bin")]
