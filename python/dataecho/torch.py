# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""dataecho.torch: a dataecho pipeline as a PyTorch IterableDataset.

The dataset is made from a *build function* that receives this worker's
:class:`dataecho.Shard` and returns a pipeline; every ``iter()`` (every epoch)
builds a fresh pipeline for the worker that runs it::

    import dataecho, dataecho.torch, torch

    def build(shard):
        return (dataecho.from_tfrecord("gs://bucket/train-*", shard=shard)
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
``torch.bfloat16``, ``float16`` is ``torch.float16``), unless another element
shares the batch's buffers (batch echo's copies, a cached batch): those come as
copies of their own, so in-place ops (``x.sub_(mean)``) never change a later
copy. With ``num_workers > 0`` each
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

AUTO ECHO. ``echoed_batches(placement="auto")`` and ``"adaptive"`` run an echo
planner that measures costs and decides the placement and factor; the pipeline
of every epoch is built afresh, and its planner starts from the last epoch's
costs and decision in this worker (and from a loaded state's), echoing from its
first batch instead of measuring again with no echo. ``report_loss(batch, loss)``
gives that planner the loop's loss of a batch it yielded (a tensor on any device,
the mean or one per row), to learn what a copy is worth on the model; it works
with ``num_workers=0`` and raises FailedPreconditionError with workers, whose
pipelines run in other processes.

CHECKPOINTS. ``state_dict()`` / ``load_state_dict()`` are one process's
position (torchdata's ``StatefulDataLoader`` calls them in every worker, one
state per worker, forked or spawned). In the main process they are the main
process's own iteration (``num_workers=0``): ``state_dict()`` after a DataLoader
with workers iterated is an error, and ``load_state_dict()`` there hands the
state to the next DataLoader's workers (one worker resumes from it, more raise
the shard error). ``dataecho.torch.DataLoader`` saves and resumes a loader with
workers, also with another ``num_workers`` or number of ranks (the rest of the epoch
in flight, when build() gives its source the shard: ``from_tfrecord(..., shard=shard)``).
A training loop without workers saves the dataset with its model and
resumes at the exact next batch::

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

import numpy as np
import torch
import torch.utils.data
from torch.utils.dlpack import from_dlpack

import dataecho
from dataecho import _dataecho
from dataecho._torch_elastic import _ResumeShard, element_records
from dataecho._torch_loss import RecentBatches, loss_values, workers_error
from dataecho._torch_positions import _Positions
from dataecho._torch_state import (  # noqa: F401 (MAX_EPOCH, STATE_VERSION: documented)
    MAX_EPOCH, STATE_VERSION, _epoch_arg, _shard_of)
from dataecho._worker_shared import (MAX_WORKERS, STATS_INTERVAL, SharedEpochs, WorkerReports,
                                     exit_with_parent)


def current_shard():
    """This process's and DataLoader worker's share of the data, a dataecho.Shard."""
    info = torch.utils.data.get_worker_info()
    if info is None:
        return _shard_of(None, 0)
    return _shard_of(info.id, info.num_workers)


