# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""PipelineDataset's positions (dataecho.torch): state_dict() and load_state_dict(),
the states the main process hands to DataLoader workers (a file beside the stats
reports, named by a token in shared memory), and the echo planner's memory each
iteration starts from. A mixin: PipelineDataset holds the fields it reads
(_epochs, _reports, _loaded, _loaded_token, _current, _pipeline, _last_stats).

    class PipelineDataset(_Positions, torch.utils.data.IterableDataset): ...
"""

import random

import dataecho
from dataecho._torch_state import (STATE_VERSION, _check_state, _planner_memory,
                                   _shard_of)
from dataecho._worker_shared import SharedEpochs


class _Positions:
    """state_dict(), load_state_dict() and the hand-over to workers (see the module)."""

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
        if "rest" in payload:  # an elastic resume: every worker its share of the rest
            return payload["rest"]
        states = payload.get("workers")
        if states is None:
            return payload["state"]
        if len(states) != num_workers:
            raise dataecho.InvalidArgumentError(
                f"load_state_dict: the state holds {len(states)} workers' positions, this "
                f"DataLoader runs {num_workers} workers: resume with the same num_workers")
        return states[slot]

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

    def _load_rest(self, resume, in_workers):
        """Makes the next iter() read its share of the rest of an epoch another layout
        began (dataecho.torch.DataLoader's elastic resume: {"epoch", "scope", "rest"}),
        in this process or, `in_workers`, in the DataLoader's workers."""
        self._own_process()
        if in_workers:
            self._loaded, self._loaded_token = None, 0
            self._hand_over({"rest": resume})
        else:
            self._loaded, self._loaded_token = resume, 0

    def _hand_over(self, payload):
        """Leaves `payload` for the DataLoader workers that iterate next (a file beside
        the stats reports, named by a token in shared memory); returns the token."""
        token = random.getrandbits(62) + 1
        self._reports.write_handoff(token, payload)
        self._epochs.set_control(SharedEpochs.TOKEN, token)
        return token

    def _current_worker(self):
        return None if self._current is None else self._current["worker"]
