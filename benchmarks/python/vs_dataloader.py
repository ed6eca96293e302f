# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""dataecho from Python against torch.utils.data.DataLoader, side by side.

Runs in one process, on the same data (Fashion-MNIST's 60,000 training images,
from Debian's dataset-fashion-mnist, loaded into memory once) and the same
work, alternating the contenders round by round, and reports medians:

1. Throughput: echo 2 -> shuffle 10,000 -> batch 256 (uint8 -> float32,
   x / 255 standardized), delivered as torch tensors to a Python loop.
   dataecho: from_arrays().echo().shuffle().batch(), tensors by DLPack.
   DataLoader: an IterableDataset doing the same echo and shuffle buffer per
   item, batches collated and normalized in torch, num_workers 0, 1 and 2
   (persistent workers, each with its share of the rows; one warm-up epoch).
   Items per second over one epoch (120,000 items); ratio = dataecho / the
   DataLoader's best, with its spread over the rounds. The same pipeline built
   and drained from C++ (build/benchmarks/arrays_bench, one epoch per round, in
   the rotation) gives python_vs_cpp = dataecho from Python / from C++: what
   the binding costs.
2. The copies of batch echo: shuffle 10,000 -> batch 256 -> echo 2 (batch
   echoing) against echo 2 -> shuffle 10,000 -> batch 256 (the same items
   and work, but the echo is before the batch), both as torch tensors by
   DLPack, alternating, one epoch a round. A batch echo's batch is handed out
   twice, the first time while the echo still holds it, so that export is a
   copy of its own (a tensor written in place cannot change the later copy);
   the other pipeline's batches have one holder and are zero-copy.
   batch_echo_copy: the items/s of each and their ratio (with its spread), and
   the copy's own cost: to_tensors() on a batch's first emission (a copy)
   against its second (a view), medians over one epoch.
3. Echo efficiency: an upstream R = 6 times slower than a 2 ms training step
   (a Throttle), the step a busy-wait in Python; for e = 1, 2, 3, 4, 6, 8 the
   speedup in steps per second over e = 1, divided by the ideal min(e, R).

    PYTHONPATH=build/python python3 benchmarks/python/vs_dataloader.py --json=out.json

writes {"dataecho_items_per_second", "dataloader_items_per_second": {"0", "1",
"2"}, "ratio_vs_dataloader", "ratio_spread": [min, max], "cpp_items_per_second",
"python_vs_cpp", "python_vs_cpp_spread": [min, max], "batch_echo_copy": {
"items_per_second": {"batch_echo", "example_echo"}, "ratio", "ratio_spread",
"export_us": {"copy", "view"}, "copy_us_per_batch", "batch_bytes"}, "echo_efficiency":
{"1": ..., ...}, ...}.
"""

import argparse
import gzip
import json
import os
import random
import statistics
import subprocess
import time

import numpy as np
import torch
import torch.utils.data

import dataecho
from dataecho.torch import to_tensors

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"
MEAN, STD = 0.2860, 0.3530


def load_fashion_mnist():
    with gzip.open(f"{FASHION_MNIST}/train-images-idx3-ubyte.gz") as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28, 1)
    with gzip.open(f"{FASHION_MNIST}/train-labels-idx1-ubyte.gz") as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8).astype(np.int64)
    return images, labels


# ---------------------------------------------------------------- throughput


def dataecho_items_per_second(images, labels, echo, buffer, batch):
    pipeline = (dataecho.from_arrays(images, labels)
                .echo(factor=float(echo), seed=1)
                .shuffle(buffer_size=buffer, seed=2)
                .batch(batch_size=batch, cast="float32", scale=1 / 255, mean=[MEAN],
                       stddev=[STD]))
    items = 0
    start = time.perf_counter()
    for b in pipeline:
        x, y = to_tensors(b)
        items += len(y)
    elapsed = time.perf_counter() - start
    pipeline.close()
    return items / elapsed


class EchoShuffleDataset(torch.utils.data.IterableDataset):
    """Each item `echo` times, back to back, through a shuffle buffer, as dataecho does."""

    def __init__(self, images, labels, echo, buffer, seed=2):
        super().__init__()
        self.images, self.labels, self.echo, self.buffer, self.seed = (
            images, labels, echo, buffer, seed)

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        worker, workers = (info.id, info.num_workers) if info else (0, 1)
        rng = random.Random(self.seed + worker)
        buf = []
        for i in range(worker, len(self.images), workers):
            item = (self.images[i], self.labels[i])
            for _ in range(self.echo):
                if len(buf) < self.buffer:
                    buf.append(item)
                else:
                    j = rng.randrange(self.buffer)
                    yield buf[j]
                    buf[j] = item
        rng.shuffle(buf)
        yield from buf


def collate_normalized(items):
    x = torch.from_numpy(np.stack([image for image, _ in items])).float()
    x.div_(255).sub_(MEAN).div_(STD)
    return x, torch.tensor([label for _, label in items])


def dataloader(images, labels, echo, buffer, batch, workers):
    return torch.utils.data.DataLoader(
        EchoShuffleDataset(images, labels, echo, buffer), batch_size=batch,
        collate_fn=collate_normalized, num_workers=workers, persistent_workers=workers > 0)


def dataloader_items_per_second(loader):
    items = 0
    start = time.perf_counter()
    for x, y in loader:
        items += len(y)
    return items / (time.perf_counter() - start)


def throughput(images, labels, rounds, cpp_bench=None, echo=2, buffer=10000, batch=256,
               workers=(0, 1, 2)):
    loaders = {w: dataloader(images, labels, echo, buffer, batch, w) for w in workers}
    for w in workers:  # warm-up epoch: workers started, pages touched
        dataloader_items_per_second(loaders[w])
    dataecho_items_per_second(images, labels, echo, buffer, batch)
    runs = {"dataecho": [], **{w: [] for w in workers}, "cpp": []}
    for r in range(rounds):
        order = ["dataecho", *workers] + (["cpp"] if cpp_bench else [])
        order = order[r % len(order):] + order[:r % len(order)]  # rotate who goes first
        for who in order:
            if who == "dataecho":
                runs[who].append(dataecho_items_per_second(images, labels, echo, buffer, batch))
            elif who == "cpp":
                runs[who].append(cpp_items_per_second(cpp_bench))
            else:
                runs[who].append(dataloader_items_per_second(loaders[who]))
        best = max(runs[w][-1] for w in workers)
        print(f"round {r + 1}: dataecho {runs['dataecho'][-1]:,.0f} items/s, "
              + ", ".join(f"DataLoader({w}) {runs[w][-1]:,.0f}" for w in workers)
              + (f", C++ {runs['cpp'][-1]:,.0f}" if cpp_bench else "")
              + f", ratio {runs['dataecho'][-1] / best:.2f}", flush=True)
    del loaders
    ratios = [runs["dataecho"][r] / max(runs[w][r] for w in workers) for r in range(rounds)]
    medians = {who: statistics.median(v) for who, v in runs.items() if v}
    cpp = {}
    if cpp_bench:
        per_round = [runs["dataecho"][r] / runs["cpp"][r] for r in range(rounds)]
        cpp = {"cpp_items_per_second": medians["cpp"],
               "python_vs_cpp": medians["dataecho"] / medians["cpp"],
               "python_vs_cpp_spread": [min(per_round), max(per_round)]}
    return {**cpp,
        "dataecho_items_per_second": medians["dataecho"],
        "dataloader_items_per_second": {str(w): medians[w] for w in workers},
        "ratio_vs_dataloader": medians["dataecho"] / max(medians[w] for w in workers),
        "ratio_spread": [min(ratios), max(ratios)],
        "ns_per_item": {"dataecho": 1e9 / medians["dataecho"],
                        **{f"dataloader_{w}": 1e9 / medians[w] for w in workers}},
    }


def batch_echo_copy(images, labels, rounds, buffer=10000, batch=256):
    """Items/s of batch echo (the first export of each batch a copy) against example echo
    before the batch (zero-copy exports), alternating; and the copy's cost: to_tensors() on a
    batch's first emission (shared: a copy) against its second (sole holder: a view)."""
    batch_args = dict(batch_size=batch, cast="float32", scale=1 / 255, mean=[MEAN], stddev=[STD])

    def run(batch_echo, export_times=None):
        source = dataecho.from_arrays(images, labels)
        if batch_echo:
            pipeline = (source.shuffle(buffer_size=buffer, seed=2).batch(**batch_args)
                        .echo(factor=2.0, seed=1))
        else:
            pipeline = (source.echo(factor=2.0, seed=1).shuffle(buffer_size=buffer, seed=2)
                        .batch(**batch_args))
        items = 0
        start = time.perf_counter()
        for i, b in enumerate(pipeline):
            t0 = time.perf_counter()
            x, y = to_tensors(b)
            if export_times is not None:  # a batch's two emissions come back to back
                export_times[i % 2].append(time.perf_counter() - t0)
            items += len(y)
        elapsed = time.perf_counter() - start
        pipeline.close()
        return items / elapsed

    run(True)  # warm-up: pages touched, pools filled
    runs = {True: [], False: []}
    for r in range(rounds):
        for who in ((True, False) if r % 2 == 0 else (False, True)):
            runs[who].append(run(who))
        print(f"round {r + 1}: batch echo {runs[True][-1]:,.0f} items/s, example echo "
              f"{runs[False][-1]:,.0f} items/s", flush=True)
    export_times = ([], [])
    run(True, export_times)
    ratios = [runs[True][r] / runs[False][r] for r in range(rounds)]
    return {"items_per_second": {"batch_echo": statistics.median(runs[True]),
                                 "example_echo": statistics.median(runs[False])},
            "ratio": statistics.median(runs[True]) / statistics.median(runs[False]),
            "ratio_spread": [min(ratios), max(ratios)],
            "export_us": {"copy": statistics.median(export_times[0]) * 1e6,
                          "view": statistics.median(export_times[1]) * 1e6},
            "copy_us_per_batch": (statistics.median(export_times[0])
                                  - statistics.median(export_times[1])) * 1e6,
            "batch_bytes": batch * images[0].size * 4}


def cpp_items_per_second(binary):
    """One epoch of the same pipeline from C++ (arrays_bench), items per second."""
    out = subprocess.run([binary, "--rounds=1"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["items_per_second"][0]


def default_arrays_bench():
    """build/benchmarks/arrays_bench beside the build/python this dataecho came from."""
    package = os.path.dirname(os.path.abspath(dataecho.__file__))  # build/python/dataecho
    build = os.path.dirname(os.path.dirname(package))
    path = os.path.join(build, "benchmarks", "arrays_bench")
    return path if os.path.exists(path) else None


# ------------------------------------------------------------ echo efficiency


def busy_step(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def steps_per_second(images, labels, echo, ratio, step_s, batch, warmup, steps):
    per_example = ratio * step_s / batch  # upstream time per example
    pipeline = (dataecho.from_arrays(images, labels)
                .throttle(latency=per_example, min_sleep=0.001, catch_up=8 * ratio * step_s)
                .prefetch(depth=batch)
                .echo(factor=float(echo), seed=1)
                .shuffle(buffer_size=2048, seed=2)
                .batch(batch_size=batch, cast="float32", scale=1 / 255, mean=[MEAN],
                       stddev=[STD], drop_remainder=True)
                .prefetch(depth=4))
    with pipeline:
        for _ in range(warmup):
            next(pipeline)
            busy_step(step_s)
        start = time.perf_counter()
        for _ in range(steps):
            to_tensors(next(pipeline))
            busy_step(step_s)
        return steps / (time.perf_counter() - start)


def echo_efficiency(images, labels, factors=(1, 2, 3, 4, 6, 8), ratio=6.0, step_s=0.002,
                    batch=128, warmup=50, steps=300):
    rates = {}
    for e in factors:
        rates[e] = steps_per_second(images, labels, e, ratio, step_s, batch, warmup, steps)
    base = rates[factors[0]]
    out = {}
    for e in factors:
        speedup = rates[e] / base
        out[str(e)] = speedup / min(e, ratio)
        print(f"e = {e}: {rates[e]:6.1f} steps/s, speedup {speedup:.2f}x, ideal "
              f"{min(e, ratio):.0f}x, efficiency {out[str(e)]:.3f}", flush=True)
    return out, {str(e): r for e, r in rates.items()}


def write_json(path, results):
    """Writes `results` as indented JSON to `path` (nothing when path is empty)."""
    if path:
        with open(path, "w") as f:
            json.dump(results, f, indent=2)
            f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--rounds", type=int, default=5, help="throughput rounds (alternating)")
    parser.add_argument("--steps", type=int, default=300, help="measured steps per echo factor")
    parser.add_argument("--skip_efficiency", action="store_true")
    parser.add_argument("--skip_copies", action="store_true",
                        help="skip the batch echo copy measurement")
    parser.add_argument("--arrays_bench", default=default_arrays_bench(),
                        help="the C++ twin (build/benchmarks/arrays_bench); '' to skip it")
    args = parser.parse_args()
    torch.set_num_threads(1)
    images, labels = load_fashion_mnist()
    results = throughput(images, labels, args.rounds, cpp_bench=args.arrays_bench or None)
    print(f"dataecho {results['dataecho_items_per_second']:,.0f} items/s "
          f"({results['ns_per_item']['dataecho']:.0f} ns/item), DataLoader best "
          f"{max(results['dataloader_items_per_second'].values()):,.0f} items/s: ratio "
          f"{results['ratio_vs_dataloader']:.2f} (rounds {results['ratio_spread'][0]:.2f}-"
          f"{results['ratio_spread'][1]:.2f})", flush=True)
    if "python_vs_cpp" in results:
        print(f"from C++ {results['cpp_items_per_second']:,.0f} items/s: Python / C++ "
              f"{results['python_vs_cpp']:.2f} (rounds {results['python_vs_cpp_spread'][0]:.2f}-"
              f"{results['python_vs_cpp_spread'][1]:.2f})", flush=True)
    if not args.skip_copies:
        copies = results["batch_echo_copy"] = batch_echo_copy(images, labels, args.rounds)
        print(f"batch echo {copies['items_per_second']['batch_echo']:,.0f} items/s against "
              f"example echo {copies['items_per_second']['example_echo']:,.0f}: ratio "
              f"{copies['ratio']:.2f} (rounds {copies['ratio_spread'][0]:.2f}-"
              f"{copies['ratio_spread'][1]:.2f}); a copy of a {copies['batch_bytes']:,}-byte "
              f"batch costs ~{copies['copy_us_per_batch']:.0f} us", flush=True)
    if not args.skip_efficiency:
        results["echo_efficiency"], results["echo_steps_per_second"] = echo_efficiency(
            images, labels, steps=args.steps)
    write_json(args.json, results)


if __name__ == "__main__":
    main()
