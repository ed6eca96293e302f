# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""Batches reach Python without a copy: arrays view the fused buffers, read-only."""

import gc

import numpy as np
import pytest
import torch
from torch.utils.dlpack import from_dlpack

import dataecho


def pointer(array):
    return array.__array_interface__["data"][0]


def batches(small_arrays, **batch_options):
    images, labels = small_arrays
    return dataecho.from_arrays(images, labels).echo(factor=64.0).batch(batch_size=16,
                                                                        **batch_options)


def test_arrays_view_the_batch_buffers(small_arrays):
    b = next(batches(small_arrays))
    x = b.components[0]
    assert pointer(x) == b.data_pointer(0)
    assert pointer(b.labels) == b.data_pointer("labels")
    assert pointer(b.source_indices) == b.data_pointer("source_indices")
    assert pointer(b.repeat_indices) == b.data_pointer("repeat_indices")
    assert x.base is b  # the array keeps the batch (and so its buffers) alive
    assert pointer(x) % 64 == 0  # BatchOptions.alignment


def test_arrays_are_read_only(small_arrays):
    b = next(batches(small_arrays))
    for a in (b.components[0], b.labels, b.source_indices, b.repeat_indices):
        assert not a.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            a[0] = 0
    copy = np.array(b.components[0])  # a copy is writable
    copy[0] = 1


def test_a_view_keeps_its_buffer_out_of_the_pool(small_arrays):
    p = batches(small_arrays)
    held = next(p).components[0]  # the batch object itself is gone
    gc.collect()
    expected = held.copy()
    seen = set()
    for _ in range(40):
        b = next(p)
        seen.add(b.data_pointer(0))
        del b
    assert pointer(held) not in seen  # never handed out again while viewed
    np.testing.assert_array_equal(held, expected)
    # Released batches are recycled: a handful of buffers served 40 batches.
    assert len(seen) <= 4
    assert next(s for s in p.stats() if s["stage"] == "batch")["buffer_allocations"] <= 6 * 4


def test_float16_is_numpy_float16(small_arrays):
    b = next(batches(small_arrays, cast="float16", scale=1 / 255, mean=[0.5], stddev=[0.25]))
    x = b.components[0]
    assert x.dtype == np.float16 and b.dtypes == ["float16"]
    images = small_arrays[0][b.source_indices].astype(np.float32)
    np.testing.assert_allclose(x.astype(np.float32), (images / 255 - 0.5) / 0.25, atol=2e-3)


def test_bfloat16_for_torch_through_dlpack(small_arrays):
    b = next(batches(small_arrays, cast="bfloat16", scale=1 / 255))
    assert b.dtypes == ["bfloat16"] and b.components[0].dtype == np.uint16  # bit patterns
    t = from_dlpack(b.to_dlpack(0))
    assert t.dtype == torch.bfloat16 and tuple(t.shape) == (16, 4, 4, 1)
    assert t.data_ptr() == b.data_pointer(0)
    images = torch.from_numpy(small_arrays[0][b.source_indices].astype(np.float32))
    torch.testing.assert_close(t.float(), images / 255, atol=4e-3, rtol=4e-3)
    labels = from_dlpack(b.to_dlpack("labels"))
    assert labels.dtype == torch.int64 and labels.data_ptr() == b.data_pointer("labels")


def test_a_torch_tensor_keeps_its_buffer_alive(small_arrays):
    p = batches(small_arrays, cast="float32")
    b = next(p)
    t = from_dlpack(b.to_dlpack(0))
    expected = t.clone()
    address = b.data_pointer(0)
    del b
    gc.collect()
    assert address not in {next(p).data_pointer(0) for _ in range(20)}
    torch.testing.assert_close(t, expected)
