# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""A training loop that saves its loader and its model in one checkpoint file.

The loop is stopped half way (everything dropped, as in a killed job) and
resumed from the newest checkpoint; it ends on the same model as a loop never
stopped. Run: python3 checkpointed_loop.py [DIR]
"""

import pickle
import sys
import tempfile

import numpy as np

import dataecho

DATA = "/usr/share/datasets/fashion-mnist/"


def build():
    return (dataecho.from_idx(DATA + "train-images-idx3-ubyte.gz",
                              DATA + "train-labels-idx1-ubyte.gz")
            .prefetch(depth=64)
            .echo(factor=2, seed=1)
            .shuffle(buffer_size=1000, seed=2)
            .batch(batch_size=64, cast="float32", scale=1 / 255))


def train(directory, stop, every=50):
    """Trains until step `stop`, resuming from the newest checkpoint in `directory`."""
    with dataecho.CheckpointDir(directory, keep=2) as checkpoints:
        loader, model, step = build(), np.zeros(10), 0
        last = checkpoints.read_newest()
        if last is not None:
            loader.restore_state(last.sections["loader"])
            model = pickle.loads(last.sections["model"])
            step = last.step
        for batch in loader:
            if step == stop:
                break
            model += np.bincount(batch.labels, minlength=10) * batch.components[0].mean()
            step += 1
            if step % every == 0:
                checkpoints.write(step, {"loader": loader.save_state(),
                                         "model": pickle.dumps(model)})
        return model


if __name__ == "__main__":
    base = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()
    whole = train(base + "/whole", 300)
    train(base + "/stopped", 120)                # "killed" at step 120
    resumed = train(base + "/stopped", 300)      # resumed from step 100
    print("identical" if np.array_equal(whole, resumed) else "DIFFERENT")
    sys.exit(0 if np.array_equal(whole, resumed) else 1)
