# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""The builder steps beyond echoing from Python: filter, take, cache, zip,
interleave, padded_batch and from_generator, on real data (in-memory arrays,
TFRecord files written here, Fashion-MNIST)."""

import threading

import numpy as np
import pytest

import dataecho
from conftest import expect_raised_at, raising_at, run_python


def labels_of(pipeline):
    return [e.label for e in pipeline]


def test_filter_keeps_what_the_python_predicate_accepts(small_arrays):
    images, labels = small_arrays
    p = dataecho.from_arrays(images, labels).filter(lambda e: e.label % 2 == 0)
    kept = [(e.source_index, e.label) for e in p]
    assert kept == [(i, i % 10) for i in range(64) if (i % 10) % 2 == 0]
    (row,) = [s for s in p.stats() if s["stage"] == "filter"]
    assert row["dropped"] == 64 - len(kept) and row["elements"] == len(kept)


def test_filter_on_batches_and_records(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    dataecho.write_tfrecord(path, [bytes([i]) * (i + 1) for i in range(10)])
    records = dataecho.from_tfrecord(path).filter(lambda r: len(r.data) > 7)
    assert [len(r.data) for r in records] == [8, 9, 10]
    batches = (dataecho.from_arrays(np.zeros((10, 2), np.uint8)).batch(batch_size=3)
               .filter(lambda b: b.num_rows == 3))
    assert [b.num_rows for b in batches] == [3, 3, 3]


def test_filter_predicate_error_arrives_as_raised_in_order(small_arrays):
    images, labels = small_arrays
    p = dataecho.from_arrays(images, labels).filter(raising_at(5, lambda e: True))
    expect_raised_at(p, 5)


def test_filter_runs_without_the_gil_between_calls(small_arrays):
    # The predicate runs on the pipeline's thread (after a prefetch), not on
    # the thread calling next().
    images, labels = small_arrays
    threads = set()

    def pred(e):
        threads.add(threading.get_ident())
        return True

    p = dataecho.from_arrays(images, labels).filter(pred).prefetch(depth=4)
    assert len(list(p)) == 64
    assert threading.get_ident() not in threads


def test_filter_rejects_a_non_callable(small_arrays):
    with pytest.raises(TypeError, match="callable"):
        dataecho.from_arrays(*small_arrays).filter(3)


def test_take_and_cache_replay_later_epochs(small_arrays, tmp_path):
    images, labels = small_arrays
    assert labels_of(dataecho.from_arrays(images, labels).take(5)) == [0, 1, 2, 3, 4]
    # A generator source cannot start over; cache() lets repeat() replay it.
    calls = []

    def gen():
        for i in range(6):
            calls.append(i)
            yield images[i], int(labels[i])

    p = dataecho.from_generator(gen()).cache().repeat(3)
    got = [(e.epoch, e.label) for e in p]
    assert got == [(epoch, i) for epoch in range(3) for i in range(6)]
    assert calls == list(range(6))  # read once
    (row,) = [s for s in p.stats() if s["stage"] == "cache"]
    assert row["replayed"] == 12 and row["cached"] == 6


def test_cache_over_its_cap_is_resource_exhausted(small_arrays):
    p = dataecho.from_arrays(*small_arrays).cache(max_bytes=16 * 10)
    assert len([next(p) for _ in range(10)]) == 10
    with pytest.raises(dataecho.ResourceExhaustedError, match="cache"):
        next(p)


def test_zip_merges_examples_and_records(small_arrays, tmp_path):
    images, labels = small_arrays
    a = dataecho.from_arrays(images[:5], labels[:5])
    b = dataecho.from_arrays(np.arange(3, dtype=np.int32).reshape(3, 1) * 7, [9, 9, 9])
    out = list(a.zip(b))
    assert len(out) == 3  # ends with the shorter
    for i, e in enumerate(out):
        assert len(e.components) == 2
        np.testing.assert_array_equal(e.components[0], images[i])
        np.testing.assert_array_equal(e.components[1], [7 * i])
        assert e.label == labels[i] and e.source_index == i
    path = str(tmp_path / "z.tfrecord")
    dataecho.write_tfrecord(path, [b"ab", b"cde"])
    pairs = list(dataecho.from_tfrecord(path).zip(dataecho.from_arrays(images[:2], [4, 5])))
    assert [bytes(e.components[0]) for e in pairs] == [b"ab", b"cde"]
    assert [e.label for e in pairs] == [4, 5]  # the first Example's label
    batch = next(dataecho.from_arrays(images[:4], labels[:4])
                 .zip(dataecho.from_arrays(images[:4])).batch(batch_size=4))
    assert len(batch.components) == 2 and batch.components[1].shape == (4, 4, 4, 1)


def test_zip_consumes_both_and_rejects_batches(small_arrays):
    a = dataecho.from_arrays(*small_arrays)
    b = dataecho.from_arrays(*small_arrays)
    a.zip(b)
    with pytest.raises(ValueError, match="consumed"):
        b.take(1)
    with pytest.raises(TypeError, match="zip before batch"):
        dataecho.from_arrays(*small_arrays).batch(batch_size=2).zip(
            dataecho.from_arrays(*small_arrays))


def test_interleave_of_pipelines_is_round_robin(small_arrays):
    images, _ = small_arrays
    parts = [dataecho.from_arrays(images[:6], [10 * k + i for i in range(6)]) for k in range(3)]
    got = labels_of(dataecho.interleave(parts, cycle_length=2, block_length=2))
    # tf.data's order: 2 from the first, 2 from the second, ...; the third opens
    # when the first ends.
    assert got == [0, 1, 10, 11, 2, 3, 12, 13, 4, 5, 14, 15, 20, 21, 22, 23, 24, 25]


def test_interleave_with_a_function_opening_files(tmp_path):
    files = []
    for k in range(3):
        files.append(str(tmp_path / f"part-{k}.tfrecord"))
        dataecho.write_tfrecord(files[-1], [f"{k}:{i}".encode() for i in range(3)])
    index = dataecho.from_arrays(np.zeros((3, 1), np.uint8), [0, 1, 2])
    records = index.interleave(lambda e: dataecho.from_tfrecord(files[e.label]),
                               element_type="Record", cycle_length=3)
    assert [r.tobytes() for r in records] == [
        b"0:0", b"1:0", b"2:0", b"0:1", b"1:1", b"2:1", b"0:2", b"1:2", b"2:2"]


def test_interleave_function_errors(small_arrays):
    images, labels = small_arrays
    p = dataecho.from_arrays(images[:2], labels[:2]).interleave(lambda e: 42)
    with pytest.raises(dataecho.InvalidArgumentError, match="expected a dataecho.Pipeline"):
        next(p)
    p = dataecho.from_arrays(images[:2], labels[:2]).interleave(
        lambda e: dataecho.from_arrays(images[:1]).batch(batch_size=1))
    with pytest.raises(dataecho.InvalidArgumentError, match="Batch"):
        next(p)

    def fails(e):
        raise KeyError("no such shard")

    p = dataecho.from_arrays(images[:2], labels[:2]).interleave(fails)
    with pytest.raises(KeyError, match="no such shard"):
        next(p)


def test_padded_batch_gives_masks_and_lengths_as_arrays():
    rows = [dataecho.Example([np.arange(n, dtype=np.int32) + 1], label=n, source_index=n)
            for n in (3, 1, 4, 2)]
    p = dataecho.from_examples(rows).padded_batch(batch_size=2, padding_values=[-1])
    first, second = list(p)
    data, mask, lengths = first.components
    np.testing.assert_array_equal(data, [[1, 2, 3], [1, -1, -1]])
    np.testing.assert_array_equal(mask, [[1, 1, 1], [1, 0, 0]])
    assert mask.dtype == np.uint8 and lengths.dtype == np.int64
    np.testing.assert_array_equal(lengths, [[3], [1]])
    np.testing.assert_array_equal(first.labels, [3, 1])
    assert second.components[0].shape == (2, 4)
    fixed = next(dataecho.from_examples(rows).padded_batch(
        batch_size=4, padded_shapes=[[6]], masks=False, lengths=False))
    assert len(fixed.components) == 1 and fixed.components[0].shape == (4, 6)
    too_long = dataecho.from_examples(rows).padded_batch(batch_size=4, padded_shapes=[[2]])
    with pytest.raises(dataecho.InvalidArgumentError, match="example 3 component 0"):
        next(too_long)
    with pytest.raises(TypeError, match="padded_shapes"):
        dataecho.from_examples(rows).padded_batch(padded_shapes=3)


def test_from_generator_items_and_gil(fashion_mnist):
    images = np.arange(24, dtype=np.uint8).reshape(6, 2, 2, 1)

    def items():
        yield images[0]                                   # an array: label 0
        yield images[1], 7                                # (array, label)
        yield [images[2], np.array([1.5], np.float32)], 8  # (list of arrays, label)
        yield dataecho.Example([images[3]], label=9, source_index=100)

    out = list(dataecho.from_generator(items()))
    assert [(e.label, e.source_index, len(e.components)) for e in out] == [
        (0, 0, 1), (7, 1, 1), (8, 2, 2), (9, 100, 1)]
    np.testing.assert_array_equal(out[2].components[0], images[2])
    # next(iterator) runs on the pipeline's own thread, taking the GIL for the
    # call; meanwhile this thread keeps running Python.
    seen = set()

    def numbers():
        for i in range(200):
            seen.add(threading.get_ident())
            yield np.full((28, 28, 1), i % 256, np.uint8), i % 10

    total = 0
    with dataecho.from_generator(numbers()).prefetch(depth=8).batch(batch_size=50) as p:
        for batch in p:
            total += batch.num_rows
    assert total == 200 and threading.get_ident() not in seen


def test_from_generator_error_arrives_as_raised():
    class Broken(RuntimeError):
        pass

    def gen():
        yield np.zeros(2, np.uint8)
        raise Broken("generator failed")

    p = dataecho.from_generator(gen())
    assert next(p).components[0].shape == (2,)
    with pytest.raises(Broken, match="generator failed"):
        next(p)
    bad = dataecho.from_generator([np.zeros(2, np.uint8), "text"])
    next(bad)
    with pytest.raises(dataecho.StatusError, match="item 1"):
        next(bad)
    with pytest.raises(TypeError):
        dataecho.from_generator(5)
    with pytest.raises(dataecho.UnimplementedError):
        dataecho.from_generator([np.zeros(2, np.uint8)]).repeat(2)


def test_from_generator_closed_mid_flight_does_not_hang():
    def endless():
        while True:
            yield np.zeros((4,), np.uint8)

    p = dataecho.from_generator(endless()).prefetch(depth=2)
    next(p)
    p.close()
    with pytest.raises(dataecho.CancelledError):
        next(p)


def test_interpreter_exit_with_python_steps_mid_flight():
    # A generator source, a Python filter and an interleave function, all
    # waiting for the GIL on the pipeline's threads when the interpreter exits
    # without close(): the atexit hook joins them; exit neither hangs nor crashes.
    code = """
