# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""PipelineDataset.report_loss(): a torch training loop's loss of a batch, for
the echo planner of the pipeline that made the batch (Pipeline.report_loss)."""

import collections
import weakref

import numpy as np
import torch

import dataecho

# How many of the last yielded batches report_loss() can name: the loop's own,
# plus a few a loop may hold (gradient accumulation, a DataLoader fetching ahead).
# Held without their data (see RecentBatches): naming them costs no memory.
RECENT_BATCHES = 8


class RecentBatches:
    """The last RECENT_BATCHES dataecho.Batch elements a process yielded, each with
    the tensors it became: report_loss() finds the Batch behind what the loop got.

    Neither holds the batch's data: a Batch is kept without its components
    (Batch.without_components(), what report_loss reads) and a tensor by a weak
    reference. Holding them whole kept the last 8 batches' fused buffers alive
    beside the loop's: 8 x 38.5 MB for ImageNet-sized float32 batches, and that
    many more pooled buffers to fault in before a run reached its speed."""

    def __init__(self):
        self._items = collections.deque(maxlen=RECENT_BATCHES)

    def add(self, element, out):
        if isinstance(element, dataecho.Batch):
            self._items.append((element.without_components(),
                                [weakref.ref(t) for t in out if isinstance(t, torch.Tensor)]))

    def clear(self):
        self._items.clear()

    def find(self, batch):
        """The dataecho.Batch behind `batch` (None: the last one yielded); None if none."""
        if not self._items:
            return None
        if batch is None:
            return self._items[-1][0]
        if isinstance(batch, dataecho.Batch):
            return batch
        wanted = _tensors(batch)
        for element, refs in reversed(self._items):
            if any(r() is w for r in refs for w in wanted):
                return element
        return None


def _tensors(batch):
    if isinstance(batch, torch.Tensor):
        return [batch]
    if isinstance(batch, dict):
        batch = list(batch.values())
    if isinstance(batch, (tuple, list)):
        return [t for t in batch if isinstance(t, torch.Tensor)]
    return []


def workers_error(num_workers=None):
    """The FailedPreconditionError of report_loss() when the batches come from
    DataLoader workers (`num_workers` of them, if known): their pipelines run in
    other processes, so a loss reported in this one cannot reach them."""
    count = "num_workers > 0" if num_workers is None else f"num_workers={num_workers}"
    return dataecho.FailedPreconditionError(
        f"report_loss: the batches come from DataLoader workers ({count}), whose pipelines "
        f"run in other processes: a loss reported here cannot reach their echo planners. "
        f"Report losses with num_workers=0 (the pipeline's own threads do the parallel "
        f"work), or leave the planner its fitted copy values")


def loss_values(loss):
    """A loss as Pipeline.report_loss takes it: a float for a scalar (the batch's
    mean), a float64 NumPy array for a 1-D tensor (one per row); detached from the
    graph and moved to the CPU."""
    if isinstance(loss, torch.Tensor):
        loss = loss.detach()
        if loss.dim() == 0:
            return float(loss)
        if loss.dim() != 1:
            raise ValueError(f"report_loss: the loss must be a scalar (the batch's mean) or a "
                             f"1-D tensor of one loss per row, got shape {tuple(loss.shape)} "
                             f"(loss_fn(..., reduction='none') gives the rows)")
        return loss.to(device="cpu", dtype=torch.float64).numpy()
    if isinstance(loss, (int, float, np.floating, np.integer)):
        return float(loss)
    return loss  # a list or array: Pipeline.report_loss checks it
