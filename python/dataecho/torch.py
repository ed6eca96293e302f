# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""dataecho.torch: a dataecho pipeline as a PyTorch IterableDataset.

The dataset is made from a *build function* that receives this worker's
:class:`dataecho.Shard` and returns a pipeline; every ``iter()`` (every epoch)
builds a fresh pipeline for the worker that runs it::

    import dataecho, dataecho.torch, torch

    def build(shard):
        return (dataecho.from_tfrecord("gs://bucket/train-*", rank=shard.rank,
                                       world_size=shard.world_size)
                .map(dataecho.decode_image_record, parallelism=4)
                .prefetch(depth=256)
                .echo(factor=2, seed=1)
                .shuffle(buffer_size=10000, seed=2)
                .batch(batch_size=256, cast="float32", scale=1 / 255))

    loader = torch.utils.data.DataLoader(dataecho.torch.PipelineDataset(build),
                                         batch_size=None)   # batches come from dataecho
    for x, y in loader:
        ...

The shard combines the distributed rank (``torch.distributed`` when it is
initialized, else the launcher's environment: RANK/WORLD_SIZE, Open MPI,
Slurm) with the DataLoader worker (``get_worker_info()``): worker ``w`` of
``n`` in process ``r`` of ``R`` is shard ``r * n + w`` of ``R * n``. A source
whose files cannot be split (one IDX file pair, in-memory arrays) splits by
element with ``Pipeline.shard(rank=..., world_size=...)``.

Batches become tensors through DLPack, without a copy (``bfloat16`` stays
``torch.bfloat16``, ``float16`` is ``torch.float16``). The tensors share the
pipeline's buffers, which echoing may share between batches: do not modify them
in place (``x = x.clone()`` first if you must). With ``num_workers > 0`` each
worker process runs its own pipeline, and the DataLoader copies every batch
into shared memory to hand it over; with ``num_workers=0`` nothing is copied,
and dataecho's own threads do the parallel work.
"""

import torch
import torch.utils.data
from torch.utils.dlpack import from_dlpack

import dataecho


def current_shard():
    """This process's and DataLoader worker's share of the data, a dataecho.Shard."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        rank, world = torch.distributed.get_rank(), torch.distributed.get_world_size()
    else:
        env = dataecho.resolve_shard()
        rank, world = env.rank, env.world_size
    info = torch.utils.data.get_worker_info()
    if info is not None:
        rank, world = rank * info.num_workers + info.id, world * info.num_workers
    return dataecho.Shard(rank, world)


def to_tensors(element, with_indices=False):
    """A dataecho.Batch (or Example) as torch tensors, without copying.

    Returns ``(inputs, labels)``: ``inputs`` is the component tensor, or a tuple
    of them if there are several. A Batch's labels are an int64 tensor, an
    Example's an int. With ``with_indices=True`` a Batch also gives its
    ``source_indices`` (int64) and ``repeat_indices`` (int32) tensors, an
    Example its source_index and repeat_index.
    """
    components = [from_dlpack(element.to_dlpack(i)) for i in range(len(element.dtypes))]
    inputs = components[0] if len(components) == 1 else tuple(components)
    if isinstance(element, dataecho.Batch):
        labels = from_dlpack(element.to_dlpack("labels"))
        if with_indices:
            return (inputs, labels, from_dlpack(element.to_dlpack("source_indices")),
                    from_dlpack(element.to_dlpack("repeat_indices")))
        return inputs, labels
    if with_indices:
        return inputs, element.label, element.source_index, element.repeat_index
    return inputs, element.label


class PipelineDataset(torch.utils.data.IterableDataset):
    """An IterableDataset over the pipelines that ``build(shard)`` returns.

    Args:
        build: called with this worker's dataecho.Shard at every iter(); returns a
            dataecho.Pipeline of Batches (use ``DataLoader(ds, batch_size=None)``)
            or of Examples (then the DataLoader batches them).
        with_indices: also yield source and repeat indices (see to_tensors).

    With ``num_workers > 0`` and a start method other than fork, ``build`` must be
    picklable (a module-level function, not a lambda).
    """

    def __init__(self, build, with_indices=False):
        super().__init__()
        self._build = build
        self._with_indices = with_indices

    def __iter__(self):
        pipeline = self._build(current_shard())
        if not isinstance(pipeline, dataecho.Pipeline):
            raise TypeError(f"build() returned {type(pipeline).__name__}, not a dataecho.Pipeline")
        if pipeline.element_type == "Record":
            raise TypeError("build() returned a pipeline of Records: decode them, e.g. "
                            ".map(dataecho.decode_image_record)")
        try:
            for element in pipeline:
                yield to_tensors(element, self._with_indices)
        finally:
            pipeline.close()


__all__ = ["PipelineDataset", "current_shard", "to_tensors"]
