# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""dataecho.torch.PipelineDataset: epochs, state_dict()/load_state_dict(), stats().

torchdata's StatefulDataLoader is not a Debian package, so the checkpoint tests
drive the dataset exactly as it does (torchdata/stateful_dataloader/worker.py
and stateful_dataloader.py): iter(dataset) through torch's own
_IterableDatasetFetcher, dataset.state_dict() after a fetch, and on resume
dataset.load_state_dict(state) *before* the fetcher calls iter(dataset); with
workers, one dataset copy and one state per worker.
"""

import pickle
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data
from torch.utils.data._utils.collate import default_convert
from torch.utils.data._utils.fetch import _IterableDatasetFetcher

import dataecho
import dataecho.torch as det


def make_build(images, labels, augment=True):
    def build(shard):
        p = (dataecho.from_arrays(images, labels)
             .shard(rank=shard.rank, world_size=shard.world_size)
             .echo(factor=2, seed=1))
        if augment:
            p = p.map(dataecho.RandomFlip(seed=4))
        return p.shuffle(buffer_size=16, seed=2).batch(batch_size=8)
    return build


def fetcher(dataset):
    """What StatefulDataLoader makes for an IterableDataset with batch_size=None."""
    return _IterableDatasetFetcher(dataset, False, default_convert, False)


def key(batch):
    """A batch as comparable values: source and repeat indices, pixels (the flips)."""
    x, _, source, repeat = batch[:4]
    return source.tolist(), repeat.tolist(), x.flatten().tolist()


def drain(f):
    out = []
    while True:
        try:
            out.append(key(f.fetch(None)))
        except StopIteration:
            return out


@pytest.mark.parametrize("k", [0, 1, 5, 15, 16])
def test_state_dict_after_k_batches_resumes_at_batch_k_plus_1(small_arrays, k):
    build = make_build(*small_arrays)
    whole = drain(fetcher(det.PipelineDataset(build, with_indices=True)))
    assert len(whole) == 16
    ds = det.PipelineDataset(build, with_indices=True)
    f = fetcher(ds)
    first = [key(f.fetch(None)) for _ in range(k)]
    state = ds.state_dict()
    state = pickle.loads(pickle.dumps(state))  # it travels with the model's checkpoint
    again = det.PipelineDataset(build, with_indices=True)
    again.load_state_dict(state)  # 1. the dataset's state, 2. iter(dataset)
    assert first + drain(fetcher(again)) == whole
    # The epoch after it is epoch 1, as it is for the uninterrupted dataset.
    ds_next = drain(fetcher(ds))  # its next iter(): epoch 1
    assert drain(fetcher(again)) == ds_next != whole


def test_one_state_per_worker_resumes_every_worker(small_arrays, monkeypatch):
    """Two workers, as StatefulDataLoader runs them: a dataset copy and a state each."""
    build = make_build(*small_arrays)
    n = 2

    class Info:
        num_workers = n
        id = 0

    monkeypatch.setattr(torch.utils.data, "get_worker_info", lambda: Info)

    def start(datasets):
        fetchers = []
        for w, ds in enumerate(datasets):
            Info.id = w
            fetchers.append(fetcher(ds))
        return fetchers

    def fetch(fetchers, w):
        Info.id = w
        return key(fetchers[w].fetch(None))

    def copies():  # each worker process has its own copy of the dataset
        return [det.PipelineDataset(build, with_indices=True) for _ in range(n)]

    fs = start(copies())
    whole = [[fetch(fs, w) for _ in range(8)] for w in range(n)]
    datasets = copies()
    fs = start(datasets)
    first = [[fetch(fs, w) for _ in range(3 + w)] for w in range(n)]  # worker 1 one ahead
    states = []
    for w, ds in enumerate(datasets):
        Info.id = w
        states.append(ds.state_dict())
    assert [s["rank"] for s in states] == [0, 1]
    resumed = copies()
    for w, ds in enumerate(resumed):
        Info.id = w
        ds.load_state_dict(states[w])
    fs = start(resumed)
    for w in range(n):
        rest = [fetch(fs, w) for _ in range(8 - 3 - w)]
        assert first[w] + rest == whole[w]
    # A state of worker 0 does not resume worker 1.
    wrong = copies()[1]
    wrong.load_state_dict(states[0])
    Info.id = 1
    with pytest.raises(dataecho.InvalidArgumentError, match="shard 0 of 2"):
        fetcher(wrong).fetch(None)


def write_shards(tmp_path, files=4, per_file=24):
    rng = np.random.default_rng(0)
    for f in range(files):
        images = rng.integers(0, 255, (per_file, 10, 10, 1), dtype=np.uint8)
        dataecho.write_tfrecord(str(tmp_path / f"train-{f}.tfrecord"),
                                [dataecho.encode_image_record(im, label=f) for im in images])
    return str(tmp_path / "train-*.tfrecord")


def readme_build(pattern):
    """The README's pipeline: TFRecord source, parallel decode Map, Prefetch, Echo, augment,
    Shuffle, Batch, Prefetch."""
    def build(shard, epoch):
        # cycle_length=1: a source reading files on threads saves its state on branch h30stages.
        return (dataecho.from_tfrecord(pattern, rank=shard.rank, world_size=shard.world_size,
                                       cycle_length=1)
                .map(dataecho.decode_image_record, parallelism=2)
                .prefetch(depth=16)
                .echo(factor=2, seed=1)
                .map(dataecho.RandomCrop(height=8, width=8, padding=1, seed=3))
                .shuffle(buffer_size=32, seed=2)
                .batch(batch_size=8, cast="float32")
                .prefetch(depth=2))
    return build


@pytest.mark.parametrize("k", [1, 7, 23])
def test_the_readme_pipeline_resumes_through_state_dict(tmp_path, k):
    build = readme_build(write_shards(tmp_path))
    ds = det.PipelineDataset(build, with_indices=True)
    whole = drain(fetcher(ds))
    assert len(whole) == 24  # 96 records, echo 2, batches of 8
    again = det.PipelineDataset(build, with_indices=True)
    f = fetcher(again)
    first = [key(f.fetch(None)) for _ in range(k)]
    state = pickle.loads(pickle.dumps(again.state_dict()))
    resumed = det.PipelineDataset(build, with_indices=True)
    resumed.load_state_dict(state)
    assert first + drain(fetcher(resumed)) == whole
    assert len(state["state"]) < 4096  # positions and references, not payloads


def test_load_state_dict_rejects_what_is_not_its_state(small_arrays):
    ds = det.PipelineDataset(make_build(*small_arrays))
    with pytest.raises(dataecho.InvalidArgumentError):
        ds.load_state_dict({"epoch": 1})


def epochs_of(loader, count):
    return [[(x.flatten().tolist(), e) for x, _, e in loader] for _ in range(count)]


@pytest.mark.parametrize("persistent", [False, True])
def test_a_second_dataloader_epoch_draws_anew(small_arrays, persistent):
    build = make_build(*small_arrays)
    ds = det.PipelineDataset(build, with_epoch=True)
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2,
                                         persistent_workers=persistent)
    e0, e1, e2 = epochs_of(loader, 3)
    assert {e for _, e in e0} == {0} and {e for _, e in e1} == {1} and {e for _, e in e2} == {2}
    pixels = [[x for x, _ in e] for e in (e0, e1, e2)]
    assert pixels[0] != pixels[1] != pixels[2]
    same = sum(a == b for a, b in zip(pixels[0], pixels[1]))
    assert same < len(pixels[0]) // 2  # not a replay: most batches differ
    # The same seeds and epoch give the same draws: a new dataset told epoch 1.
    again = det.PipelineDataset(build, with_epoch=True)
    again.set_epoch(1)
    loader = torch.utils.data.DataLoader(again, batch_size=None, num_workers=2,
                                         persistent_workers=persistent)
    assert epochs_of(loader, 1)[0] == e1
    # set_epoch() reaches the workers, persistent ones included.
    ds.set_epoch(0)
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2,
                                         persistent_workers=persistent)
    assert epochs_of(loader, 1)[0] == e0


def test_build_may_take_the_epoch(small_arrays):
    seen = []

    def build(shard, epoch):
        seen.append(epoch)
        return dataecho.from_arrays(*small_arrays).batch(batch_size=32)

    def build_kw(shard, seed=1, epoch=None):
        seen.append(("kw", epoch))
        return dataecho.from_arrays(*small_arrays).batch(batch_size=32)

    def build_defaults(shard, echo=2.0, seed=1):  # no epoch: its defaults stay
        seen.append((echo, seed))
        return dataecho.from_arrays(*small_arrays).batch(batch_size=32)

    ds = det.PipelineDataset(build, with_epoch=True)
    assert [e for _, _, e in ds] == [0, 0]
    assert [e for _, _, e in ds] == [1, 1]
    [_ for _ in det.PipelineDataset(build_kw)]
    [_ for _ in det.PipelineDataset(build_defaults)]
    assert seen == [0, 1, ("kw", 0), (2.0, 1)]


def test_stats_are_gathered_from_the_workers(small_arrays):
    ds = det.PipelineDataset(make_build(*small_arrays))
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)
    assert len(list(loader)) == 16
    stats = ds.stats()
    assert [s["worker"] for s in stats] == [0, 1]
    assert [(s["rank"], s["world_size"], s["epoch"]) for s in stats] == [(0, 2, 0), (1, 2, 0)]
    for s in stats:
        names = [row["stage"] for row in s["stages"]]
        assert names[0] == "vector" and names[-1] == "python", names
        assert s["stages"][-1]["elements"] == 8  # each worker's batches
    # In the main process (num_workers=0): its own pipeline, worker None.
    ds = det.PipelineDataset(make_build(*small_arrays))
    it = iter(ds)
    next(it)
    [s] = ds.stats()
    assert s["worker"] is None and s["stages"][-1]["elements"] == 1


def test_a_batch_pipeline_under_a_batching_dataloader_warns(small_arrays):
    ds = det.PipelineDataset(make_build(*small_arrays))
    with pytest.warns(UserWarning, match="batch_size=None"):
        x, _ = next(iter(torch.utils.data.DataLoader(ds)))  # the default batch_size=1
    assert tuple(x.shape) == (1, 8, 4, 4, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        list(torch.utils.data.DataLoader(ds, batch_size=None))


def test_source_indices_are_global_and_workers_draw_different_crops(tmp_path):
    """Two DataLoader workers over 4 TFRecord files: indices name records job-wide (file =
    index >> 40, the file's position in the whole sorted list), so the crops, keyed by
    them, differ between workers even for identical images."""
    image = (np.arange(12 * 12, dtype=np.uint8) % 251).reshape(12, 12, 1)
    for f in range(4):
        dataecho.write_tfrecord(str(tmp_path / f"train-{f}.tfrecord"),
                                [dataecho.encode_image_record(image, label=f) for _ in range(8)])

    def build(shard):
        return (dataecho.from_tfrecord(str(tmp_path / "train-*.tfrecord"), rank=shard.rank,
                                       world_size=shard.world_size)
                .map([dataecho.decode_image_record,
                      dataecho.RandomCrop(height=6, width=6, seed=3)])
                .batch(batch_size=8))

    loader = torch.utils.data.DataLoader(det.PipelineDataset(build, with_indices=True),
                                         batch_size=None, num_workers=2)
    batches = list(loader)  # alternate: worker 0, worker 1, worker 0, worker 1
    assert len(batches) == 4
    sources = torch.cat([b[2] for b in batches]).tolist()
    assert len(set(sources)) == 32  # unique across the workers
    files = sorted({s >> 40 for s in sources})
    assert files == [0, 1, 2, 3]  # positions in the whole list, not in a worker's share
    for b in batches:  # every record's label is its file: the index names the right one
        assert (b[2] >> 40).tolist() == b[1].tolist()
    worker0, worker1 = batches[0][0], batches[1][0]  # same position in each worker's stream
    alike = sum(torch.equal(a, b) for a, b in zip(worker0, worker1))
    assert alike <= 2, f"{alike} of 8 crops alike between the workers"


def test_a_state_after_leaving_the_loop_early_is_an_error_not_a_restart(small_arrays):
    ds = det.PipelineDataset(make_build(*small_arrays))
    for i, _ in enumerate(ds):
        if i == 2:
            break  # the generator is closed: the position is gone
    with pytest.raises(dataecho.FailedPreconditionError, match="left after 3 batches"):
        ds.state_dict()
    assert len(list(ds)) == 16  # the next epoch runs as usual
    assert ds.state_dict()["epoch"] == 2 and ds.state_dict()["state"] is None


SPAWN_IMAGES = np.repeat(np.arange(64, dtype=np.uint8), 16).reshape(64, 4, 4, 1)


def spawn_build(shard):
    """Module-level (picklable) for workers started with spawn."""
    return (dataecho.from_arrays(SPAWN_IMAGES, np.arange(64) % 10)
            .shard(rank=shard.rank, world_size=shard.world_size)
            .echo(factor=2, seed=1).map(dataecho.RandomFlip(seed=4))
            .shuffle(buffer_size=16, seed=2).batch(batch_size=8))


def test_epochs_and_stats_reach_spawned_workers():
    # The epoch count is shared memory handed to the workers as they start, with fork
    # (the tests above) and with spawn.
    ds = det.PipelineDataset(spawn_build, with_epoch=True)
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2,
                                         multiprocessing_context="spawn")
    e0, e1 = epochs_of(loader, 2)
    assert {e for _, e in e0} == {0} and {e for _, e in e1} == {1}
    assert [x for x, _ in e0] != [x for x, _ in e1]
    assert [(s["worker"], s["epoch"]) for s in ds.stats()] == [(0, 1), (1, 1)]
