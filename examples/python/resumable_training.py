# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""Trains a small MLP on TFRecord shards of 28x28 image records (Fashion-MNIST, as
`dataecho convert` writes them) through dataecho.torch.DataLoader with workers,
checkpointing model, optimizer and loader; killed at any moment, run again, it resumes at
the batch after its last checkpoint.

    build/tools/dataecho/dataecho convert \\
        --images=/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz \\
        --labels=/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz \\
        --output=/tmp/fm/train --shards=4
    PYTHONPATH=build/python python3 examples/python/resumable_training.py \\
        --data='/tmp/fm/train-*' --checkpoint=/tmp/ckpt.pt --workers=2 --steps=1000

Every `--save_every` steps it writes {"step", "model", "optimizer", "loader"} to
`--checkpoint` (a temporary file, then an atomic rename, so a kill -9 leaves the last one
whole); at start it loads the checkpoint if there is one. The loader's state holds every
worker's position behind the last batch the loop took (dataecho.torch.DataLoader), so the
resumed run trains on exactly the batches the uninterrupted one would have. Run again with
another `--workers`, it trains on the rest of the interrupted epoch instead (every record of it
once across the runs; the source is given the shard itself for that). With `--log`
it appends "step crc32-of-the-batch loss" per step, and at the end "final crc32-of-the-weights".
"""

import argparse
import functools
import os
import zlib

import torch
from torch import nn

import dataecho
import dataecho.torch

def build(pattern, shard, epoch):
    """One worker's training input: its files, decoded on 2 threads, echo 2 before crops
    and flips, shuffled, batched."""
    return (dataecho.from_tfrecord(pattern, shard=shard, cycle_length=1)
            .map(dataecho.decode_image_record, parallelism=2)
            .prefetch(depth=256)
            .echo(factor=2, seed=1)
            .map([dataecho.RandomCrop(height=28, width=28, padding=2, seed=1),
                  dataecho.RandomFlip(seed=1)], parallelism=2)
            .shuffle(buffer_size=4096, seed=1)
            .batch(batch_size=128, drop_remainder=True, cast="float32", scale=1 / 255,
                   mean=[0.2860], stddev=[0.3530]))


def crc(tensor):
    return zlib.crc32(tensor.detach().contiguous().numpy().tobytes())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="TFRecord files (a glob pattern)")
    parser.add_argument("--checkpoint", required=True, help="checkpoint file")
    parser.add_argument("--workers", type=int, default=2, help="DataLoader workers")
    parser.add_argument("--steps", type=int, default=1000, help="training steps in all")
    parser.add_argument("--save_every", type=int, default=10, help="steps between checkpoints")
    parser.add_argument("--log", default=None, help="file to append a line per step to")
    args = parser.parse_args()
    torch.manual_seed(1)
    torch.set_num_threads(1)  # the same arithmetic in every run: bit-identical weights

    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    loader = dataecho.torch.DataLoader(dataecho.torch.PipelineDataset(
                                           functools.partial(build, args.data)),
                                       batch_size=None, num_workers=args.workers)
    step = 0
    if os.path.exists(args.checkpoint):
        saved = torch.load(args.checkpoint)
        step = saved["step"]
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        loader.load_state_dict(saved["loader"])
        print(f"resumed at step {step}", flush=True)
    log = open(args.log, "a") if args.log else None
    while step < args.steps:  # epoch after epoch
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if log:
                log.write(f"{step} {crc(x)} {loss.item():.9g}\n")
                log.flush()
            if step % args.save_every == 0 or step == args.steps:
                tmp = args.checkpoint + ".tmp"
                torch.save({"step": step, "model": model.state_dict(),
                            "optimizer": optimizer.state_dict(),
                            "loader": loader.state_dict()}, tmp)
                os.replace(tmp, args.checkpoint)
            if step == args.steps:
                break
    weights = zlib.crc32(b"".join(p.detach().numpy().tobytes() for p in model.parameters()))
    if log:
        log.write(f"final {weights}\n")
    print(f"step {step}: loss {loss.item():.3f}, weights crc32 {weights}", flush=True)


if __name__ == "__main__":
    main()