import numpy as np, dataecho
def endless():
    while True:
        yield np.zeros(4, np.uint8), 1
p = (dataecho.from_generator(endless()).filter(lambda e: True).prefetch(depth=4)
     .interleave(lambda e: dataecho.from_arrays(np.zeros((2, 2), np.uint8)), cycle_length=2)
     .prefetch(depth=4))
next(p)
print("ok", flush=True)
"""
    result = run_python(code, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"


def test_unbatch_gives_back_the_rows_of_each_batch(small_arrays):
    images, labels = small_arrays
    p = dataecho.from_arrays(images, labels).repeat(2).batch(batch_size=5).unbatch()
    rows = list(p)
    assert [(e.source_index, e.label) for e in rows] == [(i, i % 10) for i in range(64)] * 2
    np.testing.assert_array_equal(rows[7].components[0], images[7])
    assert [e.epoch for e in rows[:60]] == [0] * 60 and rows[-1].epoch == 1
    (row,) = [s for s in p.stats() if s["stage"] == "unbatch"]
    assert row["elements"] == 128 and row["batches"] == 26
    cast = next(dataecho.from_arrays(images).batch(batch_size=4, cast="float32").unbatch())
    assert cast.components[0].dtype == np.float32
    echoed = dataecho.from_arrays(images[:2]).batch(batch_size=2).echo(factor=2).unbatch(name="rows")
    assert [(e.source_index, e.repeat_index) for e in echoed] == [(0, 0), (1, 0), (0, 1), (1, 1)]
    with pytest.raises(TypeError, match=r"\.unbatch\(\) needs a pipeline of Batchs; this one "
                                        r"yields Examples: batch\(\) or padded_batch\(\) first"):
        dataecho.from_arrays(images).unbatch()
    with pytest.raises(TypeError, match="bogus"):
        dataecho.from_arrays(images).batch(batch_size=2).unbatch(bogus=1)
