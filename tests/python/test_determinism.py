# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""Same seed, same batches: the Python pipeline against the C++ one of the same shape."""

import subprocess

import numpy as np

import dataecho

EXAMPLES = 3000


def python_pipeline(images, labels, shuffle_seed=5, examples=EXAMPLES, epochs=1):
    """tests/python/reference_pipeline.cc, built from Python."""
    return (dataecho.from_idx(images, labels)
            .take(examples)
            .repeat(epochs)
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
        lines.append(" ".join([str(b.num_rows), str(b.fresh_rows), str(b.epoch)] + [
            f"{dataecho.crc32c(a):08x}"
            for a in (b.components[0], b.labels, b.source_indices, b.repeat_indices)]))
    return lines


def cpp_digests(build_dir, fashion_mnist, *args):
    reference = build_dir / "tests" / "python" / "python_reference_pipeline"
    assert reference.exists(), f"{reference} missing: build the python_reference_pipeline target"
    out = subprocess.run([str(reference), fashion_mnist[0], fashion_mnist[1]] + [str(a) for a in args],
                         check=True, capture_output=True, text=True, timeout=120).stdout
    return out.split("\n")[:-1]


def test_python_batches_equal_the_cpp_pipelines(fashion_mnist, build_dir):
    py = digests(python_pipeline(*fashion_mnist[:2]))
    assert len(py) == 24  # 6000 rows: 23 full batches and one of 112
    assert py == cpp_digests(build_dir, fashion_mnist, EXAMPLES)


def test_epochs_equal_the_cpp_pipelines(fashion_mnist, build_dir):
    # Two epochs of 600 examples, echoed twice: 2400 rows, 1200 fresh; the shuffle buffer
    # (1000) mixes the end of epoch 0 into the batches of epoch 1 (a batch's epoch is its
    # newest row's).
    py = digests(python_pipeline(*fashion_mnist[:2], examples=600, epochs=2))
    assert sum(int(line.split()[0]) for line in py) == 2400
    assert sum(int(line.split()[1]) for line in py) == 1200
    assert py[-1].split()[2] == "1"
    assert py == cpp_digests(build_dir, fashion_mnist, 600, 2)


def test_same_seed_same_batches_other_seed_others(fashion_mnist):
    first = digests(python_pipeline(*fashion_mnist[:2]))
    assert digests(python_pipeline(*fashion_mnist[:2])) == first
    assert digests(python_pipeline(*fashion_mnist[:2], shuffle_seed=6)) != first
