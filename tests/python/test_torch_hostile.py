# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""What a PyTorch training loop does to dataecho and what it hands it: in-place ops on
echoed batches, auto echo placements over epochs, odd values at every entry point."""

import os
import struct

import numpy as np
import pytest
import torch

import dataecho
import dataecho.torch as det


def test_in_place_ops_never_change_an_echoed_copy(small_arrays):
    """Batch echo emits each batch twice; a training loop normalizes in place."""
    def build(shard):
        return (dataecho.from_arrays(*small_arrays).batch(batch_size=8, cast="float32")
                .echo(factor=2, seed=1))

    seen = {}
    copies = 0
    for x, _, source, repeat in det.PipelineDataset(build, with_indices=True):
        rows = tuple(source.tolist())
        if rows in seen:
            copies += 1
            assert torch.equal(x, seen[rows]), f"copy {repeat[0].item()} of rows {rows}"
        else:
            seen[rows] = x.clone()
        x.sub_(0.5).div_(0.2)  # what a loop does to its inputs
    assert copies == 8
    # A batch nothing else holds is still viewed without a copy.
    b = next(iter(dataecho.from_arrays(*small_arrays).batch(batch_size=8)))
    t = torch.utils.dlpack.from_dlpack(b.to_dlpack(0))
    assert t.data_ptr() == b.components[0].ctypes.data


def test_a_cached_element_is_not_changed_by_in_place_ops(small_arrays):
    p = dataecho.from_arrays(*small_arrays).batch(batch_size=8).cache().repeat(2)
    first = []
    for i, b in enumerate(p):
        x, _ = det.to_tensors(b)
        if i < 8:
            first.append(x.clone())
        else:
            assert torch.equal(x, first[i - 8])
        x.zero_()


def auto_build(placement, rows=64):
    def build(shard):
        images = np.repeat(np.arange(rows, dtype=np.uint8), 16).reshape(rows, 4, 4, 1)
        return (dataecho.from_arrays(images, np.arange(rows) % 10)
                .shard(rank=shard.rank, world_size=shard.world_size)
                .prefetch(depth=8)
                .echoed_batches(dataecho.RandomFlip(seed=1), placement=placement,
                                auto_placement=dataecho.AutoPlacementOptions(
                                    max_factor=3, decide_every=2),
                                shuffle={"buffer_size": 16, "seed": 2},
                                batch={"batch_size": 4}))
    return build


@pytest.mark.parametrize("placement", ["auto", "adaptive"])
def test_auto_placements_run_epoch_after_epoch(placement):
    ds = det.PipelineDataset(auto_build(placement), with_epoch=True)
    for epoch in range(3):
        batches = list(ds)
        assert batches and {e for _, _, e in batches} == {epoch}
    # repeat() over the planner starts it over as well, keeping its decisions.
    p = auto_build(placement)(dataecho.Shard(0, 1)).repeat(2)
    assert {b.epoch for b in p} == {0, 1}


PLACEMENTS = ["before_augment", "after_augment", "batch"]


def planners(ds):
    return [[row for row in entry["stages"] if row["stage"] == "echo_planner"][0]
            for entry in ds.stats()]


@pytest.mark.parametrize("num_workers", [0, 2])
@pytest.mark.parametrize("placement", ["auto", "adaptive"])
def test_auto_echo_starts_each_epoch_from_the_last_epochs_plan(num_workers, placement):
    ds = det.PipelineDataset(auto_build(placement, rows=512))
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=num_workers)
    list(loader)  # epoch 0: measures, then decides
    before = planners(ds)
    assert len(before) == max(num_workers, 1)
    for row in before:
        assert row["decisions"] and not row["decisions"][0].startswith("from the start")
    list(loader)  # epoch 1, its pipelines built afresh: they start from epoch 0's plans
    for b, a in zip(before, planners(ds)):
        first = a["decisions"][0]
        assert first.startswith("from the start: "), first
        if placement == "auto":
            assert first.startswith(f"from the start: {PLACEMENTS[int(b['placement'])]} "
                                    f"echo, e = {b['factor']:.2f}"), (first, b)
    if num_workers == 0:  # and into checkpoints: a resumed run starts from the plan too
        state = ds.state_dict()
        assert state["planner"]["factor"] == planners(ds)[0]["factor"]
        again = det.PipelineDataset(auto_build(placement, rows=512))
        again.load_state_dict(state)
        list(again)
        assert planners(again)[0]["decisions"][0].startswith("from the start: ")


def test_set_epoch_takes_ints_in_range_only(small_arrays):
    ds = det.PipelineDataset(lambda shard: dataecho.from_arrays(*small_arrays).batch(
        batch_size=32), with_epoch=True)
    for bad in (2**64, 2**64 + 3, 2**63, 2**32, -1):
        with pytest.raises(dataecho.InvalidArgumentError, match=str(bad)):
            ds.set_epoch(bad)
        with pytest.raises(dataecho.InvalidArgumentError, match=str(bad).lstrip("-")):
            dataecho.from_arrays(*small_arrays).set_epoch(bad)
    for bad in (1.9, "1", True):
        with pytest.raises(TypeError, match="int"):
            ds.set_epoch(bad)
        with pytest.raises(TypeError, match="int"):
            dataecho.from_arrays(*small_arrays).set_epoch(bad)
    ds.set_epoch(np.int64(3))
    assert {e for _, _, e in ds} == {3}
    ds.set_epoch(2**32 - 1)
    assert {e for _, _, e in ds} == {2**32 - 1}


def test_repeat_after_the_last_epoch_is_an_error_not_epoch_0(small_arrays):
    p = dataecho.from_arrays(*small_arrays).batch(batch_size=32)
    p.set_epoch(2**32 - 1)
    p = p.repeat(3)
    it = iter(p)
    assert [next(it).epoch for _ in range(2)] == [2**32 - 1] * 2
    with pytest.raises(dataecho.OutOfRangeError, match="no epoch after 4294967295"):
        next(it)


def small_build(small_arrays):
    def build(shard):
        return (dataecho.from_arrays(*small_arrays).echo(factor=2, seed=1)
                .shuffle(buffer_size=16, seed=2).batch(batch_size=8))
    return build


def test_states_come_as_any_bytes_like_object(small_arrays):
    build = small_build(small_arrays)
    p = build(None)
    whole = [b.source_indices.tolist() for b in p]
    p = build(None)
    first = [next(p).source_indices.tolist() for _ in range(3)]
    state = p.save_state()
    for form in (bytearray(state), memoryview(state)):
        q = build(None)
        q.restore_state(form)
        assert first + [b.source_indices.tolist() for b in q] == whole
    # Not bytes: a short TypeError naming the type, never the argument.
    huge = list(range(10**6))
    with pytest.raises(TypeError) as info:
        build(None).restore_state(huge)
    assert "list" in str(info.value) and len(str(info.value)) < 200
    # Through the dataset too.
    ds = det.PipelineDataset(build)
    it = iter(ds)
    next(it)
    saved = ds.state_dict()
    again = det.PipelineDataset(build)
    again.load_state_dict(dict(saved, state=bytearray(saved["state"])))
    assert len(list(again)) == 15


def test_load_state_dict_names_what_is_wrong(small_arrays):
    ds = det.PipelineDataset(small_build(small_arrays))
    good = ds.state_dict()
    for broken, why in [
            ({k: v for k, v in good.items() if k != "epoch"}, "no 'epoch'"),
            (dict(good, epoch="1"), "'epoch' is a str"),
            (dict(good, rank="0"), "'rank' is a str"),
            (dict(good, world_size=0), "'world_size' 0"),
            (dict(good, rank=3, world_size=2), "rank 3 of world_size 2"),
            (dict(good, epoch=2**40), "'epoch'"),
            (dict(good, state=[1, 2]), "'state' is a list"),
            (dict(good, version=None), "version None"),
            ("state", "a str, not a dict")]:
        with pytest.raises(dataecho.InvalidArgumentError, match=why):
            ds.load_state_dict(broken)


def test_a_forged_stage_name_that_is_not_utf8_is_a_dataecho_error(small_arrays):
    build = small_build(small_arrays)
    p = build(None)
    next(p)
    state = p.save_state()
    assert b"shuffle" in state
    body = state[:-4].replace(b"shuffle", b"shuf\xffle", 1)
    crc = dataecho.crc32c(body)  # the checksum a forger recomputes (masked, as TFRecord's)
    masked = (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    forged = body + struct.pack("<I", masked)
    with pytest.raises(dataecho.StatusError) as info:
        build(None).restore_state(forged)
    assert "\\xff" in str(info.value)


def test_file_names_that_are_not_utf8(tmp_path):
    name = os.fsdecode(bytes(tmp_path) + b"/train-\xff.tfrecord")  # a str with an escape
    image = np.zeros((4, 4, 1), np.uint8)
    assert dataecho.write_tfrecord(name, [dataecho.encode_image_record(image, label=7)]) == 1
    assert os.path.exists(os.fsencode(name))
    records = list(dataecho.from_tfrecord(name))
    assert len(records) == 1 and records[0].uri.endswith("train-\\xff.tfrecord")  # as shown
    assert dataecho.ObjectStore().expand(name) == [name]
    assert len(list(dataecho.from_tfrecord([os.fsencode(name)]))) == 1
    with pytest.raises(TypeError, match="int"):
        dataecho.from_tfrecord(3)


def test_build_may_take_the_epoch_positionally_only(small_arrays):
    seen = []

    def build(shard, epoch, /):
        seen.append(epoch)
        return dataecho.from_arrays(*small_arrays).batch(batch_size=32)

    ds = det.PipelineDataset(build, with_epoch=True)
    assert [e for _, _, e in ds] == [0, 0]
    assert [e for _, _, e in ds] == [1, 1]
    assert seen == [0, 1]
