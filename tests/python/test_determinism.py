# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""Same seed, same batches: the Python pipeline against the C++ one of the same shape."""

import subprocess

import numpy as np

import dataecho

EXAMPLES = 3000


def python_pipeline(images, labels, shuffle_seed=5):
    """tests/python/reference_pipeline.cc, built from Python."""
    return (dataecho.from_idx(images, labels)
            .take(EXAMPLES)
            .prefetch(depth=64)
            .echo(factor=2.0, seed=1)
            .map([dataecho.RandomCrop(height=28, width=28, padding=2, seed=3),
                  dataecho.RandomFlip(seed=4)], parallelism=2)
            .shuffle(buffer_size=1000, seed=shuffle_seed)
            .batch(batch_size=256, cast="float16", scale=1 / 255, mean=[0.286], stddev=[0.353]))


def digests(pipeline):
    lines = []
    for b in pipeline:
        assert b.components[0].dtype == np.float16
        lines.append(" ".join([str(b.num_rows), str(b.fresh_rows)] + [
            f"{dataecho.crc32c(a):08x}"
            for a in (b.components[0], b.labels, b.source_indices, b.repeat_indices)]))
    return lines


def test_python_batches_equal_the_cpp_pipelines(fashion_mnist, build_dir):
    reference = build_dir / "tests" / "python" / "python_reference_pipeline"
    assert reference.exists(), f"{reference} missing: build the python_reference_pipeline target"
    cpp = subprocess.run([str(reference), fashion_mnist[0], fashion_mnist[1], str(EXAMPLES)],
                         check=True, capture_output=True, text=True, timeout=120).stdout.split("\n")
    py = digests(python_pipeline(*fashion_mnist[:2]))
    assert len(py) == 24  # 6000 rows: 23 full batches and one of 112
    assert py == cpp[:-1]


def test_same_seed_same_batches_other_seed_others(fashion_mnist):
    first = digests(python_pipeline(*fashion_mnist[:2]))
    assert digests(python_pipeline(*fashion_mnist[:2])) == first
    assert digests(python_pipeline(*fashion_mnist[:2], shuffle_seed=6)) != first
