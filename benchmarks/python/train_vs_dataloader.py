# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""The same Fashion-MNIST training loop in PyTorch, fed by dataecho or by a DataLoader.

For each feeder and echo factor e (1 and 2, echo before augmentation): train an
MLP with SGD (learning rate 0.02, momentum 0.9, batch 128) until the test
accuracy (the full 10,000-image test set, every --eval_every fresh examples)
reaches --target, and report the fresh examples and the training wall clock it
took (evaluation time excluded). The upstream is made R = --ratio times slower
than the measured training step, so echoing has something to hide; R = 0 runs
it unthrottled.

Both feeders do the same work per example: echo, a random 28x28 crop of the
2-pixel zero-padded image and a random flip (drawn per example and copy),
a 2,048-example shuffle buffer, batches of float32 standardized images.
dataecho: from_arrays().throttle().prefetch().echo().map([RandomCrop,
RandomFlip]).shuffle().batch().prefetch(), through dataecho.torch. DataLoader:
an IterableDataset that sleeps the same upstream time per example and does the
echo, augmentation and shuffle in Python, with --workers worker processes.

    PYTHONPATH=build/python python3 benchmarks/python/train_vs_dataloader.py --json=out.json

With --placements (e.g. "before_augment:3 auto"), only dataecho runs, through
echoed_batches(placement=...) in one dataecho.torch.PipelineDataset for the
whole run (epoch after epoch, so placement="auto" carries its plan from one
epoch's pipeline to the next), for each --seeds in turn, and the report ends
with each placement's mean wall clock to the target over the best fixed one's.
"""

import argparse
import random
import statistics
import time

import numpy as np
import torch
import torch.utils.data
from torch import nn

import dataecho
import dataecho.torch
from vs_dataloader import MEAN, STD, load_fashion_mnist, write_json

DATA = "/usr/share/datasets/fashion-mnist"
BATCH = 128


def load_test():
    import gzip
    with gzip.open(f"{DATA}/t10k-images-idx3-ubyte.gz") as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(f"{DATA}/t10k-labels-idx1-ubyte.gz") as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8).astype(np.int64)
    x = (torch.from_numpy(x.astype(np.float32)) / 255 - MEAN) / STD
    return x.permute(0, 2, 3, 1).contiguous(), torch.from_numpy(y)


def upstream(images, labels, per_example_s):
    """The slow upstream both dataecho feeders read: the arrays, throttled, run ahead."""
    p = dataecho.from_arrays(images, labels)
    if per_example_s > 0:
        p = p.throttle(latency=per_example_s, min_sleep=0.001, catch_up=0.1)
    return p.prefetch(depth=256)


def augmenters(seed):
    return [dataecho.RandomCrop(height=28, width=28, padding=2, seed=seed),
            dataecho.RandomFlip(seed=seed)]


BATCH_OPTIONS = {"batch_size": BATCH, "drop_remainder": True, "cast": "float32",
                 "scale": 1 / 255, "mean": [MEAN], "stddev": [STD]}


def dataecho_batches(images, labels, echo, per_example_s, seed):
    def build(shard):
        return (upstream(images, labels, per_example_s)
                .echo(factor=float(echo), seed=seed)
                .map(augmenters(seed), parallelism=2)
                .shuffle(buffer_size=2048, seed=seed)
                .batch(**BATCH_OPTIONS)
                .prefetch(depth=2))
    return torch.utils.data.DataLoader(
        dataecho.torch.PipelineDataset(build, with_indices=True), batch_size=None)


def placed_batches(images, labels, placement, per_example_s, seed):
    """One DataLoader over one PipelineDataset for every epoch of a run."""
    name, _, echo = placement.partition(":")

    def build(shard, epoch):
        return (upstream(images, labels, per_example_s)
                .echoed_batches(augmenters(seed), placement=name,
                                echo={"factor": float(echo or 1), "seed": seed},
                                auto_placement=dataecho.AutoPlacementOptions(seed=seed),
                                augment={"parallelism": 2},
                                shuffle={"buffer_size": 2048, "seed": seed},
                                batch=BATCH_OPTIONS, prefetch={"depth": 2}))
    ds = dataecho.torch.PipelineDataset(build, with_indices=True)
    return ds, torch.utils.data.DataLoader(ds, batch_size=None)


class PythonInput(torch.utils.data.IterableDataset):
    """Upstream delay, echo, crop + flip and a shuffle buffer, in Python."""

    def __init__(self, images, labels, echo, per_example_s, seed):
        super().__init__()
        self.images, self.labels, self.echo = images, labels, echo
        self.per_example_s, self.seed = per_example_s, seed

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        worker, workers = (info.id, info.num_workers) if info else (0, 1)
        rng = random.Random(self.seed * 1000 + worker)
        order = range(worker, len(self.images), workers)  # in file order, as from_arrays
        buf, due = [], time.perf_counter()
        for i in order:
            if self.per_example_s > 0:  # the upstream's time per example, on a schedule
                due += self.per_example_s * workers
                delay = due - time.perf_counter()
                if delay > 0.001:
                    time.sleep(delay)
            copies = int(self.echo) + (rng.random() < self.echo - int(self.echo))
            padded = np.pad(self.images[i], ((2, 2), (2, 2), (0, 0)))
            for k in range(copies):
                y0, x0 = rng.randrange(5), rng.randrange(5)
                image = padded[y0:y0 + 28, x0:x0 + 28]
                if rng.random() < 0.5:
                    image = image[:, ::-1]
                item = (np.ascontiguousarray(image), self.labels[i], k)
                if len(buf) < 2048:
                    buf.append(item)
                else:
                    j = rng.randrange(2048)
                    yield buf[j]
                    buf[j] = item
        rng.shuffle(buf)
        yield from buf


def collate(items):
    x = torch.from_numpy(np.stack([i[0] for i in items])).float().div_(255).sub_(MEAN).div_(STD)
    return (x, torch.tensor([i[1] for i in items]), None,
            torch.tensor([i[2] for i in items], dtype=torch.int32))


def dataloader_batches(images, labels, echo, per_example_s, seed, workers):
    return torch.utils.data.DataLoader(
        PythonInput(images, labels, echo, per_example_s, seed), batch_size=BATCH,
        collate_fn=collate, num_workers=workers, drop_last=True)


HIDDEN = [256, 128]  # --hidden


def make_model(seed):
    torch.manual_seed(seed)
    layers, inputs = [nn.Flatten()], 784
    for n in HIDDEN:
        layers += [nn.Linear(inputs, n), nn.ReLU()]
        inputs = n
    return nn.Sequential(*layers, nn.Linear(inputs, 10))


def accuracy(model, test):
    with torch.no_grad():
        return float((model(test[0]).argmax(1) == test[1]).float().mean())


def train(feeder, echo, per_example_s, args, data, test):
    """feeder: "dataecho", "dataloader" or "placed:<placement>[:<factor>]"."""
    model = make_model(args.seed)
    placed = None
    if feeder.startswith("placed:"):
        placed = placed_batches(*data, feeder[len("placed:"):], per_example_s, args.seed)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    fresh, next_eval, training_s, epoch = 0, args.eval_every, 0.0, 0
    while fresh < args.budget:
        epoch += 1
        seed = args.seed * 1000 + epoch  # the data's draws: new every epoch and for every --seed
        if placed is not None:
            batches = placed[1]  # the dataset counts the epochs itself
        elif feeder == "dataecho":
            batches = dataecho_batches(*data, echo, per_example_s, seed)
        else:
            batches = dataloader_batches(*data, echo, per_example_s, seed, args.workers)
        start = time.perf_counter()
        for x, y, _, repeat in batches:
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            fresh += int((repeat == 0).sum())
            if fresh >= next_eval:
                training_s += time.perf_counter() - start
                acc = accuracy(model, test)
                next_eval += args.eval_every
                if acc >= args.target:
                    return with_decisions({"fresh_to_target": fresh,
                                           "seconds_to_target": training_s, "accuracy": acc},
                                          placed)
                start = time.perf_counter()
        training_s += time.perf_counter() - start
    return with_decisions({"fresh_to_target": None, "seconds_to_target": None,
                           "accuracy": accuracy(model, test)}, placed)


def with_decisions(result, placed):
    """`result` with the echo planner's placement, factor and decisions of the
    epoch running now (placement auto), if any."""
    for entry in placed[0].stats() if placed is not None else []:
        for row in entry["stages"]:
            if row["stage"] == "echo_planner":
                result.update(placement=row.get("placement"), factor=row.get("factor"),
                              decisions=row.get("decisions", []))
    return result


def compare_placements(args, per_example, data, test, results):
    """--placements: each placement for each seed, alternating; then the means."""
    placements = args.placements.split()
    seeds = [int(x) for x in args.seeds.split()]
    for seed in seeds:
        args.seed = seed
        for placement in placements:
            r = train("placed:" + placement, None, per_example, args, data, test)
            results["runs"][f"{placement}_s{seed}"] = r
            print(f"{placement:18s} seed {seed}: {r}", flush=True)
    means = {}
    for placement in placements:
        secs = [results["runs"][f"{placement}_s{s}"]["seconds_to_target"] for s in seeds]
        if all(secs):
            means[placement] = statistics.mean(secs)
    fixed = {p: t for p, t in means.items() if not p.startswith(("auto", "adaptive"))}
    if fixed:
        best = min(fixed, key=fixed.get)
        for placement, t in means.items():
            results[f"{placement}_vs_best_fixed"] = t / fixed[best]
            print(f"{placement}: {t:.1f} s to {args.target}, {t / fixed[best]:.2f}x the best "
                  f"fixed ({best}, {fixed[best]:.1f} s)", flush=True)


def step_seconds():
    model = make_model(0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    x, y = torch.randn(BATCH, 28, 28, 1), torch.randint(0, 10, (BATCH,))
    times = []
    for _ in range(30):
        start = time.perf_counter()
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        times.append(time.perf_counter() - start)
    return statistics.median(times[5:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--ratio", type=float, default=4.0, help="R: upstream / step time")
    parser.add_argument("--target", type=float, default=0.85, help="test accuracy to reach")
    parser.add_argument("--budget", type=int, default=600000, help="most fresh examples")
    parser.add_argument("--eval_every", type=int, default=10000, help="fresh examples")
    parser.add_argument("--workers", type=int, default=2, help="DataLoader worker processes")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hidden", default="256,128", help="hidden layer sizes (MLP 784-...-10)")
    parser.add_argument("--placements", default="",
                        help='dataecho only, e.g. "before_augment:3 after_augment:2 auto"')
    parser.add_argument("--seeds", default="1 2 3", help="seeds of --placements")
    args = parser.parse_args()
    HIDDEN[:] = [int(n) for n in args.hidden.split(",")]
    torch.set_num_threads(1)
    data, test = load_fashion_mnist(), load_test()
    step = step_seconds()
    per_example = args.ratio * step / BATCH
    print(f"training step {step * 1e3:.2f} ms; upstream {per_example * 1e6:.0f} us per example "
          f"(R = {args.ratio})", flush=True)
    results = {"step_ms": step * 1e3, "ratio": args.ratio, "hidden": HIDDEN, "runs": {}}
    if args.placements:
        compare_placements(args, per_example, data, test, results)
    for echo in (1, 2) if not args.placements else ():  # the feeders alternate for each factor
        for feeder in ("dataecho", "dataloader"):
            r = train(feeder, echo, per_example, args, data, test)
            results["runs"][f"{feeder}_e{echo}"] = r
            print(f"{feeder:10s} e = {echo}: {r}", flush=True)
    for feeder in ("dataecho", "dataloader") if not args.placements else ():
        one, two = results["runs"][f"{feeder}_e1"], results["runs"][f"{feeder}_e2"]
        if one["fresh_to_target"] and two["fresh_to_target"]:
            results[f"{feeder}_fresh_ratio_e2_vs_e1"] = two["fresh_to_target"] / one["fresh_to_target"]
            results[f"{feeder}_speedup_e2_vs_e1"] = one["seconds_to_target"] / two["seconds_to_target"]
    write_json(args.json, results)


if __name__ == "__main__":
    main()
