# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""repeat(): epochs numbered on the elements, per-epoch draws; RandomResizedCrop."""

import numpy as np
import pytest

import dataecho


def epoch_batches(small_arrays, seed=1, epochs=3):
    return list(dataecho.from_arrays(*small_arrays).shuffle(buffer_size=64, seed=seed)
                .repeat(epochs).batch(batch_size=32))


def test_repeat_numbers_the_epochs_and_reshuffles_each(small_arrays):
    batches = epoch_batches(small_arrays)
    assert [b.epoch for b in batches] == [0, 0, 1, 1, 2, 2]
    orders = [np.concatenate([b.source_indices for b in batches[2 * e:2 * e + 2]])
              for e in range(3)]
    for order in orders:
        assert sorted(order) == list(range(64))  # every example once per epoch
    assert not np.array_equal(orders[0], orders[1])  # each epoch its own order
    again = epoch_batches(small_arrays)  # same seed and epoch, same order
    assert [b.source_indices.tolist() for b in again] == [b.source_indices.tolist()
                                                          for b in batches]
    assert repr(batches[-1]).endswith("epoch=2)")


def test_examples_and_records_carry_their_epoch(small_arrays, tmp_path):
    assert [e.epoch for e in dataecho.from_arrays(*small_arrays).take(3).repeat(2)] == [0] * 3 + [1] * 3
    dataecho.write_tfrecord(str(tmp_path / "r"), [b"a", b"b"])
    assert [r.epoch for r in dataecho.from_tfrecord(str(tmp_path / "r")).repeat(2)] == [0, 0, 1, 1]


def test_augmenters_draw_anew_every_epoch(small_arrays):
    images = np.arange(64 * 8 * 8, dtype=np.uint8).reshape(64, 8, 8, 1)
    crop = dataecho.RandomCrop(height=4, width=4, seed=3)
    out = list(dataecho.from_arrays(images, small_arrays[1]).repeat(2).map(crop))
    first, second = out[:64], out[64:]
    assert [e.source_index for e in first] == [e.source_index for e in second]
    differ = sum(not np.array_equal(a.components[0], b.components[0])
                 for a, b in zip(first, second))
    assert differ > 32  # 25 windows: most items get another crop in epoch 1


def test_repeat_starts_a_parallel_map_over_in_order(small_arrays):
    # A parallel Map starts over under repeat(): its workers drop what ran ahead.
    items = list(dataecho.from_arrays(*small_arrays)
                 .map(dataecho.RandomFlip(), parallelism=2).repeat(2))
    assert [e.epoch for e in items] == [0] * 64 + [1] * 64
    assert [e.source_index for e in items] == list(range(64)) * 2


def test_random_resized_crop_from_pixels_and_from_jpeg(tmp_path):
    rng = np.random.default_rng(0)
    image = np.repeat(np.linspace(0, 255, 64, dtype=np.uint8)[None, :, None], 48, 0)
    image = np.repeat(image, 3, 2)  # a smooth 48x64 RGB gradient: JPEG keeps it close
    image[:, :, 1] = rng.integers(100, 110, (48, 64), dtype=np.uint8)
    options = dict(height=16, width=16, dtype="float32", seed=7, flip_probability=0.5)
    crop = dataecho.RandomResizedCrop(**options)
    assert crop.decodes_records is False
    assert repr(crop).startswith("RandomResizedCrop(height=16, width=16, min_scale=0.08,")
    out = crop(dataecho.Example(image, source_index=5))
    assert out.components[0].shape == (16, 16, 3) and out.components[0].dtype == np.float32
    assert 0.0 <= out.components[0].min() and out.components[0].max() <= 1.0
    # The echoed copy gets another window, the same item the same one.
    again = crop(dataecho.Example(image, source_index=5))
    np.testing.assert_array_equal(again.components[0], out.components[0])
    echoed = crop(dataecho.Example(image, source_index=5, repeat_index=1))
    assert not np.array_equal(echoed.components[0], out.components[0])
    # From JPEG records: only the window is decoded, same window as from the pixels.
    path = tmp_path / "jpeg.tfrecord"
    dataecho.write_tfrecord(str(path), [dataecho.encode_image_record(image, label=i, encoding="jpeg",
                                                                     jpeg_quality=95)
                                        for i in range(6)])
    batch = next(dataecho.from_tfrecord(str(path))
                 .map([dataecho.encoded_image_record, crop], parallelism=2)
                 .batch(batch_size=6))
    decoded = list(dataecho.from_tfrecord(str(path)).map([dataecho.decode_image_record, crop]))
    assert batch.components[0].shape == (6, 16, 16, 3)
    assert batch.labels.tolist() == list(range(6))
    for row, e in zip(batch.components[0], decoded):
        assert np.abs(row - e.components[0]).mean() < 0.03


def test_random_resized_crop_checks_its_options():
    with pytest.raises(dataecho.InvalidArgumentError, match="RandomResizedCrop") as e:
        dataecho.RandomResizedCrop(height=0)
    assert e.value.code == 3
    with pytest.raises(TypeError, match="heigth"):
        dataecho.RandomResizedCrop(heigth=5)
    assert dataecho.RandomResizedCrop(jpeg={"channels": 1}).__repr__().count("channels=1") == 1
