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

SEEDS. Every worker of the job (rank and DataLoader worker: the shard's rank
of its world_size) reads its own records, and the draws keyed by a record's
job-wide ``source_index`` (crops, flips) differ between workers by
themselves. Shuffle positions and echo's fractional-factor draws come from a
seed and the epoch alone, so while build() runs the dataset mixes the
worker's place into the seeds build() gives shuffle, echo, adaptive_echo,
auto_echo and echoed_batches: workers given the same seeds draw differently,
and the same seeds, epoch and worker layout give the same draws. With one
worker in all, seeds are used as given.

EPOCHS. The dataset numbers its ``iter()`` calls as epochs (0, 1, ...) and
starts each pipeline at its epoch (``Pipeline.set_epoch``): every epoch draws
its own shuffle order, echo copies and augmentations, and the same seeds and
epoch give the same draws, as the C++ ``.Repeat()``. The count lives in memory
the DataLoader's worker processes share with the main process, so it holds
with and without ``persistent_workers``; ``set_epoch(k)`` (as
``DistributedSampler``'s) makes the next ``iter()`` epoch ``k``. ``build`` may
take the epoch (``build(shard, epoch)``), and ``with_epoch=True`` adds it to
what the dataset yields.

CHECKPOINTS. ``state_dict()`` / ``load_state_dict()`` follow torchdata's
``StatefulDataLoader`` protocol: the loader calls them in every worker (one
state per worker) or in the main process, so a training loop saves the loader
with its model and resumes at the exact next batch::

    ds = dataecho.torch.PipelineDataset(build)
    for step, (x, y) in enumerate(ds):
        ...
        if step == k - 1:
            saved = ds.state_dict()          # after k batches
            break
    again = dataecho.torch.PipelineDataset(build)
    again.load_state_dict(saved)
    next(iter(again))                        # batch k + 1 of the same epoch
"""

import inspect
import os
import sys
import time
import warnings

import torch
import torch.utils.data
from torch.utils.dlpack import from_dlpack

import dataecho
from dataecho import _dataecho
from dataecho._worker_shared import MAX_WORKERS, STATS_INTERVAL, SharedEpochs, WorkerReports


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


# The state_dict() format (load_state_dict() checks it).
STATE_VERSION = 1


def _build_takes_epoch(build):
    """Whether build takes the epoch: build(shard, epoch) or a parameter named epoch."""
    try:
        params = list(inspect.signature(build).parameters.values())
    except (TypeError, ValueError):  # a builtin or an odd callable: build(shard)
        return False
    if any(p.name == "epoch" for p in params):
        return "keyword"
    positional = [p for p in params
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                  and p.default is p.empty]
    return "positional" if len(positional) >= 2 else False


def _fetcher_collates(dataset):
    """Whether the DataLoader fetcher calling iter(dataset) batches what it yields
    (DataLoader's batch_size is not None), or None if no fetcher is found."""
    frame = sys._getframe(2)
    for _ in range(4):
        if frame is None:
            return None
        owner = frame.f_locals.get("self")
        if getattr(owner, "dataset", None) is dataset and hasattr(owner, "auto_collation"):
            return bool(owner.auto_collation)
        frame = frame.f_back
    return None


class PipelineDataset(torch.utils.data.IterableDataset):
    """An IterableDataset over the pipelines that ``build(shard)`` returns.

    Args:
        build: called with this worker's dataecho.Shard at every iter(), and with the
            epoch too if it takes two arguments (``build(shard, epoch)``) or one named
            ``epoch``; returns a dataecho.Pipeline of Batches (use
            ``DataLoader(ds, batch_size=None)``) or of Examples (then the DataLoader
            batches them). The dataset starts the pipeline at the epoch itself
            (``Pipeline.set_epoch``): ``build`` need not fold it into its seeds.
        with_indices: also yield source and repeat indices (see to_tensors).
        with_epoch: also yield the epoch (an int), last.

    See the module's documentation for epochs, checkpoints, ``len()`` and ``stats()``.
    With ``num_workers > 0`` and a start method other than fork, ``build`` must be
    picklable (a module-level function, not a lambda).
    """

    def __init__(self, build, with_indices=False, with_epoch=False):
        super().__init__()
        self._build = build
        self._takes_epoch = _build_takes_epoch(build)
        self._with_indices = with_indices
        self._with_epoch = with_epoch
        self._epochs = SharedEpochs()
        self._reports = WorkerReports()
        self._length = None  # len(), once computed
        self._init_local()

    def _init_local(self):
        # This process's iteration (never shared with other processes).
        self._pipeline = None    # the running pipeline of the current iter()
        self._current = None     # {"epoch", "rank", "world_size", "batches"} of it
        self._loaded = None      # a state load_state_dict() gave, for the next iter()
        self._last_stats = None  # the stats of the last pipeline, after it closed
        self._warned = False
        self._pid = os.getpid()  # a forked worker inherits this; it starts afresh

    def __getstate__(self):
        state = self.__dict__.copy()
        for key in ("_pipeline", "_current", "_loaded", "_last_stats", "_warned", "_pid"):
            state.pop(key, None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._init_local()

    @staticmethod
    def _worker():
        info = torch.utils.data.get_worker_info()
        if info is None:
            return None
        if info.id >= MAX_WORKERS:
            raise ValueError(f"dataecho.torch.PipelineDataset serves at most {MAX_WORKERS} "
                             f"DataLoader workers, got worker {info.id}")
        return info.id

    def __len__(self):
        """Batches (or examples) per epoch of this process's share, where the pipeline
        knows it (Pipeline.__len__: a sized source, no filter); TypeError otherwise.

        Built once for this process's shard (and cached). With DataLoader workers each
        worker takes a part of that share, and its last batch may be partial: the
        epoch can then hold up to one more batch per worker than len() says.
        """
        if self._length is None:
            shard = current_shard()
            pipeline = self._make(shard, self._epochs.peek(self._worker() or 0))
            try:
                self._length = len(pipeline)
            finally:
                pipeline.close()
        return self._length

    def set_epoch(self, epoch):
        """Makes the next iter() epoch ``epoch`` (in every worker, persistent or not);
        later ones count on from it."""
        epoch = int(epoch)
        if epoch < 0:
            raise ValueError(f"set_epoch: epoch must be >= 0, got {epoch}")
        self._epochs.set_all(epoch)

    def __iter__(self):
        if self._pid != os.getpid():  # a forked DataLoader worker: the parent's are not ours
            self._init_local()
        worker = self._worker()
        slot = worker or 0
        shard = current_shard()
        loaded, self._loaded = self._loaded, None
        if loaded is not None:
            epoch = loaded["epoch"]
            if (loaded["rank"], loaded["world_size"]) != (shard.rank, shard.world_size):
                raise dataecho.InvalidArgumentError(
                    f"load_state_dict: the state is shard {loaded['rank']} of "
                    f"{loaded['world_size']}, this worker is shard {shard.rank} of "
                    f"{shard.world_size}: resume with the same world size and num_workers")
            self._epochs.set(slot, epoch + 1)
        else:
            epoch = self._epochs.take(slot)
        self._close_current()
        self._current = {"epoch": epoch, "rank": shard.rank, "world_size": shard.world_size,
                         "worker": worker, "batches": 0,
                         "state": loaded["state"] if loaded else None}
        collates = _fetcher_collates(self)
        return self._run(shard, epoch, loaded, worker, collates)

    def _make(self, shard, epoch):
        # With several workers in the job, the seeds build() gives shuffle and echo are mixed
        # with the worker's place in it, so workers draw differently (see SEEDS above).
        _dataecho._seed_stream(shard.rank if shard.world_size > 1 else None)
        try:
            if self._takes_epoch == "keyword":
                pipeline = self._build(shard, epoch=epoch)
            elif self._takes_epoch:
                pipeline = self._build(shard, epoch)
            else:
                pipeline = self._build(shard)
        finally:
            _dataecho._seed_stream(None)
        if not isinstance(pipeline, dataecho.Pipeline):
            raise TypeError(f"build() returned {type(pipeline).__name__}, not a dataecho.Pipeline")
        if pipeline.element_type == "Record":
            raise TypeError("build() returned a pipeline of Records: decode them, e.g. "
                            ".map(dataecho.decode_image_record)")
        return pipeline

    def _run(self, shard, epoch, loaded, worker, collates):
        pipeline = self._make(shard, epoch)
        if collates and pipeline.element_type == "Batch" and not self._warned:
            self._warned = True
            warnings.warn("dataecho.torch.PipelineDataset: the pipeline yields Batches, and the "
                          "DataLoader batches them again (its batch_size is not None): every "
                          "tensor gets a leading dimension of 1. Use DataLoader(dataset, "
                          "batch_size=None).", stacklevel=2)
        pipeline.set_epoch(epoch)
        if loaded is not None and loaded["state"] is not None:
            pipeline.restore_state(loaded["state"])
        self._pipeline = pipeline
        current = self._current
        next_report = time.monotonic() + STATS_INTERVAL
        try:
            for element in pipeline:
                current["batches"] += 1
                out = to_tensors(element, self._with_indices)
                if worker is not None and time.monotonic() >= next_report:
                    self._reports.write(worker, self._entry(pipeline, current))
                    next_report = time.monotonic() + STATS_INTERVAL
                yield (*out, epoch) if self._with_epoch else out
            current["done"] = True  # the epoch ended: a state now is the next epoch's start
        finally:
            self._close_current()

    def _close_current(self):
        pipeline, self._pipeline = self._pipeline, None
        if pipeline is None:
            return
        if self._current is not None and not self._current.get("done"):
            # Left early (break, an error, the DataLoader shutting down). Saving now
            # could wait for an element a stalled upstream never makes: the position
            # is dropped, and state_dict() says so instead of restarting the epoch.
            self._current["left_after"] = self._current["batches"]
        pipeline.close()
        if self._current is not None:
            self._last_stats = self._entry(pipeline, self._current)
            if self._current["worker"] is not None:
                self._reports.write(self._current["worker"], self._last_stats)

    @staticmethod
    def _entry(pipeline, current):
        return {"worker": current["worker"], "rank": current["rank"],
                "world_size": current["world_size"], "epoch": current["epoch"],
                "stages": pipeline.stats()}

    def stats(self):
        """The stats of every pipeline this dataset runs, one dict per process: worker
        (None: this process), rank, world_size, epoch and stages (Pipeline.stats()).
        Workers report every 0.5 s and when their pipeline ends."""
        out = []
        if self._pipeline is not None and self._current is not None:
            out.append(self._entry(self._pipeline, self._current))
        elif self._last_stats is not None:
            out.append(self._last_stats)
        out += self._reports.read_all()
        return sorted(out, key=lambda e: -1 if e["worker"] is None else e["worker"])

    def state_dict(self):
        """This process's position (StatefulDataLoader calls it in every worker): the
        epoch and, once its pipeline started, Pipeline.save_state() behind the last
        batch yielded."""
        current = self._current
        if current is None or current.get("done"):  # the start of the next epoch
            shard = current_shard()
            slot = self._worker() or 0
            current = {"epoch": self._epochs.peek(slot), "rank": shard.rank,
                       "world_size": shard.world_size, "state": None}
        if self._pipeline is not None:
            state = self._pipeline.save_state()
        elif "left_after" in current:
            raise dataecho.FailedPreconditionError(
                f"state_dict(): the iteration of epoch {current['epoch']} was left after "
                f"{current['left_after']} batches and its position dropped; take the state "
                "while iterating (before leaving the loop)")
        else:
            state = current.get("state")  # not started yet (what it will restore) or left
        return {"version": STATE_VERSION, "epoch": current["epoch"], "rank": current["rank"],
                "world_size": current["world_size"], "state": state}

    def load_state_dict(self, state_dict):
        """Makes the next iter() continue where the state_dict() was taken."""
        if not isinstance(state_dict, dict) or state_dict.get("version") != STATE_VERSION:
            raise dataecho.InvalidArgumentError(
                "load_state_dict: not a dataecho.torch.PipelineDataset state (version "
                f"{STATE_VERSION})")
        self._loaded = dict(state_dict)


__all__ = ["PipelineDataset", "current_shard", "to_tensors"]
