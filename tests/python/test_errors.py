# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""Errors become exceptions that keep the status code and message."""

import numpy as np
import pytest

import dataecho
from conftest import expect_raised_at, raising_at


def test_missing_file_is_not_found(tmp_path):
    missing = str(tmp_path / "no-such-images.gz")
    p = dataecho.from_idx(missing, str(tmp_path / "no-such-labels.gz"))
    with pytest.raises(dataecho.NotFoundError) as e:
        next(p)
    assert e.value.code == 5 and e.value.code_name == "NOT_FOUND"
    assert missing in str(e.value)
    assert isinstance(e.value, dataecho.StatusError) and isinstance(e.value, FileNotFoundError)


def test_pattern_matching_nothing_is_not_found(tmp_path):
    with pytest.raises(dataecho.NotFoundError, match="train-"):
        dataecho.from_tfrecord(str(tmp_path / "train-*.tfrecord"))


def test_corrupt_tfrecord_is_data_loss_with_uri_and_offset(tmp_path):
    path = tmp_path / "corrupt.tfrecord"
    dataecho.write_tfrecord(str(path), [b"first record", b"second record"])
    data = bytearray(path.read_bytes())
    second = 12 + len(b"first record") + 4  # header + payload + footer of the first
    data[second + 12 + 3] ^= 0xFF  # a payload byte of the second record
    path.write_bytes(bytes(data))
    p = dataecho.from_tfrecord(str(path))
    assert next(p).tobytes() == b"first record"  # errors come in order
    with pytest.raises(dataecho.DataLossError) as e:
        next(p)
    assert e.value.code == 15
    assert f"{path}:{second}" in str(e.value)
    with pytest.raises(dataecho.DataLossError):  # sticky
        next(p)


def test_skip_corrupt_counts_instead(tmp_path):
    path = tmp_path / "corrupt.tfrecord"
    dataecho.write_tfrecord(str(path), [b"a" * 10, b"b" * 10, b"c" * 10])
    data = bytearray(path.read_bytes())
    data[26 + 12] ^= 1  # the second payload
    path.write_bytes(bytes(data))
    p = dataecho.from_tfrecord(str(path), skip_corrupt=True)
    assert [r.tobytes() for r in p] == [b"a" * 10, b"c" * 10]
    assert p.stats()[0]["skipped_corrupt"] == 1


@pytest.mark.parametrize("call, message", [
    (lambda p: p.prefetch(depth=0), "prefetch depth must be >= 1, got 0"),
    (lambda p: p.echo(factor=0.5), "factor"),
    (lambda p: p.shuffle(buffer_size=0), "shuffle buffer_size must be >= 1, got 0"),
    (lambda p: p.batch(batch_size=0), "batch_size"),
    (lambda p: p.map(dataecho.RandomFlip(), parallelism=-1), "map parallelism"),
    (lambda p: p.batch(batch_size=4, cast="float64"), "unknown dtype 'float64'"),
    # An integer its C++ field cannot hold: a value out of range, not a TypeError.
    (lambda p: p.batch(batch_size=2**63),
     r"batch\(\): option 'batch_size' = 9223372036854775808 is out of range.*2\*\*31 - 1"),
    (lambda p: p.prefetch(depth=-2**70), r"option 'depth' = -1180591620717411303424 is out of range"),
    # rank -1 with a world size: out of range (not "set both rank and world_size").
    (lambda p: p.shard(rank=-1, world_size=4), r"rank -1 is out of range \[0, 4\)"),
    (lambda p: p.shard(rank=4, world_size=4), r"rank 4 is out of range \[0, 4\)"),
    (lambda p: p.shard(rank=-5), "rank -5 is out of range"),
])
def test_bad_options_are_invalid_argument(small_arrays, call, message):
    with pytest.raises(dataecho.InvalidArgumentError, match=message) as e:
        call(dataecho.from_arrays(*small_arrays))
    assert e.value.code == 3 and isinstance(e.value, ValueError)


@pytest.mark.parametrize("call, message", [
    (lambda p: p.shuffle(buffer_size=99999999999999), "max_bytes"),
    (lambda p: p.shuffle(buffer_size=100, max_bytes=1000), "max_bytes"),
    (lambda p: p.echoed_batches(batch={"batch_size": 64, "max_bytes": 100}), "max_bytes"),
])
def test_sizes_beyond_the_memory_cap_are_resource_exhausted(small_arrays, call, message):
    # The cap is checked when the stage is made (Shuffle) or at its first batch (Batch).
    with pytest.raises(dataecho.ResourceExhaustedError, match=message) as e:
        list(call(dataecho.from_arrays(*small_arrays)))
    assert e.value.code == 8


def test_python_exception_in_map_is_raised_as_it_was(small_arrays):
    p = dataecho.from_arrays(*small_arrays).map(raising_at(5, lambda e: e), parallelism=2)
    expect_raised_at(p, 5)  # the elements before it in order, then the exception (sticky)


def test_error_classes_by_code():
    assert dataecho.errors.error_class(15) is dataecho.DataLossError
    assert dataecho.errors.error_class(99) is dataecho.StatusError
    e = dataecho.DataLossError("x:1")
    assert e.code == 15 and str(e) == "x:1"


@pytest.mark.parametrize("labels, message", [
    (np.array([0.0, 1.7, 2.0]), r"labels\[1\] = 1.7 is not an integer label"),
    (np.array([0.0, 1.0, np.nan]), r"labels\[2\] = nan is not an integer label"),
    ([1.0, -np.inf, 0.0], r"labels\[1\] = -inf is not an integer label"),
    (np.array([0.0, 0.0, 1e19]), r"labels\[2\] = 1e\+19 is out of range for an int64 label"),
    (np.array([0, 2**63, 1], np.uint64),
     r"labels\[1\] = 9223372036854775808 is out of range for an int64 label"),
    (np.array(["a", "b", "c"]), "labels must be integers, got an array of dtype <U1"),
    (np.array([1, 2]), r"one value per image row \(3 rows\), got shape \(2,\)"),
])
def test_labels_that_are_not_integers_are_invalid_argument(labels, message):
    # They used to be truncated or wrapped silently (1.7 -> 1, NaN -> INT64_MIN).
    with pytest.raises(dataecho.InvalidArgumentError, match=message) as e:
        dataecho.from_arrays(np.zeros((3, 2), np.uint8), labels)
    assert e.value.code == 3 and isinstance(e.value, ValueError)


@pytest.mark.parametrize("labels", [
    np.array([0, 3, 9], np.uint8), np.array([0, 3, 9], np.int32), [0, 3, 9],
    np.array([0.0, 3.0, 9.0]), np.array([0, 3, 9], np.float16),
])
def test_integer_labels_of_any_dtype_and_whole_floats_are_kept(labels):
    p = dataecho.from_arrays(np.zeros((3, 2), np.uint8), labels)
    assert [e.label for e in p] == [0, 3, 9]
    big = np.array([-2**63, 2**63 - 1], np.int64)
    assert [e.label for e in dataecho.from_arrays(np.zeros((2, 1), np.uint8), big)] == list(big)
