# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""Fixtures of the dataecho Python tests (run them with scripts/pytest.sh).

The package is imported from the build tree (PYTHONPATH=build/python, which
scripts/pytest.sh sets); DATAECHO_BUILD_DIR names the build directory (default:
build/ at the top of the checkout), where the C++ reference program is.
"""

import os
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD_DIR = pathlib.Path(os.environ.get("DATAECHO_BUILD_DIR", ROOT / "build"))
FASHION_MNIST = pathlib.Path("/usr/share/datasets/fashion-mnist")  # dataset-fashion-mnist


@pytest.fixture(scope="session")
def build_dir():
    return BUILD_DIR


@pytest.fixture(scope="session")
def fashion_mnist():
    """(train images, train labels, test images, test labels): the Debian package's files."""
    files = [FASHION_MNIST / f for f in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                                         "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")]
    for f in files:
        assert f.exists(), f"{f} missing: scripts/setup.sh installs dataset-fashion-mnist"
    return [str(f) for f in files]


@pytest.fixture
def small_arrays():
    """64 images 4x4x1 (pixel values = row index) and labels = row % 10."""
    images = np.repeat(np.arange(64, dtype=np.uint8), 16).reshape(64, 4, 4, 1)
    labels = np.arange(64) % 10
    return images, labels


class Boom(Exception):
    """An exception of the tests' own: a pipeline raises it as the test's function raised it."""


def raising_at(index, result):
    """A map or filter function: raises Boom("at <index>") on the element of source index
    `index`, returns result(element) for the others."""
    def fn(element):
        if element.source_index == index:
            raise Boom(f"at {index}")
        return result(element)
    return fn


def expect_raised_at(pipeline, index):
    """Checks that `pipeline` (of source indices 0, 1, ... in order) yields the elements
    before `index`, then raises the Boom of raising_at(index, ...), and again (sticky)."""
    assert [next(pipeline).source_index for _ in range(index)] == list(range(index))
    with pytest.raises(Boom, match=f"at {index}"):
        next(pipeline)
    with pytest.raises(Boom):
        next(pipeline)


def auto_echo_pipeline(images, labels):
    """Batches of 8 behind a 2 ms-per-row throttle (R = 4 against a 4 ms step), echoed
    with placement="auto" and a planner that learns from the loss after 16 rows."""
    import dataecho
    return (dataecho.from_arrays(images, labels)
            .throttle(latency=0.002)
            .prefetch(depth=32)
            .echoed_batches(None, placement="auto",
                            auto_placement=dataecho.AutoPlacementOptions(
                                max_factor=6, decide_every=4, loss_min_rows=16),
                            shuffle={"buffer_size": 32, "seed": 2}, batch={"batch_size": 8},
                            prefetch={"depth": 2}))


def run_python(code, timeout=60, **kwargs):
    """Runs `code` in a fresh interpreter with this one's sys.path; returns the process."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, "-c", code], env=env, timeout=timeout,
                          capture_output=True, text=True, **kwargs)


def task_count():
    """Threads of this process (the pipeline's C++ threads included)."""
    return len(os.listdir("/proc/self/task"))


def settled_task_count(timeout=5.0):
    """task_count() once it stopped changing: a thread an earlier test joined
    can stay in /proc/self/task for a moment after join() returned."""
    deadline = time.monotonic() + timeout
    last = task_count()
    while time.monotonic() < deadline:
        time.sleep(0.02)
        now = task_count()
        if now == last:
            return now
        last = now
    return last
