# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""Runs resumable_training.py once through, then again killed with SIGKILL at random steps
`--kills` times (each time run again from its checkpoint), and compares the two: every
step's batch (CRC-32), every loss and the final weights.

    PYTHONPATH=build/python python3 examples/python/kill_and_resume.py --dir=/tmp/kr

Writes the Fashion-MNIST training set (Debian's dataset-fashion-mnist) into 4 TFRecord
shards of image records in `--dir` (image i in shard i mod 4) unless they are there.
"""

import argparse
import pathlib
import random
import signal
import subprocess
import sys
import time

import numpy as np

import dataecho

DATA = "/usr/share/datasets/fashion-mnist"
TRAINER = pathlib.Path(__file__).resolve().parent / "resumable_training.py"


def write_shards(directory, examples, shards=4):
    """Writes `examples` as TFRecord shards train-0.tfrecord... (example i to shard i % shards),
    as `dataecho convert` writes them."""
    for f in range(shards):
        dataecho.write_tfrecord(str(pathlib.Path(directory) / f"train-{f}.tfrecord"), [
            dataecho.encode_image_record(np.asarray(e.components[0]), label=e.label)
            for e in examples[f::shards]])


def steps_logged(path):
    """{step: "crc loss"} (the last line of a step wins) and the final weights' line."""
    lines, final = {}, None
    if path.exists():
        for line in path.read_text().splitlines():
            head, _, rest = line.partition(" ")
            if head == "final":
                final = rest
            elif rest:
                lines[int(head)] = rest
    return lines, final


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dir", required=True, help="directory for shards, checkpoints, logs")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7, help="seed of the kill points")
    args = parser.parse_args()
    out = pathlib.Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    if not (out / "train-3.tfrecord").exists():
        examples = list(dataecho.from_idx(f"{DATA}/train-images-idx3-ubyte.gz",
                                          f"{DATA}/train-labels-idx1-ubyte.gz"))
        write_shards(out, examples)
    for name in ("whole", "killed"):
        for suffix in (".pt", ".log"):
            (out / f"{name}{suffix}").unlink(missing_ok=True)

    def trainer(name):
        return [sys.executable, str(TRAINER), f"--data={out}/train-*.tfrecord",
                f"--checkpoint={out}/{name}.pt", f"--log={out}/{name}.log",
                f"--workers={args.workers}", f"--steps={args.steps}"]

    subprocess.run(trainer("whole"), check=True)
    rng = random.Random(args.seed)
    log = out / "killed.log"
    for _ in range(args.kills):
        target = max(steps_logged(log)[0], default=0) + rng.randint(50, 300)
        child = subprocess.Popen(trainer("killed"))
        while child.poll() is None and max(steps_logged(log)[0], default=0) < target:
            time.sleep(0.02)
        child.send_signal(signal.SIGKILL)
        child.wait()
        print(f"killed after step {max(steps_logged(log)[0], default=0)}", flush=True)
    subprocess.run(trainer("killed"), check=True)
    whole, killed = steps_logged(out / "whole.log"), steps_logged(log)
    same = whole[0] == killed[0]
    print(f"{len(whole[0])} steps: batches and losses identical: {same}; "
          f"weights identical: {whole[1] == killed[1]} (crc32 {whole[1]})")
    sys.exit(0 if same and whole[1] == killed[1] else 1)


if __name__ == "__main__":
    main()
