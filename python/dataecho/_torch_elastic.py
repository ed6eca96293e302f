# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""dataecho.torch.DataLoader's elastic resume: the records the training loop took
in the epoch in flight, and the rest of that epoch handed to a loader with another
number of workers or ranks.

A file source split by file (worker k of W reads files k, k + W, ...) trains its
records shuffled, so what the loop took is no prefix of anything. The loader
records the ``source_index`` of every example it hands the loop (the workers send
them with each batch). Its state then says, for the epoch in flight: the layout
that read the epoch's start (``world_size`` shards; the ``shards`` whose files are
in play), the records taken (sorted runs of source indices) and whether the
workers' own positions can resume it exactly (the same layout: ``exact``). A
loader resumed under another layout hands each new worker a ``_ResumeShard``
whose ``rest`` the source (``from_tfrecord(..., shard=shard)``) reads: its share
of the records of the files in play that the loop did not take.

    taken = Taken()
    taken.add(epoch, records)                    # each batch the loop takes
    state = check_loader_state(loaded)           # a DataLoader.state_dict(), checked
    resume = elastic_resume(states, "rank", world_size)  # the rest, for the next iter()
"""

from collections.abc import Mapping

import numpy as np

import dataecho
from dataecho._torch_state import LOADER_STATE_VERSION, _check_state


def runs_of(ids):
    """Sorted unique uint64 source indices as bytes of little-endian [begin, end) pairs,
    a run never crossing a file (the record index is the low 40 bits)."""
    ids = np.unique(np.asarray(ids, dtype=np.uint64))
    if ids.size == 0:
        return b""
    breaks = np.flatnonzero((np.diff(ids) != 1) | (np.diff(ids >> np.uint64(40)) != 0)) + 1
    begins = ids[np.r_[0, breaks]]
    ends = ids[np.r_[breaks - 1, ids.size - 1]] + np.uint64(1)
    return np.stack([begins, ends], axis=1).astype("<u8").tobytes()


def ids_of(runs):
    """The source indices the bytes of runs_of() hold."""
    pairs = np.frombuffer(runs, dtype="<u8").reshape(-1, 2).astype(np.uint64)
    lengths = (pairs[:, 1] - pairs[:, 0]).astype(np.int64)
    if lengths.sum() == 0:
        return np.zeros(0, np.uint64)
    starts = np.cumsum(lengths) - lengths  # where each run begins in the output
    return (np.repeat(pairs[:, 0], lengths)
            + (np.arange(lengths.sum()) - np.repeat(starts, lengths)).astype(np.uint64))


class Taken:
    """The source indices the training loop took, per epoch (main process)."""

    def __init__(self):
        self._epochs = {}  # epoch -> list of uint64 arrays

    def seed(self, epoch, runs):
        self._epochs[epoch] = [ids_of(runs)]

    def add(self, epoch, records):
        if records is not None:
            self._epochs.setdefault(epoch, []).append(records)

    def runs(self, epoch):
        arrays = self._epochs.get(epoch)
        if not arrays:
            return b""
        merged = runs_of(np.concatenate(arrays))
        self._epochs[epoch] = [ids_of(merged)]  # compact, so the list never grows long
        return merged

    def keep_only(self, epoch):
        self._epochs = {e: a for e, a in self._epochs.items() if e == epoch}


def element_records(element):
    """The source indices of an element the dataset yields (a Batch's rows or an
    Example's one), as uint64."""
    if isinstance(element, dataecho.Batch):
        from torch.utils.dlpack import from_dlpack
        return from_dlpack(element.to_dlpack("source_indices")).numpy().astype(np.uint64)
    return np.array([element.source_index], dtype=np.uint64)


class _ResumeShard(dataecho.Shard):
    """A worker's dataecho.Shard in the epoch a loader resumed under another layout:
    ``rest`` is its share of the records not taken (the source reads it when given the
    shard itself, ``shard=shard``, and sets ``rest_taken``)."""

    def __init__(self, rank, world_size, rest):
        super().__init__(rank, world_size)
        self.rest = rest
        self.rest_taken = False


def bad_loader_state(why):
    return dataecho.InvalidArgumentError(
        f"DataLoader.load_state_dict: not a dataecho.torch.DataLoader state (version "
        f"{LOADER_STATE_VERSION}): {why}")


def _bad(why):
    return dataecho.InvalidArgumentError(f"DataLoader.load_state_dict: {why}")


def check_loader_state(state):
    """A DataLoader.state_dict(), checked field by field (InvalidArgumentError naming
    the first one wrong), as a new dict."""
    if not isinstance(state, Mapping):
        raise bad_loader_state(f"a {type(state).__name__}, not a dict")
    if state.get("version") != LOADER_STATE_VERSION:
        raise bad_loader_state(f"version {state.get('version')!r}")
    n = state.get("num_workers")
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise bad_loader_state(f"'num_workers' is {n!r}")
    workers = state.get("workers")
    if not isinstance(workers, (list, tuple)) or len(workers) != max(n, 1):
        raise bad_loader_state(f"'workers' is not a list of {max(n, 1)} states")
    nxt = state.get("next_worker")
    if isinstance(nxt, bool) or not isinstance(nxt, int) or not 0 <= nxt < max(n, 1):
        raise bad_loader_state(f"'next_worker' is {nxt!r}")
    out = {"version": LOADER_STATE_VERSION, "num_workers": n, "next_worker": nxt,
           "workers": [_check_state(w, "DataLoader.load_state_dict") for w in workers]}
    if state.get("elastic") is not None:
        out["elastic"] = check_section(state["elastic"], "the state")
    return out


def elastic_resume(states, scope, world_size):
    """What the next iter() of a loader on another layout resumes from the checked
    loader `states` (scope "rank": this rank's state, the job keeps its ranks;
    "job": every rank's, the job's `world_size` may differ): {"epoch"} (an epoch's
    start) or {"epoch", "scope", "rest": plan_rest()}."""
    old = [s["workers"][0]["world_size"] // max(s["num_workers"], 1) for s in states]
    if scope == "rank":
        section = states[0].get("elastic")
        if old[0] != world_size:
            raise _bad(f"the state is of a job of {old[0]} ranks, this one has {world_size}: "
                       "resuming on another number of ranks needs every rank's state, "
                       "load_state_dict([state of rank 0, state of rank 1, ...])")
        if section and section["scope"] == "job" and world_size > 1:
            raise _bad("the state continues an epoch whose rest was split over the whole job: "
                       "resume it from every rank's state, load_state_dict([state of rank 0, "
                       "...])")
    else:
        ranks = sorted(s["workers"][0]["rank"] // max(s["num_workers"], 1) for s in states)
        if len(set(old)) != 1 or ranks != list(range(old[0])):
            raise _bad(f"the list holds the states of ranks {ranks} of jobs of {sorted(set(old))} "
                       f"ranks: give every rank's state of one checkpoint, rank 0 first")
    sections = [s.get("elastic") for s in states]
    if all(section is None for section in sections):  # every rank between two epochs
        return {"epoch": min(w["epoch"] for s in states for w in s["workers"])}
    epoch = min(section["epoch"] for section in sections if section is not None)
    in_flight = []
    for state, section in zip(states, sections):
        if section is None:  # this rank has not taken a batch of it yet, or is done
            if min(w["epoch"] for w in state["workers"]) > epoch:
                continue
            n = max(state["num_workers"], 1)
            first = state["workers"][0]["rank"]
            section = {"epoch": epoch, "world_size": state["workers"][0]["world_size"],
                       "shards": list(range(first, first + n)), "taken": b""}
        in_flight.append(section)
    rest, epoch = plan_rest(in_flight)
    return {"epoch": epoch, "scope": scope, "rest": rest}


def check_section(section, what):
    """A loader state's "elastic" section, checked field by field."""
    if not isinstance(section, dict):
        raise _bad(f"{what}: 'elastic' is not a dict")
    for key in ("epoch", "world_size"):
        v = section.get(key)
        if isinstance(v, bool) or not isinstance(v, int) or v < (0 if key == "epoch" else 1):
            raise _bad(f"{what}: 'elastic' has no valid '{key}' ({v!r})")
    shards = section.get("shards")
    if not isinstance(shards, (list, tuple)) or not all(
            isinstance(s, int) and not isinstance(s, bool) and 0 <= s < section["world_size"]
            for s in shards):
        raise _bad(f"{what}: 'elastic' 'shards' is not a list of shards of "
                   f"{section['world_size']}")
    taken = section.get("taken")
    if not isinstance(taken, (bytes, bytearray, memoryview)) or len(taken) % 16:
        raise _bad(f"{what}: 'elastic' 'taken' is not bytes of [begin, end) pairs")
    if section.get("scope") not in ("rank", "job") or not isinstance(section.get("exact"), bool):
        raise _bad(f"{what}: 'elastic' has no valid 'scope' and 'exact'")
    return dict(section, shards=sorted(shards), taken=bytes(taken))


def plan_rest(sections):
    """The rest of the epoch in flight over the loader states' sections (one per old
    rank, all of one job): {"world_size", "shards", "taken"} and the epoch."""
    epochs = {s["epoch"] for s in sections}
    worlds = {s["world_size"] for s in sections}
    if len(epochs) != 1 or len(worlds) != 1:
        raise _bad(f"the states are of different epochs in flight ({sorted(epochs)}) or "
                   f"layouts ({sorted(worlds)} shards): give the states of one checkpoint")
    shards = sorted({k for s in sections for k in s["shards"]})
    taken = runs_of(np.concatenate([ids_of(s["taken"]) for s in sections]))
    return {"world_size": worlds.pop(), "shards": shards, "taken": taken}, epochs.pop()
