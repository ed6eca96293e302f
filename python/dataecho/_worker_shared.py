# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""What dataecho.torch.PipelineDataset shares with its DataLoader worker processes.

A DataLoader runs the dataset in worker processes, forked or spawned anew every
epoch unless ``persistent_workers``: a count kept in the dataset object would
start from 0 in every new worker, and a worker's stats would stay in it. So:

- ``SharedEpochs``: the next epoch of every worker, one slot per worker id, in
  shared memory (a ``multiprocessing.RawArray``) that workers inherit at fork
  or receive as they are spawned; any other copy of the dataset gets its own.
  Beside the epochs it holds what the main process tells workers that already
  run (persistent ones included) and what they tell it: the token of a state
  handed to the workers (``WorkerReports.write_handoff``) and which worker
  applied it, the rotation of worker ids a resumed loader asks for, and how
  many workers iterated last (0: the main process itself).
- ``WorkerReports``: every worker writes its pipeline's stats (JSON, replaced
  atomically) into a directory the dataset made; the main process reads them.
  The directory goes when the dataset object that made it is collected.

    epochs = SharedEpochs()
    epoch = epochs.take(worker_id)          # this worker's epoch; the next one counts on
    reports = WorkerReports()
    reports.write(worker_id, {"worker": worker_id, "stages": pipeline.stats()})
    every_worker = reports.read_all()       # in the main process
"""

import ctypes
import json
import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import os
import pickle
import shutil
import tempfile
import threading
import weakref

# How many DataLoader workers the shared epoch counters serve (one slot each).
MAX_WORKERS = 1024
# How often a worker writes its pipeline's stats for dataset.stats() (seconds).
STATS_INTERVAL = 0.5

_watched_pid = None  # the process exit_with_parent() watches in (a fork inherits the value)


def exit_with_parent():
    """In a process multiprocessing started (a DataLoader worker): ends it, at once and
    without cleanup, once the process that started it is gone. torch's own watchdog
    reads the parent's pid as its worker loop begins: a main process killed between the
    fork and that read leaves a worker that waits forever for indices nobody sends.
    This one waits on multiprocessing's own parent sentinel (a pipe the starting
    process holds open), made before the worker ran: fork, spawn and forkserver alike.
    Once per process; elsewhere a no-op."""
    global _watched_pid
    parent = multiprocessing.parent_process()
    if parent is None or _watched_pid == os.getpid():
        return
    _watched_pid = os.getpid()
    sentinel = parent.sentinel

    def watch():
        multiprocessing.connection.wait([sentinel])
        os._exit(1)  # nothing to hand the results to; the main process may be half-dead

    threading.Thread(target=watch, name="dataecho-parent-watch", daemon=True).start()


class SharedEpochs:
    """The next epoch of every DataLoader worker (slot 0 also serves the main process),
    in memory shared with the worker processes (inherited at fork, passed at spawn)."""

    # Layout: epochs[MAX_WORKERS], applied[MAX_WORKERS] (the handoff token each worker
    # slot applied), then the control words.
    _APPLIED = MAX_WORKERS
    _CONTROL = 2 * MAX_WORKERS
    TOKEN, ROTATE_BY, ROTATE_WORKERS, LAST_WORKERS = range(4)
    _SIZE = 2 * MAX_WORKERS + 4

    def __init__(self, values=None):
        self.array = multiprocessing.RawArray(ctypes.c_int64, self._SIZE)
        if values:
            self.array[:len(values)] = values

    def __getstate__(self):
        if multiprocessing.context.get_spawning_popen() is not None:
            return {"array": self.array}  # a worker being started: share it
        return {"values": list(self.array)}  # any other copy gets its own

    def __setstate__(self, state):
        if "array" in state:
            self.array = state["array"]
        else:
            self.__init__(state["values"])

    def take(self, slot):
        """The epoch of slot's next iteration; counts the slot on."""
        epoch = self.array[slot]
        self.array[slot] = epoch + 1
        return epoch

    def peek(self, slot):
        return self.array[slot]

    def set(self, slot, epoch):
        self.array[slot] = epoch

    def set_all(self, epoch):
        self.array[:MAX_WORKERS] = [epoch] * MAX_WORKERS

    def applied(self, slot):
        """The handoff token worker slot applied last (0: none)."""
        return self.array[self._APPLIED + slot]

    def mark_applied(self, slot, token):
        self.array[self._APPLIED + slot] = token

    def applied_anywhere(self, token):
        return token in self.array[self._APPLIED:self._CONTROL]

    def control(self, word):
        return self.array[self._CONTROL + word]

    def set_control(self, word, value):
        self.array[self._CONTROL + word] = value


def _remove_dir(path, owner):
    if os.getpid() == owner:  # not in a forked worker that inherited the finalizer
        shutil.rmtree(path, ignore_errors=True)


class WorkerReports:
    """Stats reports of the workers, one JSON file each, in a directory of its own."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="dataecho-stats-")
        weakref.finalize(self, _remove_dir, self.dir, os.getpid())

    def __getstate__(self):
        return {"dir": self.dir}  # copies write into the same directory; only this one removes it

    def __setstate__(self, state):
        self.dir = state["dir"]

    def write(self, worker, entry):
        """Replaces worker's report by `entry` (a JSON-serializable dict)."""
        path = os.path.join(self.dir, f"worker-{worker}.json")
        try:
            with open(path + ".tmp", "w") as f:
                json.dump(entry, f)
            os.replace(path + ".tmp", path)
        except OSError:
            pass  # the dataset that reads them is gone: nobody will

    def read(self, worker):
        """Worker's last report, or None."""
        try:
            with open(os.path.join(self.dir, f"worker-{worker}.json")) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def write_handoff(self, token, payload):
        """Leaves `payload` (picklable) for the workers that will apply handoff `token`."""
        path = os.path.join(self.dir, "handoff.pickle")
        with open(path + ".tmp", "wb") as f:
            pickle.dump({"token": token, "payload": payload}, f,
                        protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(path + ".tmp", path)

    def read_handoff(self, token):
        """The payload of handoff `token`, or None if another one replaced it."""
        try:
            with open(os.path.join(self.dir, "handoff.pickle"), "rb") as f:
                handoff = pickle.load(f)
        except OSError:
            return None
        return handoff["payload"] if handoff["token"] == token else None

    def read_all(self):
        """Every worker's last report, in worker order."""
        out = []
        try:
            names = sorted(os.listdir(self.dir))
        except OSError:
            return out
        for name in names:
            if name.startswith("worker-") and name.endswith(".json"):
                try:
                    with open(os.path.join(self.dir, name)) as f:
                        out.append(json.load(f))
                except (OSError, ValueError):
                    pass  # being replaced
        return out