def to_tensors(element, with_indices=False):
    """A dataecho.Batch (or Example) as torch tensors.

    Returns ``(inputs, labels)``: ``inputs`` is the component tensor, or a tuple
    of them if there are several. A Batch's labels are an int64 tensor, an
    Example's an int. With ``with_indices=True`` a Batch also gives its
    ``source_indices`` (int64) and ``repeat_indices`` (int32) tensors, an
    Example its source_index and repeat_index.

    A tensor views the element's buffer without a copy when no other element
    shares that buffer; one shared (the copies of batch echo, a cached element)
    is copied (``to_dlpack``), so writing into a tensor in place never changes
    another element.
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


def _build_takes_epoch(build):
    """How build takes the epoch: "keyword" (a parameter named epoch that may be
    passed by keyword), "positional" (build(shard, epoch), build(shard, epoch, /))
    or False (build(shard))."""
    try:
        params = list(inspect.signature(build).parameters.values())
    except (TypeError, ValueError):  # a builtin or an odd callable: build(shard)
        return False
    if any(p.name == "epoch" and p.kind != p.POSITIONAL_ONLY for p in params):
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


class PipelineDataset(_Positions, torch.utils.data.IterableDataset):
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

    # What dataecho.torch.DataLoader checks its dataset by.
    _is_dataecho_pipeline_dataset = True

    def __init__(self, build, with_indices=False, with_epoch=False):
        super().__init__()
        self._build = build
        self._takes_epoch = _build_takes_epoch(build)
        self._with_indices = with_indices
        self._with_epoch = with_epoch
        self._epochs = SharedEpochs()
        self._reports = WorkerReports()
        self._length = None  # len(), once computed
        self._track_taken = False  # dataecho.torch.DataLoader's: record source indices
        self._init_local()

    def _init_local(self):
        # This process's iteration (never shared with other processes).
        self._pipeline = None    # the running pipeline of the current iter()
        self._current = None     # {"epoch", "rank", "world_size", "batches"} of it
        self._loaded = None      # a state load_state_dict() gave, for the next iter()
        self._loaded_token = 0   # the handoff that carries it to workers (main process)
        self._last_stats = None  # the stats of the last pipeline, after it closed
        self._warned = False
        self._recent = RecentBatches()  # what report_loss() can name
        self._pid = os.getpid()

    def _own_process(self):
        # A forked DataLoader worker inherits the parent's iteration, which is not
        # its own: it starts afresh, once, before anything else touches it (a state
        # load_state_dict() then gives it in the worker is kept).
        if self._pid != os.getpid():
            self._init_local()

    def __getstate__(self):
        state = self.__dict__.copy()
        for key in ("_pipeline", "_current", "_loaded", "_loaded_token", "_last_stats",
                    "_warned", "_recent", "_pid"):
            state.pop(key, None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._init_local()

    def _place(self):
        """(worker, num_workers) of this process: (None, 0) in the main process. The
        worker is the DataLoader's worker id, rotated as a resumed
        dataecho.torch.DataLoader asks (so its first batch comes from the worker
        that was next when the state was saved)."""
        info = torch.utils.data.get_worker_info()
        if info is None:
            return None, 0
        n = info.num_workers
        if n > MAX_WORKERS:
            raise ValueError(f"dataecho.torch.PipelineDataset serves at most {MAX_WORKERS} "
                             f"DataLoader workers, got {n}")
        rotate = 0
        if self._epochs.control(SharedEpochs.ROTATE_WORKERS) == n:
            rotate = self._epochs.control(SharedEpochs.ROTATE_BY)
        return (info.id + rotate) % n, n

    def _worker(self):
        return self._place()[0]

    def __len__(self):
        """Batches (or examples) per epoch of this process's share, where the pipeline
        knows it (Pipeline.__len__: a sized source, no filter); TypeError otherwise.

        Built once for this process's shard (and cached). With DataLoader workers each
        worker takes a part of that share, and its last batch may be partial: the
        epoch can then hold up to one more batch per worker than len() says.
        """
        if self._length is None:
            worker, n = self._place()
            pipeline = self._make(_shard_of(worker, n), self._epochs.peek(worker or 0), None)
            try:
                self._length = len(pipeline)
            finally:
                pipeline.close()
        return self._length

    def set_epoch(self, epoch):
        """Makes the next iter() epoch ``epoch`` (in every worker, persistent or not);
        later ones count on from it. ``epoch``: an int in [0, 2**32 - 1]."""
        self._epochs.set_all(_epoch_arg(epoch, "set_epoch"))

    def __iter__(self):
        self._own_process()
        worker, num_workers = self._place()
        slot = worker or 0
        shard = _shard_of(worker, num_workers)
        loaded, self._loaded = self._loaded, None
        token, self._loaded_token = self._loaded_token, 0
        if worker is None:
            self._epochs.set_control(SharedEpochs.LAST_WORKERS, 0)
            if loaded is not None and token:
                if self._epochs.applied_anywhere(token):
                    loaded = None  # a DataLoader's workers resumed from it
                elif self._epochs.control(SharedEpochs.TOKEN) == token:
                    self._epochs.set_control(SharedEpochs.TOKEN, 0)  # this process does
        else:
            exit_with_parent()
            self._epochs.set_control(SharedEpochs.LAST_WORKERS, num_workers)
            if loaded is None:
                loaded = self._handed_over(slot, num_workers)
        if loaded is not None and "rest" in loaded:  # the rest of an epoch, elastically
            epoch, scope = loaded["epoch"], loaded["scope"]
            part, parts = ((shard.rank, shard.world_size) if scope == "job"
                           else (slot, max(num_workers, 1)))
            shard = _ResumeShard(shard.rank, shard.world_size,
                                 dict(loaded["rest"], part=part, parts=parts))
            self._epochs.set(slot, epoch + 1)
            loaded = None
        elif loaded is not None:
            epoch = loaded["epoch"]
            if (loaded["rank"], loaded["world_size"]) != (shard.rank, shard.world_size):
                raise dataecho.InvalidArgumentError(
                    f"load_state_dict: the state is shard {loaded['rank']} of "
                    f"{loaded['world_size']}, this "
                    f"{'process' if worker is None else 'worker'} is shard {shard.rank} of "
                    f"{shard.world_size}: resume with the same world size and num_workers")
            self._epochs.set(slot, epoch + 1)
        else:
            epoch = self._epochs.take(slot)
        self._close_current()
        self._current = {"epoch": epoch, "rank": shard.rank, "world_size": shard.world_size,
                         "worker": worker, "batches": 0,
                         "state": loaded["state"] if loaded else None,
                         "planner": self._planner_start(worker, loaded)}
        collates = _fetcher_collates(self)
        return self._run(shard, epoch, loaded, worker, collates)

    def _make(self, shard, epoch, planner):
        # With several workers in the job, the seeds build() gives shuffle and echo are mixed
        # with the worker's place in it, so workers draw differently (see SEEDS above); an
        # auto echo planner starts from the last epoch's (AUTO ECHO above).
        _dataecho._seed_stream(shard.rank if shard.world_size > 1 else None)
        _dataecho._planner_memory(planner)
        try:
            if self._takes_epoch == "keyword":
                pipeline = self._build(shard, epoch=epoch)
            elif self._takes_epoch:
                pipeline = self._build(shard, epoch)
            else:
                pipeline = self._build(shard)
        finally:
            _dataecho._seed_stream(None)
            _dataecho._planner_memory(None)
        if not isinstance(pipeline, dataecho.Pipeline):
            raise TypeError(f"build() returned {type(pipeline).__name__}, not a dataecho.Pipeline")
        if isinstance(shard, _ResumeShard) and not shard.rest_taken:
            pipeline.close()
            raise dataecho.InvalidArgumentError(
                "dataecho.torch.DataLoader resumes the epoch in flight on another layout of "
                "workers or ranks, and build() did not give its source the shard itself: "
                "pass it, dataecho.from_tfrecord(pattern, shard=shard) (or from_fixed_length), "
                "so that the source reads the records the loop did not take (rank= and "
                "world_size= integers cannot carry them). A source split by element "
                "(Pipeline.shard(), from_idx, from_arrays) cannot resume on another layout: "
                "resume with the same num_workers and world size")
        if pipeline.element_type == "Record":
            raise TypeError("build() returned a pipeline of Records: decode them, e.g. "
                            ".map(dataecho.decode_image_record)")
        return pipeline

    def _run(self, shard, epoch, loaded, worker, collates):
        pipeline = self._make(shard, epoch, self._current["planner"])
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
                if self._track_taken:
                    current.setdefault("taken", []).append(element_records(element))
                out = to_tensors(element, self._with_indices)
                self._recent.add(element, out)
                if worker is not None and time.monotonic() >= next_report:
                    self._reports.write(worker, self._entry(pipeline, current))
                    next_report = time.monotonic() + STATS_INTERVAL
                yield (*out, epoch) if self._with_epoch else out
            current["done"] = True  # the epoch ended: a state now is the next epoch's start
        finally:
            self._close_current()

    def _drain_taken(self):
        """The source indices of the elements yielded since the last call (None if not
        tracked): what the batch being collated holds."""
        taken = self._current.pop("taken", None) if self._current is not None else None
        if not taken:
            return None
        return taken[0] if len(taken) == 1 else np.concatenate(taken)

    def _close_current(self):
        pipeline, self._pipeline = self._pipeline, None
        self._recent.clear()
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

    def report_loss(self, batch, loss):
        """Tells the echo planner of the pipeline that made ``batch`` its loss
        (``Pipeline.report_loss``; docs/echoing.md, "Learning from the loss")::

            for x, y in loader:
                losses = loss_fn(model(x.cuda()), y.cuda(), reduction="none")
                losses.mean().backward(); opt.step(); opt.zero_grad()
                dataset.report_loss((x, y), losses)

        Args:
            batch: what this dataset yielded (the tuple, or any tensor of it, as
                yielded: not a copy such as ``x.cuda()``), one of the last 8; or None
                for the last one.
            loss: a tensor on any device, detached here (the graph is not kept): a
                scalar (the batch's mean) or 1-D, one loss per row (best: copies and
                fresh rows are told apart); or a number, list or NumPy array.

        Works where the pipeline runs: in the process iterating the dataset
        (``num_workers=0``). With DataLoader workers each batch is made by a worker's
        pipeline in another process, and the loss has no way back to it:
        FailedPreconditionError says so (nothing is dropped silently). Also
        FailedPreconditionError if the pipeline has no planner (a fixed placement),
        ValueError if ``batch`` is none of the last ones or the loss has 2 or more
        dimensions, InvalidArgumentError if the row losses do not fit the batch.
        """
        self._own_process()
        pipeline = self._pipeline
        if pipeline is None:
            if (torch.utils.data.get_worker_info() is None
                    and self._epochs.control(SharedEpochs.LAST_WORKERS) > 0):
                raise workers_error()
            raise dataecho.FailedPreconditionError(
                "report_loss: no pipeline of this dataset is running in this process: report "
                "the loss of a batch while iterating the dataset, before the epoch ends")
        element = self._recent.find(batch)
        if element is None:
            raise ValueError(
                "report_loss: `batch` is none of the last batches this dataset yielded: pass "
                "what it yielded (the tuple, or one of its tensors as yielded, not a copy such "
                "as x.cuda() or a pinned one), or batch=None for the last one")
        pipeline.report_loss(element, loss_values(loss))

    def stats(self):
        """The stats of every pipeline this dataset runs, one dict per process: worker
        (None: this process), rank, world_size, epoch and stages (Pipeline.stats()).
        Workers report every 0.5 s and when their pipeline ends."""
        self._own_process()
        out = []
        if self._pipeline is not None and self._current is not None:
            out.append(self._entry(self._pipeline, self._current))
        elif self._last_stats is not None:
            out.append(self._last_stats)
        out += self._reports.read_all()
        return sorted(out, key=lambda e: -1 if e["worker"] is None else e["worker"])

from dataecho._torch_loader import DataLoader  # noqa: E402 (it needs PipelineDataset above)
from dataecho._torch_stats import combine_stats  # noqa: E402

__all__ = ["DataLoader", "PipelineDataset", "combine_stats", "current_shard", "to_tensors"]
