# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""dataecho.torch: a training loop's per-batch losses reach the echo planner."""
import time
import weakref

import numpy as np
import pytest
import torch

import dataecho
from conftest import auto_echo_pipeline
import dataecho.torch as det


def auto_build(images, labels):
    def build(shard):
        return auto_echo_pipeline(images, labels)
    return build


def planner_of(dataset):
    stages = dataset.stats()[0]["stages"]
    return [s for s in stages if s["stage"] == "echo_planner"][0]


def test_report_loss_through_the_loader_teaches_the_planner(small_arrays):
    images = np.repeat(small_arrays[0], 40, axis=0)
    labels = np.repeat(small_arrays[1], 40)
    ds = det.PipelineDataset(auto_build(images, labels), with_indices=True)
    loader = torch.utils.data.DataLoader(ds, batch_size=None)
    weight = torch.ones((), requires_grad=True)
    copies = 0
    for i, batch in enumerate(loader):
        if i == 56:
            break
        x, y, source, repeat = batch
        # The copies are memorized (loss 0), the fresh rows not (loss 1): per-row
        # losses with a graph behind them, as loss_fn(..., reduction="none") gives.
        losses = weight * (repeat > 0).logical_not().to(torch.float32)
        copies += int((repeat > 0).sum())
        if i % 2:
            ds.report_loss(batch, losses)
            ds.report_loss(x, losses.mean())  # a tensor of the batch, a scalar mean
        else:
            ds.report_loss(None, losses)  # the last batch yielded
        time.sleep(0.004)
    planner = planner_of(ds)
    assert planner["loss_reports"] == 56 + 28, planner
    assert copies > 0, planner
    assert planner["copy_value_before"] < 0.2, planner
    assert weight.grad is None  # the loss was detached, never backpropagated


def test_dataecho_loader_reports_too(small_arrays):
    ds = det.PipelineDataset(auto_build(*small_arrays))
    loader = det.DataLoader(ds, batch_size=None)
    for i, batch in enumerate(loader):
        loader.report_loss(batch, torch.full((batch[0].shape[0],), 0.5))
        if i == 2:
            break
    assert planner_of(ds)["loss_reports"] == 3


def test_report_loss_errors(small_arrays):
    images = np.repeat(small_arrays[0], 4, axis=0)
    labels = np.repeat(small_arrays[1], 4)
    ds = det.PipelineDataset(auto_build(images, labels))
    with pytest.raises(dataecho.FailedPreconditionError, match="no pipeline"):
        ds.report_loss(None, 0.5)
    it = iter(ds)
    x, y = next(it)
    with pytest.raises(ValueError, match="1-D"):
        ds.report_loss((x, y), torch.zeros((8, 2)))
    with pytest.raises(dataecho.InvalidArgumentError, match="row losses"):
        ds.report_loss((x, y), torch.zeros(3))
    with pytest.raises(ValueError, match="none of the last batches"):
        ds.report_loss((x.clone(), y.clone()), 0.5)
    ds.report_loss((x, y), torch.tensor(0.5))
    del it


def test_report_loss_needs_a_planner(small_arrays):
    def build(shard):
        return dataecho.from_arrays(*small_arrays).echoed_batches(
            None, placement="before_augment", echo={"factor": 2}, batch={"batch_size": 8})
    ds = det.PipelineDataset(build)
    for batch in torch.utils.data.DataLoader(ds, batch_size=None):
        with pytest.raises(dataecho.FailedPreconditionError, match="no echo planner"):
            ds.report_loss(batch, torch.tensor(0.5))
        break


def test_report_loss_with_workers_says_it_cannot(small_arrays):
    ds = det.PipelineDataset(auto_build(*small_arrays))
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=1)
    for batch in loader:
        with pytest.raises(dataecho.FailedPreconditionError, match="DataLoader workers"):
            ds.report_loss(batch, 0.5)
        break
    ours = det.DataLoader(ds, batch_size=None, num_workers=1)
    with pytest.raises(dataecho.FailedPreconditionError, match="DataLoader workers"):
        ours.report_loss(None, 0.5)


def test_the_batches_report_loss_can_name_hold_no_data(small_arrays):
    """The last batches kept for report_loss() keep neither the loop's tensors nor the
    fused buffers behind them (8 ImageNet-sized float32 batches are 308 MB), and a
    batch the loop still holds is still found by its tensors."""
    def build(shard):
        return dataecho.from_arrays(*small_arrays).batch(batch_size=4)

    ds = det.PipelineDataset(build)
    it = iter(ds)
    kept = next(it)
    x, _ = next(it)
    gone = weakref.ref(x)
    del x, _
    next(it)  # (the generator holds the batch it yielded last until the next)
    assert gone() is None  # nothing but the loop held it
    rows = ds._recent.find(None)
    assert rows.num_rows == 4 and rows.components == [] and len(rows.labels) == 4
    assert ds._recent.find(kept).num_rows == 4
    assert ds._recent.find((kept[0].clone(),)) is None
    del it
