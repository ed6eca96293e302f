# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""dataecho.torch with DataLoader worker processes: states loaded in the workers
(torchdata's StatefulDataLoader protocol), the main process's state_dict() and
load_state_dict(), and dataecho.torch.DataLoader's resume, all in real worker
processes (fork, spawn, forkserver)."""

import os
import pathlib
import pickle
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import torch
import torch.utils.data

import dataecho
import dataecho.torch as det

IMAGES = np.repeat(np.arange(96, dtype=np.uint8), 16).reshape(96, 4, 4, 1)
LABELS = np.arange(96) % 10


def build(shard):
    """Module-level (picklable for spawn and forkserver): echo, flips and a shuffle,
    so a resume at the wrong place or epoch shows in the pixels and indices."""
    return (dataecho.from_arrays(IMAGES, LABELS)
            .shard(rank=shard.rank, world_size=shard.world_size)
            .echo(factor=2, seed=1).map(dataecho.RandomFlip(seed=4))
            .shuffle(buffer_size=16, seed=2).batch(batch_size=4))


def build_examples(shard):
    """Examples: the DataLoader batches them (batch_size not None)."""
    return (dataecho.from_arrays(IMAGES, LABELS)
            .shard(rank=shard.rank, world_size=shard.world_size)
            .echo(factor=2, seed=1).map(dataecho.RandomFlip(seed=4))
            .shuffle(buffer_size=16, seed=2))


def key(batch):
    """A batch as comparable values: source and repeat indices, pixels, epoch."""
    x, _, source, repeat, epoch = batch
    return (torch.as_tensor(source).tolist(), torch.as_tensor(repeat).tolist(),
            x.flatten().tolist(), torch.as_tensor(epoch).tolist())


def dataset(fn=build):
    return det.PipelineDataset(fn, with_indices=True, with_epoch=True)


# torchdata's StatefulDataLoader protocol, in real worker processes: it calls
# dataset.load_state_dict(worker's state) in each worker, before iter(dataset)
# (torchdata/stateful_dataloader/worker.py). A worker_init_fn runs at that point.

def worker_states(fn, num_workers, taken):
    """Each worker's state after `taken[w]` batches and its whole epoch, made with the
    dataset in this process as worker w (the states a StatefulDataLoader collects)."""
    class Info:
        pass

    states, whole = [], []
    original = torch.utils.data.get_worker_info
    try:
        for w in range(num_workers):
            Info.id, Info.num_workers = w, num_workers
            torch.utils.data.get_worker_info = lambda: Info
            whole.append([key(b) for b in dataset(fn)])
            ds = dataset(fn)
            it = iter(ds)
            for _ in range(taken[w]):
                next(it)
            states.append(ds.state_dict())
    finally:
        torch.utils.data.get_worker_info = original
    return states, whole


def test_a_state_loaded_in_a_forked_worker_resumes_it():
    states, whole = worker_states(build, 2, [3, 5])

    def load(worker_id):  # what StatefulDataLoader does in every worker
        info = torch.utils.data.get_worker_info()
        info.dataset.load_state_dict(states[worker_id])

    loader = torch.utils.data.DataLoader(dataset(), batch_size=None, num_workers=2,
                                         worker_init_fn=load,
                                         multiprocessing_context="fork")
    got = [key(b) for b in loader]
    # Round robin: worker 0, worker 1, ... each from where its state was taken.
    rest = [whole[0][3:], whole[1][5:]]
    expected = []
    while rest[0] or rest[1]:
        for r in rest:
            if r:
                expected.append(r.pop(0))
    assert got == expected


def test_state_dict_in_the_main_process_of_a_loader_with_workers_is_an_error():
    ds = dataset()
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)
    it = iter(loader)
    for _ in range(5):
        next(it)
    with pytest.raises(dataecho.FailedPreconditionError, match="dataecho.torch.DataLoader"):
        ds.state_dict()
    del it
    # The main process iterating again owns its position once more.
    it = iter(ds)
    next(it)
    assert ds.state_dict()["world_size"] == 1


def test_a_state_loaded_in_the_main_process_reaches_the_workers():
    whole = [key(b) for b in dataset()]
    ds = dataset()
    it = iter(ds)
    for _ in range(7):
        next(it)
    state = ds.state_dict()
    del it
    # One worker is the same shard as the main process: it resumes.
    again = dataset()
    again.load_state_dict(state)
    assert again.state_dict() == dict(state, planner=None)  # what the next iter() resumes
    loader = torch.utils.data.DataLoader(again, batch_size=None, num_workers=1)
    assert [key(b) for b in loader] == whole[7:]
    with pytest.raises(dataecho.FailedPreconditionError):  # the worker's position now
        again.state_dict()
    # Once: the next epoch starts afresh, as the uninterrupted run's.
    assert [key(b) for b in loader] == [key(b) for b in dataset_at_epoch(1)]
    # Two workers are two other shards: a clear error, not a silent restart.
    again = dataset()
    again.load_state_dict(state)
    loader = torch.utils.data.DataLoader(again, batch_size=None, num_workers=2)
    with pytest.raises(dataecho.InvalidArgumentError, match="shard 0 of 1.*shard 0 of 2"):
        list(loader)


def dataset_at_epoch(epoch, fn=build):
    ds = dataset(fn)
    ds.set_epoch(epoch)
    return ds


# dataecho.torch.DataLoader: save mid-epoch, resume in a new loader, and get what the
# uninterrupted loader gives, the next epoch included.

def run(fn, kwargs, epochs=2):
    loader = det.DataLoader(dataset(fn), **kwargs)
    return [[key(b) for b in loader] for _ in range(epochs)]


def resume_after(fn, kwargs, k):
    """The batches after taking k of epoch 0, saving and resuming in a new loader."""
    loader = det.DataLoader(dataset(fn), **kwargs)
    it = iter(loader)
    taken = [key(next(it)) for _ in range(k)]
    state = pickle.loads(pickle.dumps(loader.state_dict()))
    del it, loader
    again = det.DataLoader(dataset(fn), **kwargs)
    again.load_state_dict(state)
    return taken, [key(b) for b in again], [key(b) for b in again]


@pytest.mark.parametrize("num_workers", [0, 1, 2, 4])
def test_the_loader_resumes_where_it_was_saved(num_workers):
    kwargs = {"batch_size": None, "num_workers": num_workers}
    e0, e1 = run(build, kwargs)
    assert len(e0) == 48 and e0 != e1
    for k in (1, 7):
        taken, rest, next_epoch = resume_after(build, kwargs, k)
        assert taken == e0[:k]
        assert rest == e0[k:]
        assert next_epoch == e1


@pytest.mark.parametrize("context,persistent", [("fork", True), ("spawn", False),
                                                ("forkserver", True)])
def test_the_loader_resumes_under_every_start_method(context, persistent):
    kwargs = {"batch_size": None, "num_workers": 2, "multiprocessing_context": context,
              "persistent_workers": persistent}
    e0, e1 = run(build, kwargs)
    taken, rest, next_epoch = resume_after(build, kwargs, 5)
    assert taken + rest == e0 and next_epoch == e1


def test_the_loader_resumes_when_the_dataloader_batches():
    kwargs = {"batch_size": 4, "num_workers": 2}
    e0, e1 = run(build_examples, kwargs)
    assert len(e0) == 48
    taken, rest, next_epoch = resume_after(build_examples, kwargs, 9)
    assert taken + rest == e0 and next_epoch == e1


@pytest.mark.parametrize("fn,batch_size", [(build, None), (build_examples, 4)])
def test_without_workers_the_position_is_taken_when_asked_and_when_the_loop_leaves(
        fn, batch_size):
    # A save costs about a step: with num_workers=0 the loader takes the dataset's
    # position when state_dict() is called (the loop took every batch made), not at
    # every batch; a loop that breaks out still gets the position behind its last batch.
    kwargs = {"batch_size": batch_size, "num_workers": 0}
    e0, e1 = run(fn, kwargs)
    ds = dataset(fn)
    saves = []
    original = ds.state_dict
    ds.state_dict = lambda: saves.append(1) or original()
    loader = det.DataLoader(ds, **kwargs)
    taken = []
    for b in loader:
        taken.append(key(b))
        if len(taken) == 6:
            break
    assert saves == [1]  # once, as the loop left; none per batch
    state = pickle.loads(pickle.dumps(loader.state_dict()))
    again = det.DataLoader(dataset(fn), **kwargs)
    again.load_state_dict(state)
    assert taken + [key(b) for b in again] == e0
    assert [key(b) for b in again] == e1


def test_the_loader_state_between_epochs_starts_the_next():
    kwargs = {"batch_size": None, "num_workers": 2}
    e0, e1 = run(build, kwargs)
    loader = det.DataLoader(dataset(), **kwargs)
    assert [key(b) for b in loader] == e0
    state = loader.state_dict()
    assert [w["epoch"] for w in state["workers"]] == [1, 1]
    again = det.DataLoader(dataset(), **kwargs)
    again.load_state_dict(state)
    assert [key(b) for b in again] == e1


def test_the_loader_checks_the_state_it_loads():
    loader = det.DataLoader(dataset(), batch_size=None, num_workers=2)
    state = loader.state_dict()
    with pytest.raises(dataecho.InvalidArgumentError, match="not a dict"):
        loader.load_state_dict(pickle.dumps(state))
    with pytest.raises(dataecho.InvalidArgumentError, match="every rank's state of one"):
        loader.load_state_dict([state, state])  # two "rank 0"s
    bad = dict(state, workers=[dict(state["workers"][0]), {"version": 1}])
    with pytest.raises(dataecho.InvalidArgumentError, match="no 'epoch'"):
        loader.load_state_dict(bad)
    swapped = dict(state, workers=state["workers"][::-1])
    with pytest.raises(dataecho.InvalidArgumentError, match="worker 0's state is shard 1 of 2"):
        loader.load_state_dict(swapped)
    with pytest.raises(TypeError, match="PipelineDataset"):
        det.DataLoader(list(range(3)))


# kill -9 and resume: examples/python/resumable_training.py trains through
# dataecho.torch.DataLoader with 2 workers and checkpoints every 10 steps; killed
# (SIGKILL) three times at whatever step it reached and run again each time, it must
# train on the batches of the uninterrupted run, with the same losses and weights.

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"
EXAMPLE = EXAMPLES / "resumable_training.py"
sys.path.insert(0, str(EXAMPLES))
from kill_and_resume import steps_logged, write_shards  # noqa: E402  (the example's helpers)


def training(tmp_path, name, steps):
    args = [sys.executable, str(EXAMPLE), f"--data={tmp_path}/train-*.tfrecord",
            f"--checkpoint={tmp_path / name}.pt",
            f"--log={tmp_path / name}.log", "--workers=2", f"--steps={steps}"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return args, env


def processes_running(marker):
    """Pids of the processes whose command line holds `marker`."""
    pids = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    pids.append(int(pid))
        except (OSError, ValueError):
            pass
    return pids


def test_training_killed_three_times_resumes_on_the_same_batches(fashion_mnist, tmp_path):
    # 4 TFRecord shards of 1024 Fashion-MNIST images (as `dataecho convert` writes them):
    # with echo 2, 2 workers and batches of 128, 64 steps an epoch.
    write_shards(tmp_path, list(dataecho.from_idx(fashion_mnist[0], fashion_mnist[1]).take(4096)))
    steps = 150  # 2 epochs and a part
    args, env = training(tmp_path, "whole", steps)
    assert subprocess.run(args, env=env, timeout=300, capture_output=True).returncode == 0
    whole, whole_final = steps_logged(tmp_path / "whole.log")
    assert len(whole) == steps and whole_final
    args, env = training(tmp_path, "killed", steps)
    log = tmp_path / "killed.log"
    for kill_after in (17, 64, 111):  # steps logged when the kill comes (any will do)
        child = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        try:
            while child.poll() is None and max(steps_logged(log)[0], default=0) < kill_after:
                time.sleep(0.05)
        finally:
            child.send_signal(signal.SIGKILL)  # no cleanup: workers orphaned, files half-written
            child.wait()
    result = subprocess.run(args, env=env, timeout=300, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "resumed at step" in result.stdout
    # The killed runs' workers, orphaned, exit (torch's watchdog) rather than block on a
    # result pipe nobody reads: none is left once the deadline passes.
    deadline = time.monotonic() + 60
    while processes_running(args[3]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not processes_running(args[3])
    killed, killed_final = steps_logged(log)
    assert killed == whole  # every step's batch (crc32) and loss
    assert killed_final == whole_final  # the weights


ORPHAN = """
import sys, time
import dataecho, dataecho.torch as det, torch.utils.data
dataset = det.PipelineDataset(lambda shard, epoch: dataecho.range(1000).batch(10))
loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=1,
                                     worker_init_fn=lambda worker: time.sleep(3))
it = iter(loader)  # the worker is forked and sleeps in worker_init_fn
print("forked", flush=True)
time.sleep(60)
"""


def test_a_worker_whose_main_process_dies_before_its_loop_starts_exits(tmp_path):
    # torch's watchdog reads the worker's parent pid when the worker loop starts: killed
    # before that (here while worker_init_fn runs), the main process leaves a worker
    # whose "parent" is init, which torch's watchdog never notices. It must exit.
    script = tmp_path / "orphaned_worker.py"
    script.write_text(ORPHAN)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    child = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE,
                             text=True)
    try:
        assert child.stdout.readline().strip() == "forked"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert processes_running(str(script))  # the worker outlives its main process ...
    deadline = time.monotonic() + 60
    while processes_running(str(script)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not processes_running(str(script))  # ... for a moment only
