# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""Trains a small MLP on Fashion-MNIST in PyTorch, fed by a dataecho pipeline.

    venv/bin/python examples/python/fashion_mnist_torch.py --echo=2    # after pip install
    PYTHONPATH=build/python python3 examples/python/fashion_mnist_torch.py --echo=2    # build tree

The pipeline reads Debian's Fashion-MNIST IDX files, runs the upstream ahead on
its own thread (prefetch), echoes every image `--echo` times before random
crops and flips (each copy gets its own), shuffles the copies apart and makes
normalized float32 batches, all in C++ threads; PyTorch sees finished batches.
"""

import argparse

import torch
from torch import nn

import dataecho
import dataecho.torch

DATA = "/usr/share/datasets/fashion-mnist"


def build(shard, echo=2.0, seed=1):
    """The training input for one worker (`shard`): a pipeline of Batches."""
    return (dataecho.from_idx(f"{DATA}/train-images-idx3-ubyte.gz",
                              f"{DATA}/train-labels-idx1-ubyte.gz")
            .shard(rank=shard.rank, world_size=shard.world_size)
            .prefetch(depth=256)                                   # upstream runs ahead
            .echo(factor=echo, seed=seed)                          # example echoing
            .map([dataecho.RandomCrop(height=28, width=28, padding=2, seed=seed),
                  dataecho.RandomFlip(seed=seed)], parallelism=2)  # new crops for repeats
            .shuffle(buffer_size=10000, seed=seed)                 # spread the copies
            .batch(batch_size=128, drop_remainder=True, cast="float32", scale=1 / 255,
                   mean=[0.2860], stddev=[0.3530])
            .prefetch(depth=4))


def test_accuracy(model, images):
    pipeline = (dataecho.from_idx(f"{DATA}/t10k-images-idx3-ubyte.gz",
                                  f"{DATA}/t10k-labels-idx1-ubyte.gz")
                .take(images)
                .batch(batch_size=1000, cast="float32", scale=1 / 255, mean=[0.2860],
                       stddev=[0.3530]))
    correct = total = 0
    with torch.no_grad(), pipeline:
        for batch in pipeline:
            x, y = dataecho.torch.to_tensors(batch)
            correct += int((model(x).argmax(1) == y).sum())
            total += len(y)
    return correct / total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--echo", type=float, default=2.0, help="echo factor")
    parser.add_argument("--steps", type=int, default=3000, help="training steps")
    parser.add_argument("--test_images", type=int, default=10000, help="test images to score")
    args = parser.parse_args()
    torch.manual_seed(1)

    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128),
                          nn.ReLU(), nn.Linear(128, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    dataset = dataecho.torch.PipelineDataset(lambda shard: build(shard, args.echo),
                                             with_indices=True)
    step = fresh = 0
    while step < args.steps:  # one pass of the dataset per epoch
        for x, y, _, repeat in torch.utils.data.DataLoader(dataset, batch_size=None):
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            fresh += int((repeat == 0).sum())
            step += 1
            if step % 500 == 0 or step == args.steps:
                print(f"step {step}: loss {loss.item():.3f}, fresh examples {fresh}", flush=True)
            if step == args.steps:
                break
    accuracy = test_accuracy(model, args.test_images)
    print(f"test accuracy {accuracy:.4f} after {fresh} fresh examples")


if __name__ == "__main__":
    main()
