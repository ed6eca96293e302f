#!/usr/bin/env python3
# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""Upstream throughput on the ImageNet-like set: dataecho against torchvision.

The same JPEGs go through, on each side, the ImageNet training augmentation
to the same output (a float32 batch [B, 3, 224, 224], normalized):

  dataecho     imagenet_bench --mode=throughput: TFRecord shards ->
               RandomResizedCrop straight from the JPEG (decode + crop + resize +
               flip + normalize + cast) -> Batch; on 1 CPU (--cpus=1, in the
               consumer's thread) and on all CPUs (a Map of one thread per CPU).
  dataecho.torch  the same pipeline built from Python (from_tfrecord ->
               map([encoded_image_record, RandomResizedCrop(...)]) -> batch) in a
               dataecho.torch.DataLoader with num_workers=0: on 1 CPU (the map
               inline) and on all CPUs (a map of one thread per CPU).
  torchvision  datasets.ImageFolder over the same JPEGs (extracted once from the
               shards) + transforms.RandomResizedCrop(224), RandomHorizontalFlip,
               ToTensor, Normalize in a DataLoader with 0, 1 and 2 workers
               (0 workers: pinned to 1 CPU, torch on 1 thread).

Runs alternate, round after round, in one sitting. Writes
{"dataecho_images_per_second": {"1": .., "all": ..},
 "dataecho_torch_images_per_second": {"1": .., "all": ..},
 "torchvision_images_per_second": {"0": .., "1": .., "2": ..},
 "ratio_per_core": ..}  (medians over rounds; ratio = dataecho on one CPU over
torchvision's best images/s per CPU used, workers counted as CPUs, 0 workers as
one), plus every round's figures, the ratio's range, and images per CPU-second
(process CPU time, children included) for both.

  /usr/bin/python3 benchmarks/python/vs_torchvision.py --bench=build/benchmarks/imagenet_bench \
      --json=/tmp/vs_torchvision.json
"""
import argparse
import contextlib
import json
import os
import statistics
import struct
import subprocess
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bench", default="build/benchmarks/imagenet_bench",
                   help="the imagenet_bench program")
    p.add_argument("--json", default="", help="write the results here")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--count", type=int, default=1024, help="images measured per run")
    p.add_argument("--batch_size", type=int, default=64)
    p.add_argument("--images", type=int, default=5000, help="size of the ImageNet-like set")
    return p.parse_args()


def shards_of(bench, images):
    out = subprocess.run([bench, "--mode=prepare", f"--images={images}"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)["shards"]


def extract_folder(shards):
    """The shards' JPEGs as an ImageFolder tree (<set>/folder/<label>/<n>.jpg), once."""
    root = os.path.join(os.path.dirname(shards[0]), "folder")
    if os.path.exists(os.path.join(root, "DONE")):
        return root
    n = 0
    for shard in shards:
        with open(shard, "rb") as f:
            while True:
                head = f.read(12)
                if len(head) < 12:
                    break
                (length,) = struct.unpack("<Q", head[:8])
                payload = f.read(length)
                f.read(4)  # data CRC
                assert payload[:4] == b"DEIR" and payload[5] == 1, "a JPEG image record"
                (label,) = struct.unpack("<q", payload[8:16])
                d = os.path.join(root, f"{label:03d}")
                os.makedirs(d, exist_ok=True)
                with open(os.path.join(d, f"{n:05d}.jpg"), "wb") as out:
                    out.write(payload[32:])
                n += 1
    open(os.path.join(root, "DONE"), "w").write(f"{n}\n")
    return root


def cpu_seconds():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@contextlib.contextmanager
def torch_on(one_cpu):
    """torch on one thread, and the process pinned to one CPU while `one_cpu`
    (threads started inside inherit it); the affinity is given back after."""
    import torch
    torch.set_num_threads(1)
    all_cpus = os.sched_getaffinity(0)
    if one_cpu:
        os.sched_setaffinity(0, {min(all_cpus)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, all_cpus)


def run_torchvision(root, workers, count, batch_size):
    import torch
    from torch.utils.data import DataLoader
    from torchvision import datasets, transforms

    with torch_on(one_cpu=workers == 0):
        tf = transforms.Compose([
            transforms.RandomResizedCrop(224),
            transforms.RandomHorizontalFlip(),
            transforms.ToTensor(),
            transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
        ])
        ds = datasets.ImageFolder(root, transform=tf)
        loader = DataLoader(ds, batch_size=batch_size, shuffle=True, num_workers=workers,
                            drop_last=True)
        batches = max(1, count // batch_size)
        cpu0 = cpu_seconds()
        it = iter(loader)
        first = next(it)  # warm-up: workers started
        assert first[0].shape == (batch_size, 3, 224, 224) and first[0].dtype == torch.float32
        t0 = time.perf_counter()
        for _ in range(batches):
            next(it)
        seconds = time.perf_counter() - t0
        del it  # joins (and reaps) the workers: their CPU time is counted from here
        cpu = cpu_seconds() - cpu0
        # CPU time covers the warm-up batch and what workers had prefetched too.
        made = (batches + 1 + 2 * workers) * batch_size
        return {"images_per_second": batches * batch_size / seconds,
                "images_per_cpu_second": made / cpu}


def run_dataecho_torch(shards, cpus, count, batch_size):
    """The same pipeline from Python, in a dataecho.torch.DataLoader (num_workers=0)."""
    import torch
    import dataecho
    import dataecho.torch as dt

    with torch_on(one_cpu=cpus == 1):  # before the pipeline's threads start: they inherit it
        crop = dataecho.RandomResizedCrop(flip_probability=0.5, dtype="float32",
                                          mean=[0.485, 0.456, 0.406],
                                          stddev=[0.229, 0.224, 0.225], channels_first=True,
                                          seed=1)
        parallelism = 0 if cpus == 1 else cpus

        def build(shard):
            return (dataecho.from_tfrecord(shards, cycle_length=2, shard=shard)
                    .repeat()
                    .map([dataecho.encoded_image_record, crop], parallelism=parallelism)
                    .batch(batch_size=batch_size, drop_remainder=True))

        loader = dt.DataLoader(dt.PipelineDataset(build), batch_size=None, num_workers=0)
        batches = max(1, count // batch_size)
        it = iter(loader)
        for _ in range(4):  # warm-up: threads started, the few batch buffers in turn faulted in
            x, _ = next(it)
        assert tuple(x.shape) == (batch_size, 3, 224, 224) and x.dtype == torch.float32
        del x
        cpu0 = cpu_seconds()
        t0 = time.perf_counter()
        for _ in range(batches):
            next(it)
        seconds = time.perf_counter() - t0
        cpu = cpu_seconds() - cpu0
        del it
        return {"images_per_second": batches * batch_size / seconds,
                "images_per_cpu_second": batches * batch_size / cpu}


def run_dataecho(bench, cpus, count, batch_size, images):
    threads = 0 if cpus == 1 else cpus
    out = subprocess.run([bench, "--mode=throughput", f"--cpus={cpus}", f"--threads={threads}",
                          f"--count={count}", f"--batch_size={batch_size}", f"--images={images}",
                          "--dtype=float32", "--chw"], check=True, capture_output=True,
                         text=True).stdout
    r = json.loads(out)
    assert r["batch_shape"] == f"[{batch_size}, 3, 224, 224]", r
    return r


def main():
    args = parse_args()
    shards = shards_of(args.bench, args.images)
    root = extract_folder(shards)
    ncpu = len(os.sched_getaffinity(0))
    configs = [("dataecho", "1"), ("dataecho", "all"), ("dataecho.torch", "1"),
               ("dataecho.torch", "all"), ("torchvision", "0"), ("torchvision", "1"),
               ("torchvision", "2")]
    runs = {c: [] for c in configs}
    ratios = []
    for r in range(args.rounds):
        order = configs[r % len(configs):] + configs[:r % len(configs)]  # rotate: no fixed slot
        this = {}
        for side, key in order:
            if side == "dataecho":
                res = run_dataecho(args.bench, 1 if key == "1" else ncpu, args.count,
                                   args.batch_size, args.images)
            elif side == "dataecho.torch":
                res = run_dataecho_torch(shards, 1 if key == "1" else ncpu, args.count,
                                         args.batch_size)
            else:
                res = run_torchvision(root, int(key), args.count, args.batch_size)
            this[(side, key)] = res
            runs[(side, key)].append(res)
            print(f"round {r + 1} {side:14s} {key:>3s}: {res['images_per_second']:8.1f} images/s"
                  f"  {res['images_per_cpu_second']:8.1f} images/CPU-s", file=sys.stderr)
        best_tv = max(this[("torchvision", k)]["images_per_second"] / max(1, int(k))
                      for k in ("0", "1", "2"))
        ratios.append(this[("dataecho", "1")]["images_per_second"] / best_tv)

    def med(side, key, field="images_per_second"):
        return statistics.median(x[field] for x in runs[(side, key)])

    result = {
        "dataecho_images_per_second": {"1": med("dataecho", "1"), "all": med("dataecho", "all")},
        "dataecho_torch_images_per_second": {"1": med("dataecho.torch", "1"),
                                             "all": med("dataecho.torch", "all")},
        "all_over_one": {side: statistics.median(
            runs[(side, "all")][i]["images_per_second"] / runs[(side, "1")][i]["images_per_second"]
            for i in range(args.rounds)) for side in ("dataecho", "dataecho.torch")},
        "torchvision_images_per_second": {k: med("torchvision", k) for k in ("0", "1", "2")},
        "ratio_per_core": statistics.median(ratios),
        "ratio_per_core_range": [min(ratios), max(ratios)],
        "dataecho_images_per_cpu_second": {k: med("dataecho", k, "images_per_cpu_second")
                                           for k in ("1", "all")},
        "dataecho_torch_images_per_cpu_second": {
            k: med("dataecho.torch", k, "images_per_cpu_second") for k in ("1", "all")},
        "torchvision_images_per_cpu_second": {k: med("torchvision", k, "images_per_cpu_second")
                                              for k in ("0", "1", "2")},
        "rounds": [{f"{s} {k}": runs[(s, k)][i] for s, k in configs} for i in range(args.rounds)],
        "cpus": ncpu, "count": args.count, "batch_size": args.batch_size,
        "images": args.images, "load_average": os.getloadavg(),
    }
    text = json.dumps(result, indent=2)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
