# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""dataecho.CheckpointDir, and the IDX source's state (from_idx saves by reference)."""

import gzip
import os
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

import dataecho

from conftest import ROOT, run_python


def test_a_loop_saves_its_loader_and_model_in_one_file_and_resumes(tmp_path, fashion_mnist):
    def build():
        return (dataecho.from_idx(*fashion_mnist[:2]).echo(factor=2, seed=1)
                .shuffle(buffer_size=500, seed=2).batch(batch_size=32))

    whole = [b.components[0].copy() for _, b in zip(range(40), build())]
    with dataecho.CheckpointDir(str(tmp_path / "ck"), keep=2) as ck:
        assert ck.read_newest() is None
        p = build()
        for step in range(1, 21):
            next(p)
            if step % 10 == 0:
                ck.write(step, {"loader": p.save_state(),
                                "model": pickle.dumps({"w": np.full(3, step)})})
    assert sorted(os.listdir(tmp_path / "ck")) == ["LOCK", "ckpt-000000000010.dtc",
                                                   "ckpt-000000000020.dtc"]
    with dataecho.CheckpointDir(str(tmp_path / "ck"), read_only=True) as ck:
        last = ck.read_newest()
    assert last.step == 20 and last.path.endswith("ckpt-000000000020.dtc")
    assert list(last.sections) == ["loader", "model"]
    assert pickle.loads(last.sections["model"])["w"].tolist() == [20, 20, 20]
    q = build()
    q.restore_state(last.sections["loader"])
    rest = [b.components[0].copy() for _, b in zip(range(20), q)]
    for a, b in zip(whole[20:], rest):
        np.testing.assert_array_equal(a, b)


def test_a_second_writer_is_refused_naming_the_first(tmp_path):
    first = dataecho.CheckpointDir(str(tmp_path))
    with pytest.raises(dataecho.FailedPreconditionError, match=f"pid {os.getpid()}"):
        dataecho.CheckpointDir(str(tmp_path))
    # Another process, too.
    code = (f"import dataecho\ntry:\n    dataecho.CheckpointDir({str(tmp_path)!r})\n"
            "except dataecho.FailedPreconditionError as e:\n    print('refused:', e)\n")
    out = run_python(code)
    assert "refused:" in out.stdout and "another writer" in out.stdout, out.stderr
    first.close()
    dataecho.CheckpointDir(str(tmp_path)).close()


def test_bad_paths_values_and_damaged_files(tmp_path):
    (tmp_path / "file").write_bytes(b"x")
    with pytest.raises(dataecho.FailedPreconditionError, match="is not a directory"):
        dataecho.CheckpointDir(str(tmp_path / "file"))
    with pytest.raises(dataecho.InvalidArgumentError, match="keep must be >= 1"):
        dataecho.CheckpointDir(str(tmp_path / "d"), keep=0)
    with dataecho.CheckpointDir(str(tmp_path / "d")) as ck:
        with pytest.raises(TypeError, match="bytes-like"):
            ck.write(1, {"a": 3})
        with pytest.raises(TypeError, match="must be str"):
            ck.write(1, {b"a": b"x"})
        ck.write(1, {"a": bytearray(b"one"), "b": memoryview(b"two"), "c": np.arange(3)})
        os.mkfifo(tmp_path / "d" / "ckpt-000000000009.dtc")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            last = ck.read_newest()
        assert last.step == 1 and last.sections["b"] == b"two"
        assert len(last.sections["c"]) == 3 * np.arange(3).itemsize
        assert any("not a regular file" in str(w.message) for w in caught)
    with pytest.raises(ValueError, match="closed"):
        ck.write(2, {})


def test_a_background_write_raises_its_error_at_the_next_call(tmp_path):
    import shutil
    ck = dataecho.CheckpointDir(str(tmp_path / "d"), background=True)
    ck.write(1, {"a": b"1"})
    ck.flush()
    shutil.rmtree(tmp_path / "d")
    ck.write(2, {"a": b"2"})
    with pytest.raises(dataecho.UnavailableError, match="ckpt-000000000002"):
        ck.flush()
    ck.close()


def _write_idx(path, array):
    header = bytes([0, 0, 8, array.ndim]) + b"".join(
        int(d).to_bytes(4, "big") for d in array.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + array.astype(np.uint8).tobytes())


def test_from_idx_saves_by_reference_and_a_changed_file_is_data_loss(tmp_path):
    images = np.arange(50 * 4 * 4, dtype=np.uint32).reshape(50, 4, 4) % 251
    labels = np.arange(50) % 10
    img, lbl = str(tmp_path / "img.gz"), str(tmp_path / "lbl.gz")
    _write_idx(img, images)
    _write_idx(lbl, labels)

    def build():
        return dataecho.from_idx(img, lbl).shuffle(buffer_size=16, seed=3)

    whole = [(e.label, e.components[0].tobytes()) for e in build()]
    p = build()
    first = [(e.label, e.components[0].tobytes()) for _, e in zip(range(20), p)]
    state = p.save_state()
    assert len(state) < 16 * 40 + 200  # references, not pixels (16 buffered rows of 16 bytes)
    q = build()
    q.restore_state(state)
    assert first + [(e.label, e.components[0].tobytes()) for e in q] == whole
    # Every label shifted by one: the files changed under the state.
    _write_idx(lbl, (labels + 1) % 10)
    with pytest.raises(dataecho.DataLossError, match="lbl.gz"):
        build().restore_state(state)


def test_the_documented_loop_resumes_identically(tmp_path, fashion_mnist):
    example = ROOT / "examples" / "python" / "checkpointed_loop.py"  # docs/checkpoint.md shows it
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, str(example), str(tmp_path)], env=env, timeout=300,
                         capture_output=True, text=True)
    assert out.returncode == 0 and "identical" in out.stdout, out.stdout + out.stderr
