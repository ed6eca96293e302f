#!/usr/bin/env python3
"""Summarizes the JSON results of scripts/echo_sweep.sh as Markdown tables.

For each insertion point and echo factor: fresh examples to the target per
seed, their mean and the ratio to the e=1 baseline's mean, and the final test
accuracy (mean over seeds, min-max).

  scripts/summarize_sweep.py results/*.json
"""
import json
import statistics
import sys
from collections import defaultdict


def main():
    runs = defaultdict(dict)  # (insert, echo) -> seed -> result
    for path in sys.argv[1:]:
        with open(path) as f:
            r = json.load(f)
        seed = path.rsplit("_s", 1)[1].split(".")[0]
        runs[(r["insert"], float(r["echo"]))][seed] = r
    base = runs.get(("before_augment", 1.0), {})
    base_fresh = [r["fresh_examples_to_target"] for r in base.values() if r["fresh_examples_to_target"]]
    base_mean = statistics.mean(base_fresh) if base_fresh else None
    inserts = ["before_augment", "after_augment", "batch"]
    print("| insertion | e | seeds | fresh examples to 0.85 (per seed) | mean | vs e=1 | final accuracy mean (min-max) |")
    print("|---|---|---|---|---|---|---|")
    for insert in inserts:
        echoes = sorted({e for (i, e) in runs if i == insert and e != 1.0})
        if insert == inserts[0] and base:
            echoes = [1.0] + echoes  # the e=1 baseline is the same run for every insertion point
        for e in echoes:
            rs = runs.get((insert, e)) or (base if e == 1.0 else {})
            if not rs:
                continue
            seeds = sorted(rs)
            fresh = [rs[s]["fresh_examples_to_target"] for s in seeds]
            reached = [f for f in fresh if f is not None]
            mean = statistics.mean(reached) if len(reached) == len(fresh) else None
            ratio = f"{mean / base_mean:.2f}x" if mean and base_mean else "-"
            acc = [rs[s]["final_test_accuracy"] for s in seeds]
            per_seed = ", ".join(f"{f // 1000}k" if f is not None else "not reached" for f in fresh)
            label = insert if e != 1.0 else "none (baseline)"
            print(f"| {label} | {e:g} | {len(seeds)} | {per_seed} | "
                  f"{f'{mean / 1000:.0f}k' if mean else '-'} | {ratio} | "
                  f"{statistics.mean(acc):.4f} ({min(acc):.4f}-{max(acc):.4f}) |")


if __name__ == "__main__":
    main()
