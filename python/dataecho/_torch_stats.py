# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""The stats of a DataLoader's worker pipelines as one pipeline's (dataecho.torch).

Every worker runs the same pipeline on its share; ``combine_stats`` folds their
``Pipeline.stats()`` rows into one list of the same shape, so that
``dataecho.format_stats`` prints one table and one verdict for the whole loader:

- counts (``elements``, ``bytes``, ``fresh``, ``repeats``, ...: the figures in
  ``COUNTS``) are summed over the workers;
- times (``*_s``) are averaged: the workers run side by side, so the mean is
  each one's share of the wall clock, the scale of the training loop's own time;
- every other figure (ratios, levels, settings) is averaged, weighted by the
  elements each worker's stage emitted (``realized_factor`` by its fresh items);
- ``threads`` is one worker's; a figure that names the worker (``rank``, ``epoch``)
  is kept where the workers agree and left out where they differ; auto echo's
  ``decisions`` are kept, each prefixed by its worker.

    rows = combine_stats(dataset.stats(), loop={"pulls": 120, "step_s": 3.1, "in_next_s": 0.4})
    print(dataecho.format_stats(rows))
"""

import collections

# Figures that count things (summed over the workers).
COUNTS = frozenset({
    "elements", "bytes", "fresh", "fresh_rows", "repeats", "rows", "buffer_allocations",
    "cached", "cached_bytes", "dropped", "evicted", "floor_waits", "gate_waits", "opened",
    "replayed", "skipped_corrupt", "stalls", "epochs_started", "buffered", "bytes_held",
    "peak_bytes_held", "queued", "files", "consumer_pulls"})
# Figures that name the worker's place (kept only where every worker has the same).
PLACES = frozenset({"rank", "epoch"})


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _combine_rows(rows, workers):
    out = {"stage": rows[0]["stage"]}
    keys = list(dict.fromkeys(k for r in rows for k in r))
    for key in keys:
        if key == "stage":
            continue
        if key == "decisions":
            out[key] = [f"worker {w}: {d}" for w, r in zip(workers, rows)
                        for d in r.get(key, [])]
            continue
        pairs = [(r[key], r) for r in rows if _number(r.get(key))]
        if not pairs:
            continue
        values = [v for v, _ in pairs]
        if key in COUNTS:
            out[key] = sum(values)
        elif key == "threads":
            out[key] = max(values)
        elif key in PLACES:
            if len(set(values)) == 1:
                out[key] = values[0]
        elif key.endswith("_s"):
            out[key] = sum(values) / len(rows)
        else:
            by = "fresh" if key == "realized_factor" else "elements"
            weights = [r.get(by) if _number(r.get(by)) else 0 for _, r in pairs]
            total = sum(weights)
            out[key] = (sum(v * w for v, w in zip(values, weights)) / total if total > 0
                        else sum(values) / len(values))
    return out


def combine_stats(reports, loop=None):
    """One list of stage dicts (the shape of ``Pipeline.stats()``) from
    ``PipelineDataset.stats()``'s per-process reports. The reports whose pipelines
    have the most common shape are combined (all of them, unless a worker's differs);
    the top row gets ``workers`` (how many were combined). ``loop``: the training
    loop's own pulls, as ``{"pulls", "step_s", "in_next_s", "first_s"}`` measured in the main
    process; it replaces the top row's ``consumer_*`` figures (which, in a worker,
    measure torch's worker loop), so that the verdict is about the training loop."""
    reports = [r for r in reports if r.get("stages")]
    if not reports:
        return []
    shapes = collections.Counter(tuple(s.get("stage") for s in r["stages"]) for r in reports)
    shape = shapes.most_common(1)[0][0]
    group = [r for r in reports if tuple(s.get("stage") for s in r["stages"]) == shape]
    workers = [r.get("worker") for r in group]
    out = [_combine_rows([r["stages"][i] for r in group], workers) for i in range(len(shape))]
    out[-1]["workers"] = len(group)
    if loop is not None and loop.get("pulls", 0) > 0:
        out[-1]["consumer_pulls"] = loop["pulls"]
        out[-1]["consumer_step_s"] = loop["step_s"]
        out[-1]["consumer_in_next_s"] = loop["in_next_s"]
        out[-1]["consumer_first_s"] = loop.get("first_s", 0.0)
    return out
