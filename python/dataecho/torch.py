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
first batch instead of measuring again with no echo.

CHECKPOINTS. ``state_dict()`` / ``load_state_dict()`` are one process's
position (torchdata's ``StatefulDataLoader`` calls them in every worker, one
state per worker, forked or spawned). In the main process they are the main
process's own iteration (``num_workers=0``): ``state_dict()`` after a DataLoader
with workers iterated is an error, and ``load_state_dict()`` there hands the
state to the next DataLoader's workers (one worker resumes from it, more raise
the shard error). ``DataLoader`` (below) saves and resumes a loader with
workers. A training loop without workers saves the dataset with its model and
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
import operator
import os
import pickle
import random
import sys
import time
import warnings
from collections.abc import Mapping

import torch
import torch.utils.data
from torch.utils.dlpack import from_dlpack

import dataecho
from dataecho import _dataecho
from dataecho._worker_shared import MAX_WORKERS, STATS_INTERVAL, SharedEpochs, WorkerReports

# The largest epoch a pipeline starts at (Pipeline.set_epoch: [0, 2**32)).
MAX_EPOCH = 2**32 - 1


def _job_place():
    """(rank, world_size) of this process in the job."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    env = dataecho.resolve_shard()
    return env.rank, env.world_size


def _shard_of(worker, num_workers):
    """The shard of DataLoader worker `worker` of `num_workers` (None: the main process)."""
    rank, world = _job_place()
    if worker is None:
        return dataecho.Shard(rank, world)
    return dataecho.Shard(rank * num_workers + worker, world * num_workers)


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


# The state_dict() format (load_state_dict() checks it).
STATE_VERSION = 1
# dataecho.torch.DataLoader's state_dict() format.
LOADER_STATE_VERSION = 1


def _epoch_arg(epoch, what):
    """`epoch` as an int in [0, MAX_EPOCH]: TypeError for a non-integer (a float, a
    bool), ValueError (InvalidArgumentError) out of range."""
    if isinstance(epoch, bool) or not hasattr(type(epoch), "__index__"):
        raise TypeError(f"{what}: epoch must be an int, got {type(epoch).__name__}")
    epoch = operator.index(epoch)
    if not 0 <= epoch <= MAX_EPOCH:
        raise dataecho.InvalidArgumentError(
            f"{what}: epoch must be in [0, 2**32 - 1], got {epoch}")
    return epoch


def _bad_state(what, why):
    return dataecho.InvalidArgumentError(
        f"{what}: not a dataecho.torch.PipelineDataset state (version {STATE_VERSION}): {why}")


def _check_state(state_dict, what="load_state_dict"):
    """A PipelineDataset state_dict() checked field by field, as a new dict (its
    "state" as bytes); InvalidArgumentError naming the first field that is wrong."""
    if not isinstance(state_dict, Mapping):
        raise _bad_state(what, f"a {type(state_dict).__name__}, not a dict")
    if state_dict.get("version") != STATE_VERSION:
        raise _bad_state(what, f"version {state_dict.get('version')!r}")
    out = {"version": STATE_VERSION}
    # epoch may be 2**32: the start of the epoch after the last (its iter() then fails).
    for key, low, high in (("epoch", 0, MAX_EPOCH + 1), ("world_size", 1, 2**31),
                           ("rank", 0, 2**31)):
        if key not in state_dict:
            raise _bad_state(what, f"no '{key}'")
        v = state_dict[key]
        if isinstance(v, bool) or not isinstance(v, int):
            raise _bad_state(what, f"'{key}' is a {type(v).__name__}, not an int")
        if not low <= v <= high:
            raise _bad_state(what, f"'{key}' {v} is not in [{low}, {high}]")
        out[key] = v
    if out["rank"] >= out["world_size"]:
        raise _bad_state(what, f"rank {out['rank']} of world_size {out['world_size']}")
    state = state_dict.get("state")
    if state is not None:
        if not isinstance(state, (bytes, bytearray, memoryview)):
            raise _bad_state(what, f"'state' is a {type(state).__name__}, not bytes or None")
        state = bytes(state)
    out["state"] = state
    out["planner"] = _check_planner(state_dict.get("planner"), what)
    return out


# The values of an "echo_planner" stats row that start the next epoch's planner
# (AutoPlacementOptions::start_from; _dataecho._planner_memory).
_PLANNER_KEYS = ("placement", "factor", "cost_upstream_cpu_ms", "cost_augment_cpu_ms",
                 "cost_row_cpu_ms", "upstream_ms_per_item", "step_ms")


def _planner_memory(entry):
    """The echo planner's costs and decision in a stats entry (the last planner row
    that decided at least once), or None."""
    memory = None
    for row in (entry or {}).get("stages", ()):
        if all(k in row for k in _PLANNER_KEYS) and row.get("decisions"):
            memory = {k: float(row[k]) for k in _PLANNER_KEYS}
    return memory


def _check_planner(memory, what):
    if memory is None:
        return None
    if not isinstance(memory, Mapping) or not all(
            isinstance(memory.get(k), (int, float)) and not isinstance(memory.get(k), bool)
            for k in _PLANNER_KEYS):
        raise _bad_state(what, f"'planner' is not a dict of {', '.join(_PLANNER_KEYS)}")
    return {k: float(memory[k]) for k in _PLANNER_KEYS}


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
        self._loaded_token = 0   # the handoff that carries it to workers (main process)
        self._last_stats = None  # the stats of the last pipeline, after it closed
        self._warned = False
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
                    "_warned", "_pid"):
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

    def _handed_over(self, slot, num_workers):
        """The state the main process handed to the workers (load_state_dict() there,
        or dataecho.torch.DataLoader's) that this worker has not applied yet."""
        token = self._epochs.control(SharedEpochs.TOKEN)
        if token == 0 or self._epochs.applied(slot) == token:
            return None
        payload = self._reports.read_handoff(token)
        self._epochs.mark_applied(slot, token)
        if payload is None:
            return None
        states = payload.get("workers")
        if states is None:
            return payload["state"]
        if len(states) != num_workers:
            raise dataecho.InvalidArgumentError(
                f"load_state_dict: the state holds {len(states)} workers' positions, this "
                f"DataLoader runs {num_workers} workers: resume with the same num_workers")
        return states[slot]

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
            self._epochs.set_control(SharedEpochs.LAST_WORKERS, num_workers)
            if loaded is None:
                loaded = self._handed_over(slot, num_workers)
        if loaded is not None:
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

    def _planner_start(self, worker, loaded):
        """What the echo planner of this iter()'s pipeline starts from (AUTO ECHO above):
        the last pipeline's planner in this process, else this worker's last report
        (a worker process started anew), else the loaded state's."""
        last = self._last_stats
        if last is None or last.get("worker") != worker:
            last = self._reports.read(worker) if worker is not None else None
        memory = _planner_memory(last)
        if memory is None and loaded is not None:
            memory = loaded.get("planner")
        return memory

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
        self._own_process()
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
        batch yielded.

        In the main process of a DataLoader with workers it is an error
        (FailedPreconditionError): each worker runs its own pipeline at its own
        position, which the main process does not see. Save
        ``dataecho.torch.DataLoader.state_dict()`` there instead."""
        self._own_process()
        worker = self._worker()
        if self._loaded_token and self._epochs.applied_anywhere(self._loaded_token):
            self._loaded, self._loaded_token = None, 0  # a DataLoader's workers took it
        if self._loaded is not None:  # not started yet: what the next iter() resumes
            return dict(self._loaded)
        if worker is None and self._epochs.control(SharedEpochs.LAST_WORKERS) > 0:
            n = self._epochs.control(SharedEpochs.LAST_WORKERS)
            raise dataecho.FailedPreconditionError(
                f"state_dict() in the main process of a DataLoader with {n} worker "
                f"process{'es' if n > 1 else ''}: each runs its own pipeline at its own "
                "position, which this process does not see. Save "
                "dataecho.torch.DataLoader's state_dict() (every worker's position), or "
                "use torchdata's StatefulDataLoader (it calls state_dict() in each worker)")
        current = self._current
        if current is None or current.get("done"):  # the start of the next epoch
            shard = _shard_of(worker, self._place()[1])
            current = {"epoch": self._epochs.peek(worker or 0), "rank": shard.rank,
                       "world_size": shard.world_size, "state": None,
                       "planner": self._planner_start(worker, None)}
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
                "world_size": current["world_size"], "state": state,
                "planner": current.get("planner")}

    def load_state_dict(self, state_dict):
        """Makes the next iter() continue where the state_dict() was taken.

        InvalidArgumentError naming the field if ``state_dict`` is not such a state.
        In a DataLoader worker (torchdata's StatefulDataLoader) it is that worker's
        state. In the main process it is this process's next iter(), or, if a
        DataLoader with workers iterates first, handed to its workers: one worker
        resumes from it, several raise the shard error (each needs its own state:
        see ``dataecho.torch.DataLoader``)."""
        checked = _check_state(state_dict)
        self._own_process()
        self._loaded = checked
        if self._worker() is None:
            self._loaded_token = self._hand_over({"state": checked})

    def _hand_over(self, payload):
        """Leaves `payload` for the DataLoader workers that iterate next (a file beside
        the stats reports, named by a token in shared memory); returns the token."""
        token = random.getrandbits(62) + 1
        self._reports.write_handoff(token, payload)
        self._epochs.set_control(SharedEpochs.TOKEN, token)
        return token

    def _current_worker(self):
        return None if self._current is None else self._current["worker"]


class _Tagged:
    """A batch with the position, behind it, of the worker that made it: the state
    itself (made in the main process) or a reference to the file a worker wrote it to,
    (iteration, batch number): the states stay out of the worker's result pipe, which a
    worker orphaned by a killed main process could otherwise block on at its exit."""

    __slots__ = ("data", "worker", "ref", "state")

    def __init__(self, data, worker, ref, state):
        self.data, self.worker, self.ref, self.state = data, worker, ref, state

    def __reduce__(self):
        return _Tagged, (self.data, self.worker, self.ref, self.state)

    def pin_memory(self):  # DataLoader(pin_memory=True) pins what it holds
        from torch.utils.data._utils.pin_memory import pin_memory
        return _Tagged(pin_memory(self.data), self.worker, self.ref, self.state)


def _position_path(dataset, worker, seq, ring):
    return os.path.join(dataset._reports.dir, f"position-{worker}-{seq % ring}.pickle")


class _CollateWithState:
    """The DataLoader's collate_fn, then the position of the dataset behind the batch
    (it runs in the process that made the batch, right after taking its elements). A
    worker writes it to a ring of `ring` files of its own, which its batches name."""

    def __init__(self, collate_fn, dataset, ring):
        self.collate_fn, self.dataset, self.ring = collate_fn, dataset, ring

    def __getstate__(self):  # a worker uses its own copy (get_worker_info().dataset)
        return {"collate_fn": self.collate_fn, "dataset": None, "ring": self.ring}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __call__(self, data):
        out = self.collate_fn(data)
        info = torch.utils.data.get_worker_info()
        if info is None:
            return _Tagged(out, None, None, self.dataset.state_dict())
        dataset = info.dataset
        current = dataset._current
        seq = current["collated"] = current.get("collated", 0) + 1
        run = current.setdefault("run", random.getrandbits(62))
        worker = current["worker"]
        with open(_position_path(dataset, worker, seq, self.ring), "wb") as f:
            pickle.dump({"run": run, "seq": seq, "state": dataset.state_dict()}, f,
                        protocol=pickle.HIGHEST_PROTOCOL)
        return _Tagged(out, worker, (run, seq), None)


def _bad_loader_state(why):
    return dataecho.InvalidArgumentError(
        f"DataLoader.load_state_dict: not a dataecho.torch.DataLoader state (version "
        f"{LOADER_STATE_VERSION}): {why}")


class DataLoader(torch.utils.data.DataLoader):
    """A torch.utils.data.DataLoader (same arguments) over a PipelineDataset whose
    ``state_dict()`` / ``load_state_dict()`` hold every worker's position::

        loader = dataecho.torch.DataLoader(dataecho.torch.PipelineDataset(build),
                                           batch_size=None, num_workers=2)
        for step, (x, y) in enumerate(loader):
            ...
            if step % 1000 == 0:
                torch.save({"model": model.state_dict(),
                            "loader": loader.state_dict()}, "ckpt.pt")
        # after a crash: a new loader, the same arguments
        loader.load_state_dict(torch.load("ckpt.pt")["loader"])
        for x, y in loader: ...   # the batch after the last one the loop took

    Every batch carries the position of the worker that made it, behind it (its
    PipelineDataset.state_dict(), taken in the worker right after the batch's
    elements and written to a small ring of files in the dataset's temporary
    directory, which the batch names): the loader keeps the last one per worker
    and which worker's batch comes next, so the batches the DataLoader fetched ahead but the loop did not
    take yet are made again after a resume. A resumed loader rotates its workers'
    ids so that the first batch comes from the worker that was next. Works with
    every start method (fork, spawn, forkserver), persistent workers or not,
    ``num_workers=0`` and DataLoader batching (``batch_size`` not None) alike.
    Resume with the same ``num_workers`` and world size (InvalidArgumentError
    otherwise).
    """

    def __init__(self, dataset, *args, **kwargs):
        if not isinstance(dataset, PipelineDataset):
            raise TypeError("dataecho.torch.DataLoader: the dataset must be a "
                            f"dataecho.torch.PipelineDataset, got {type(dataset).__name__}")
        super().__init__(dataset, *args, **kwargs)
        # A worker is at most prefetch_factor batches ahead of the loop: the ring of
        # position files holds more than that (a slot overwritten is an error, not silent).
        ring = 2 * (getattr(self, "prefetch_factor", None) or 2) + 4
        self.collate_fn = _CollateWithState(self.collate_fn, dataset, ring)
        self._resume = None     # a loaded state, for the next iter()
        self._positions = None  # per worker: its state behind its last batch taken
        self._next_worker = 0

    def _workers(self):
        return max(self.num_workers, 1)

    def _start(self, worker):
        """Worker `worker`'s state at the start of its next epoch."""
        n = self.num_workers
        shard = _shard_of(worker if n > 0 else None, n)
        return {"version": STATE_VERSION, "epoch": self.dataset._epochs.peek(worker),
                "rank": shard.rank, "world_size": shard.world_size, "state": None}

    def __iter__(self):
        shared = self.dataset._epochs
        resume, self._resume = self._resume, None
        if resume is None:
            shared.set_control(SharedEpochs.TOKEN, 0)
            positions = [self._start(w) for w in range(self._workers())]
            rotate = 0
        else:
            positions = list(resume["workers"])
            rotate = resume["next_worker"]
            if self.num_workers == 0:
                self.dataset.load_state_dict(positions[0])
            else:
                self.dataset._hand_over({"workers": positions})
        shared.set_control(SharedEpochs.ROTATE_BY, rotate)
        shared.set_control(SharedEpochs.ROTATE_WORKERS, self.num_workers)
        self._positions, self._next_worker = positions, rotate
        return self._take(super().__iter__())

    def _take(self, batches):
        n = self._workers()
        for tagged in batches:
            worker = tagged.worker or 0
            self._positions[worker] = tagged.state if tagged.ref is None else tagged.ref
            self._next_worker = (worker + 1) % n
            yield tagged.data
        self._positions, self._next_worker = None, 0  # the epoch ended

    def state_dict(self):
        """Every worker's position behind the last batch the loop took, and which
        worker's batch comes next: {"version", "num_workers", "next_worker",
        "workers": [PipelineDataset.state_dict() of each worker]} (picklable)."""
        if self._resume is not None:
            return dict(self._resume)
        positions = self._positions
        if positions is None:  # before the first iter() or between epochs
            positions = [self._start(w) for w in range(self._workers())]
        positions = [self._resolve(w, p) for w, p in enumerate(positions)]
        return {"version": LOADER_STATE_VERSION, "num_workers": self.num_workers,
                "next_worker": self._next_worker if self._positions is not None else 0,
                "workers": [dict(p) for p in positions]}

    def _resolve(self, worker, position):
        """A worker's state: `position` itself, or the one its (run, seq) reference names."""
        if not isinstance(position, tuple):
            return position
        run, seq = position
        path = _position_path(self.dataset, worker, seq, self.collate_fn.ring)
        try:
            with open(path, "rb") as f:
                saved = pickle.load(f)
        except (OSError, EOFError, pickle.UnpicklingError) as e:
            raise dataecho.DataLossError(
                f"DataLoader.state_dict: worker {worker}'s position behind its batch {seq} "
                f"cannot be read from {path}: {e}") from e
        if (saved.get("run"), saved.get("seq")) != (run, seq):
            raise dataecho.InternalError(
                f"DataLoader.state_dict: worker {worker}'s position behind its batch {seq} "
                f"was overwritten in {path} (the worker ran more than "
                f"{self.collate_fn.ring} batches ahead)")
        return saved["state"]

    def load_state_dict(self, state_dict):
        """Makes the next iter() continue where state_dict() was taken (the same
        num_workers and world size); InvalidArgumentError naming what is wrong."""
        if not isinstance(state_dict, Mapping):
            raise _bad_loader_state(f"a {type(state_dict).__name__}, not a dict")
        if state_dict.get("version") != LOADER_STATE_VERSION:
            raise _bad_loader_state(f"version {state_dict.get('version')!r}")
        n = state_dict.get("num_workers")
        if isinstance(n, bool) or not isinstance(n, int):
            raise _bad_loader_state(f"'num_workers' is {n!r}")
        if n != self.num_workers:
            raise dataecho.InvalidArgumentError(
                f"DataLoader.load_state_dict: the state is of a DataLoader with {n} workers, "
                f"this one has {self.num_workers}: resume with the same num_workers")
        workers = state_dict.get("workers")
        if not isinstance(workers, (list, tuple)) or len(workers) != self._workers():
            raise _bad_loader_state(f"'workers' is not a list of {self._workers()} states")
        nxt = state_dict.get("next_worker")
        if isinstance(nxt, bool) or not isinstance(nxt, int) or not 0 <= nxt < self._workers():
            raise _bad_loader_state(f"'next_worker' is {nxt!r}")
        checked = [_check_state(w, "DataLoader.load_state_dict") for w in workers]
        for w, state in enumerate(checked):
            shard = _shard_of(w if self.num_workers > 0 else None, self.num_workers)
            if (state["rank"], state["world_size"]) != (shard.rank, shard.world_size):
                raise dataecho.InvalidArgumentError(
                    f"DataLoader.load_state_dict: worker {w}'s state is shard "
                    f"{state['rank']} of {state['world_size']}, here it is shard "
                    f"{shard.rank} of {shard.world_size}: resume with the same world size")
        self._resume = {"version": LOADER_STATE_VERSION, "num_workers": n,
                        "next_worker": nxt, "workers": checked}


__all__ = ["DataLoader", "PipelineDataset", "current_shard", "to_tensors"]
