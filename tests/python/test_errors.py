# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""Errors become exceptions that keep the status code and message."""

import pytest

import dataecho


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
    class Boom(Exception):
        pass

    def explode(example):
        if example.source_index == 5:
            raise Boom("five")
        return example

    p = dataecho.from_arrays(*small_arrays).map(explode, parallelism=2)
    assert [next(p).source_index for _ in range(5)] == [0, 1, 2, 3, 4]  # in order
    with pytest.raises(Boom, match="five"):
        next(p)
    with pytest.raises(Boom):  # sticky
        next(p)


def test_error_classes_by_code():
    assert dataecho.errors.error_class(15) is dataecho.DataLossError
    assert dataecho.errors.error_class(99) is dataecho.StatusError
    e = dataecho.DataLossError("x:1")
    assert e.code == 15 and str(e) == "x:1"
