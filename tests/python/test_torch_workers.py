# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""dataecho.torch with DataLoader worker processes: states loaded in the workers
(torchdata's StatefulDataLoader protocol), the main process's state_dict() and
load_state_dict(), and dataecho.torch.DataLoader's resume, all in real worker
processes (fork, spawn, forkserver)."""

import pickle

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
    loader = torch.utils.data.DataLoader(again, batch_size=None, num_workers=1)
    assert [key(b) for b in loader] == whole[7:]
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
    other = det.DataLoader(dataset(), batch_size=None, num_workers=4)
    with pytest.raises(dataecho.InvalidArgumentError, match="2 workers, this one has 4"):
        other.load_state_dict(state)
    with pytest.raises(dataecho.InvalidArgumentError, match="not a dict"):
        loader.load_state_dict([state])
    bad = dict(state, workers=[dict(state["workers"][0]), {"version": 1}])
    with pytest.raises(dataecho.InvalidArgumentError, match="no 'epoch'"):
        loader.load_state_dict(bad)
    swapped = dict(state, workers=state["workers"][::-1])
    with pytest.raises(dataecho.InvalidArgumentError, match="worker 0's state is shard 1 of 2"):
        loader.load_state_dict(swapped)
    with pytest.raises(TypeError, match="PipelineDataset"):
        det.DataLoader(list(range(3)))
