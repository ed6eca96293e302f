# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""dataecho.trace: the pipeline timeline as Chrome trace-event JSON."""

import json

import pytest

import dataecho


def test_a_traced_run_names_its_threads_and_stages(tmp_path, small_arrays):
    path = tmp_path / "timeline.json"
    with dataecho.trace(path):
        p = (dataecho.from_arrays(*small_arrays).map(lambda e: e, parallelism=2)
             .prefetch(depth=8).echo(factor=2, seed=1).shuffle(buffer_size=16, seed=2)
             .batch(batch_size=8))
        assert sum(1 for _ in p) == 16
        p.save_state()
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    threads = {e["args"]["name"] for e in events if e["ph"] == "M"}
    names = {e["name"] for e in events if e["ph"] != "M"}
    assert {"prefetch", "map worker"} <= threads
    # (Python pulls through its own hand-off, not Pipeline::Next: its waits show the stages.)
    assert {"map call", "prefetch queue", "echo factor"} <= names
    assert any(n.startswith("wait on ") for n in names)
    assert all(e["dur"] >= 0 for e in events if e["ph"] == "X")
    assert trace["otherData"]["dropped_events"] == 0


def test_one_trace_at_a_time_and_a_bad_path_is_an_error(tmp_path):
    with pytest.raises(dataecho.FailedPreconditionError):
        dataecho.stop_trace()
    with pytest.raises(dataecho.UnavailableError, match="no/such"):
        dataecho.start_trace(str(tmp_path / "no" / "such" / "t.json"))
    with dataecho.trace(tmp_path / "a.json", max_events=10):
        with pytest.raises(dataecho.FailedPreconditionError, match="a.json"):
            dataecho.start_trace(str(tmp_path / "b.json"))
    assert json.loads((tmp_path / "a.json").read_text())["otherData"]["max_events"] == 10
