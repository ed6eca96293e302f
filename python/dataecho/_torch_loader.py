# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""dataecho.torch.DataLoader (exported by dataecho.torch): a torch DataLoader whose
state holds every worker's position. See DataLoader's documentation.

    loader = dataecho.torch.DataLoader(dataset, batch_size=None, num_workers=2)
    saved = loader.state_dict()                   # behind the last batch taken
    again = dataecho.torch.DataLoader(dataset_again, batch_size=None, num_workers=2)
    again.load_state_dict(saved)                  # the next batch, in a new run
    other = dataecho.torch.DataLoader(dataset_again, batch_size=None, num_workers=4)
    other.load_state_dict(saved)                  # the rest of the epoch, 4 workers
"""

import os
import pickle
import random
import time

import torch
import torch.utils.data

import dataecho
from dataecho._torch_elastic import (Taken, bad_loader_state, check_loader_state,
                                     elastic_resume)
from dataecho._torch_state import LOADER_STATE_VERSION, STATE_VERSION, _job_place, _shard_of
from dataecho._torch_loss import workers_error
from dataecho._torch_stats import combine_stats
from dataecho._worker_shared import SharedEpochs


class _Tagged:
    """A batch with the position, behind it, of the worker that made it: the state
    itself (made in the main process) or a reference to the file a worker wrote it to,
    (iteration, batch number): the states stay out of the worker's result pipe, which a
    worker orphaned by a killed main process could otherwise block on at its exit.
    Also its epoch and the source indices of its examples (the records it takes)."""

    __slots__ = ("data", "worker", "ref", "state", "epoch", "records")

    def __init__(self, data, worker, ref, state, epoch, records):
        self.data, self.worker, self.ref, self.state = data, worker, ref, state
        self.epoch, self.records = epoch, records

    def __reduce__(self):
        return _Tagged, (self.data, self.worker, self.ref, self.state, self.epoch,
                         self.records)

    def pin_memory(self):  # DataLoader(pin_memory=True) pins what it holds
        from torch.utils.data._utils.pin_memory import pin_memory
        return _Tagged(pin_memory(self.data), self.worker, self.ref, self.state, self.epoch,
                       self.records)


# A batch made in the main process (num_workers=0): the dataset's position behind it
# is its state when the loop asks, not saved at every batch (a save costs about a
# step, and the loop takes each batch before the next is made).
_NOW = object()


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
        dataset = self.dataset if info is None else info.dataset
        current = dataset._current
        epoch, records = current["epoch"], dataset._drain_taken()
        if info is None:
            return _Tagged(out, None, None, _NOW, epoch, records)
        seq = current["collated"] = current.get("collated", 0) + 1
        run = current.setdefault("run", random.getrandbits(62))
        worker = current["worker"]
        with open(_position_path(dataset, worker, seq, self.ring), "wb") as f:
            pickle.dump({"run": run, "seq": seq, "state": dataset.state_dict()}, f,
                        protocol=pickle.HIGHEST_PROTOCOL)
        return _Tagged(out, worker, (run, seq), None, epoch, records)


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
    take yet are made again after a resume (with ``num_workers=0`` nothing is made
    ahead: the position is taken when state_dict() is called, or as the loop leaves
    early). A resumed loader rotates its workers'
    ids so that the first batch comes from the worker that was next. Works with
    every start method (fork, spawn, forkserver), persistent workers or not,
    ``num_workers=0`` and DataLoader batching (``batch_size`` not None) alike.

    Resumed with the same ``num_workers`` and world size, the loader gives the
    batches of the uninterrupted run. With another ``num_workers``, or on another
    number of ranks (``load_state_dict([state of rank 0, state of rank 1, ...])``:
    every rank's state), it resumes *elastically*: each batch also tells the loader
    the ``source_index`` of its examples, and the new workers read the records of
    the epoch in flight that the loop did not take, split evenly between them, so
    every record of that epoch is taken exactly once across the runs (not in the
    order of an uninterrupted run); later epochs use the new layout. This needs a
    source split by file that is given the shard itself:
    ``dataecho.from_tfrecord(pattern, shard=shard)`` (or ``from_fixed_length``);
    anything else raises InvalidArgumentError saying why.
    """

    def __init__(self, dataset, *args, **kwargs):
        # (dataecho.torch marks its PipelineDataset so: it imports this module, not
        # the other way round.)
        if not getattr(type(dataset), "_is_dataecho_pipeline_dataset", False):
            raise TypeError("dataecho.torch.DataLoader: the dataset must be a "
                            f"dataecho.torch.PipelineDataset, got {type(dataset).__name__}")
        super().__init__(dataset, *args, **kwargs)
        # A worker is at most prefetch_factor batches ahead of the loop: the ring of
        # position files holds more than that (a slot overwritten is an error, not silent).
        ring = 2 * (getattr(self, "prefetch_factor", None) or 2) + 4
        self.collate_fn = _CollateWithState(self.collate_fn, dataset, ring)
        dataset._track_taken = True  # batches carry their examples' source indices
        self._resume = None     # a loaded state, for the next iter()
        self._positions = None  # per worker: its state behind its last batch taken
        self._next_worker = 0
        self._taken = Taken()   # the records the loop took, per epoch
        self._run_epoch = None  # the epoch of this iteration's batches
        self._inherited = None  # the epoch in flight an elastic resume continues
        self._loop = self._new_loop()  # the training loop's pulls in this epoch

    @staticmethod
    def _new_loop():
        return {"pulls": 0, "step_s": 0.0, "in_next_s": 0.0, "first_s": 0.0}

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
        self._taken, self._run_epoch, self._inherited = Taken(), None, None
        rotate = 0
        if resume is None or "workers" not in resume:
            shared.set_control(SharedEpochs.TOKEN, 0)
            if resume is not None and "rest" in resume:  # elastic: the rest of an epoch
                self._inherited = dict(resume["rest"], epoch=resume["epoch"],
                                       scope=resume["scope"])
                self._taken.seed(resume["epoch"], resume["rest"]["taken"])
                self.dataset._load_rest(resume, in_workers=self.num_workers > 0)
            elif resume is not None:  # elastic, at an epoch's start
                self.dataset.set_epoch(resume["epoch"])
            positions = [self._start(w) for w in range(self._workers())]
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
        self._loop = self._new_loop()
        return self._take(super().__iter__())

    def _take(self, batches):
        try:
            yield from self._take_batches(batches)
        finally:
            # The loop left before the end (a break, an error): the dataset's iteration
            # closes with this generator, so its position is taken while it still can be.
            if self._positions is not None and self._positions[0] is _NOW:
                self._positions[0] = self.dataset.state_dict()

    def _take_batches(self, batches):
        n = self._workers()
        loop = self._loop
        batches = iter(batches)
        while True:
            t0 = time.perf_counter()
            try:
                tagged = next(batches)
            except StopIteration:
                break
            t1 = time.perf_counter()
            # The first pull (the workers starting, the pipelines filling) is a
            # start, not a step the input failed to keep up with: apart.
            loop["first_s" if loop["pulls"] == 0 else "in_next_s"] += t1 - t0
            loop["pulls"] += 1
            worker = tagged.worker or 0
            self._positions[worker] = tagged.state if tagged.ref is None else tagged.ref
            self._next_worker = (worker + 1) % n
            self._taken.add(tagged.epoch, tagged.records)
            self._run_epoch = tagged.epoch
            yield tagged.data
            loop["step_s"] += time.perf_counter() - t1  # the loop's own work on the batch
        self._positions, self._next_worker = None, 0  # the epoch ended
    def report_loss(self, batch, loss):
        """The loss of a batch this loader yielded, for the echo planner of the pipeline
        that made it: PipelineDataset.report_loss (``num_workers=0`` only; with workers
        FailedPreconditionError says why)."""
        if self.num_workers > 0:
            raise workers_error(self.num_workers)
        self.dataset.report_loss(batch, loss)

    def stats(self):
        """The stats of this epoch's pipelines, every worker's combined into one list of
        the shape of ``Pipeline.stats()`` (counts summed, times averaged over the
        workers: dataecho.torch.combine_stats), with the training loop's own pulls,
        measured here in the main process, as the top row's ``consumer_pulls``,
        ``consumer_step_s``, ``consumer_in_next_s`` (what the verdict weighs) and
        ``consumer_first_s`` (the first pull, apart).
        Workers report every 0.5 s and when their pipeline ends."""
        return combine_stats(self.dataset.stats(), dict(self._loop))

    def format_stats(self):
        """stats() as a table with the verdict: is the loader the bottleneck, does
        echo pay off (dataecho.format_stats)."""
        return dataecho.format_stats(self.stats())

    def state_dict(self):
        """Every worker's position behind the last batch the loop took, and which
        worker's batch comes next: {"version", "num_workers", "next_worker",
        "workers": [PipelineDataset.state_dict() of each worker]}, and while an epoch
        is in flight "elastic": the records the loop took of it and the layout that
        read it (what a resume on another layout needs). Picklable."""
        if self._resume is not None and "workers" in self._resume:
            return dict(self._resume)
        positions = self._positions
        if positions is None:  # before the first iter() or between epochs
            positions = [self._start(w) for w in range(self._workers())]
        positions = [self._resolve(w, p) for w, p in enumerate(positions)]
        out = {"version": LOADER_STATE_VERSION, "num_workers": self.num_workers,
               "next_worker": self._next_worker if self._positions is not None else 0,
               "workers": [dict(p) for p in positions]}
        section = self._section()
        if section is not None:
            out["elastic"] = section
        return out

    def _layout(self):
        """(shards of the job, the shards of this loader's workers)."""
        n = self._workers()
        rank, world = _job_place()
        return world * n, [rank * n + w for w in range(n)]

    def _section(self):
        """The state's "elastic" section: the epoch in flight, or None between epochs."""
        pending = self._resume  # loaded for the next iter(), elastically
        if pending is not None:
            if "rest" not in pending:  # an epoch's start
                return None
            inherited = dict(pending["rest"], epoch=pending["epoch"], scope=pending["scope"])
            return dict(inherited, exact=False)
        if self._positions is None:
            return None
        if self._inherited is not None:  # the rest of an epoch another layout began
            epoch = self._inherited["epoch"]
            return dict(self._inherited, taken=self._taken.runs(epoch), exact=False)
        if self._run_epoch is None:  # no batch taken yet: the epoch's start
            return None
        world, shards = self._layout()
        return {"epoch": self._run_epoch, "world_size": world, "shards": shards,
                "taken": self._taken.runs(self._run_epoch), "scope": "rank", "exact": True}

    def _resolve(self, worker, position):
        """A worker's state: `position` itself, the dataset's now (the main process's
        batches), or the one its (run, seq) reference names."""
        if position is _NOW:
            return self.dataset.state_dict()
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
        """Makes the next iter() continue where state_dict() was taken:

        - the same num_workers and world size: exactly there (the same batches);
        - another num_workers: elastically (see the class), from this rank's state;
        - another number of ranks: elastically, from the list of every rank's states.

        InvalidArgumentError naming what is wrong or why it cannot resume."""
        many = isinstance(state_dict, (list, tuple))
        states = [check_loader_state(s) for s in (state_dict if many else [state_dict])]
        if not states:
            raise bad_loader_state("an empty list of states")
        if not many and self._exact(states[0]):
            self._resume = states[0]
            return
        self._resume = elastic_resume(states, "job" if many else "rank", _job_place()[1])

    def _exact(self, state):
        """Whether `state` resumes exactly here: the same layout, its workers' positions
        valid for it (InvalidArgumentError for a state whose shards do not fit it)."""
        section = state.get("elastic")
        if state["num_workers"] != self.num_workers or (section and not section["exact"]):
            return False
        if state["workers"][0]["world_size"] != self._layout()[0]:
            return False
        for w, worker in enumerate(state["workers"]):
            shard = _shard_of(w if self.num_workers > 0 else None, self.num_workers)
            if (worker["rank"], worker["world_size"]) != (shard.rank, shard.world_size):
                raise dataecho.InvalidArgumentError(
                    f"DataLoader.load_state_dict: worker {w}'s state is shard "
                    f"{worker['rank']} of {worker['world_size']}, here it is shard "
                    f"{shard.rank} of {shard.world_size}: not a state of this job's layout")
        return True
