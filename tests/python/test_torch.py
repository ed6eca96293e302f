# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""dataecho.torch: the IterableDataset, its sharding, and a training loop through it."""

import os
import subprocess
import sys

import numpy as np
import torch
from torch import nn

import dataecho
import dataecho.torch as det
from conftest import ROOT


def sharded_arrays(images, labels):
    def build(shard):
        return (dataecho.from_arrays(images, labels)
                .shard(rank=shard.rank, world_size=shard.world_size)
                .batch(batch_size=4, cast="float32"))
    return build


def test_batches_become_tensors(small_arrays):
    loader = torch.utils.data.DataLoader(
        det.PipelineDataset(sharded_arrays(*small_arrays), with_indices=True), batch_size=None)
    got = list(loader)
    assert len(got) == 16
    x, y, source, repeat = got[0]
    assert x.dtype == torch.float32 and tuple(x.shape) == (4, 4, 4, 1)
    assert y.dtype == torch.int64 and repeat.dtype == torch.int32
    torch.testing.assert_close(x, torch.from_numpy(small_arrays[0][:4].astype(np.float32)))
    assert torch.cat([s for _, _, s, _ in got]).tolist() == list(range(64))


def test_workers_split_the_data(small_arrays):
    loader = torch.utils.data.DataLoader(
        det.PipelineDataset(sharded_arrays(*small_arrays), with_indices=True), batch_size=None,
        num_workers=2)
    sources = sorted(torch.cat([s for _, _, s, _ in loader]).tolist())
    assert sources == list(range(64))  # every row once, split between the two workers


def test_workers_given_the_same_seeds_draw_differently(small_arrays):
    def build(shard):
        return (dataecho.from_arrays(*small_arrays)
                .shard(rank=shard.rank, world_size=shard.world_size)
                .echo(factor=1.5, seed=1)
                .shuffle(buffer_size=16, seed=3)
                .batch(batch_size=4))

    def orders(num_workers):
        loader = torch.utils.data.DataLoader(det.PipelineDataset(build, with_indices=True),
                                             batch_size=None, num_workers=num_workers)
        rows = [(s, r) for _, _, sources, repeats in loader
                for s, r in zip(sources.tolist(), repeats.tolist())]
        # Each worker's rows, as positions in its share (worker w reads rows w, w + 2, ...).
        return [[(s // 2, r) for s, r in rows if s % 2 == w] for w in (0, 1)]

    first, second = orders(2)
    assert sorted({s for s, _ in first}) == list(range(32))
    assert sorted({s for s, _ in second}) == list(range(32))
    assert first != second  # other shuffle positions and echo counts over their shares
    assert [first, second] == orders(2)  # the same seeds and layout give the same draws

    # One worker in all: the seeds as given, as the pipeline built by hand.
    alone = [s for _, _, sources, _ in torch.utils.data.DataLoader(
        det.PipelineDataset(build, with_indices=True), batch_size=None) for s in sources.tolist()]
    by_hand = [s for b in build(dataecho.Shard(0, 1)) for s in b.source_indices.tolist()]
    assert alone == by_hand


def test_shard_combines_rank_and_worker(monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    s = det.current_shard()
    assert (s.rank, s.world_size) == (1, 2)

    class Info:
        id, num_workers = 2, 3

    monkeypatch.setattr(torch.utils.data, "get_worker_info", lambda: Info)
    s = det.current_shard()
    assert (s.rank, s.world_size) == (5, 6)  # process 1 of 2, worker 2 of 3


def test_fashion_mnist_mlp_learns_through_echo(fashion_mnist):
    """A Fashion-MNIST MLP in torch, fed through dataecho.torch with echo 2: its loss falls.

    784-64-10 on batches of 32 for 2,000 steps: small enough to take seconds even on
    Debian's reference BLAS (scripts/setup.sh installs OpenBLAS, much faster).
    """
    torch.manual_seed(0)
    torch.set_num_threads(1)

    def build(shard):
        return (dataecho.from_idx(*fashion_mnist[:2])
                .shard(rank=shard.rank, world_size=shard.world_size)
                .prefetch(depth=256)
                .echo(factor=2.0, seed=1)
                .shuffle(buffer_size=10000, seed=2)
                .batch(batch_size=32, drop_remainder=True, cast="float32", scale=1 / 255,
                       mean=[0.286], stddev=[0.353])
                .prefetch(depth=4))

    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses, fresh, rows = [], 0, 0
    loader = torch.utils.data.DataLoader(det.PipelineDataset(build, with_indices=True),
                                         batch_size=None)
    for step, (x, y, _, repeat) in enumerate(loader):
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        fresh += int((repeat == 0).sum())
        rows += len(y)
        if step + 1 == 2000:
            break
    assert len(losses) == 2000
    assert abs(fresh / rows - 0.5) < 0.02  # echo 2: about half the rows are repeats
    first, last = np.mean(losses[:20]), np.mean(losses[-200:])
    assert last < 0.5 * first, (first, last)  # here 1.49 -> 0.72


def test_the_example_trainer_runs():
    example = ROOT / "examples" / "python" / "fashion_mnist_torch.py"
    result = subprocess.run([sys.executable, str(example), "--steps=5", "--test_images=200"],
                            capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert result.returncode == 0, result.stderr
    assert "step 5: loss" in result.stdout and "test accuracy" in result.stdout
