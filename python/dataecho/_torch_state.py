# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""dataecho.torch's states and places: the shard of a DataLoader worker, the
epoch and state_dict() checks (each a clear InvalidArgumentError naming the field),
and the echo planner's memory carried from one epoch's pipeline to the next.

    shard = _shard_of(worker, num_workers)        # worker None: the main process
    checked = _check_state(state_dict)            # the fields, validated, state as bytes
    memory = _planner_memory(stats_entry)         # for _dataecho._planner_memory()
"""

import operator
from collections.abc import Mapping

import torch
import torch.distributed

import dataecho

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
