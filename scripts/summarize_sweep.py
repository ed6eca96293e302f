#!/usr/bin/env python3
"""Summarizes the JSON results of scripts/echo_sweep.sh as Markdown tables.

For each insertion point and echo factor: fresh examples to the target per
seed, their mean and the ratio to the e=1 baseline's mean, and the final test
accuracy (mean over seeds, min-max). With --median, also the median over seeds
and its ratio to the baseline's median. With --bootstrap, also a 95 % percentile
bootstrap interval of each ratio of means (seeds resampled with replacement,
paired: a resample takes the baseline and the echoed run of the same seeds).

  scripts/summarize_sweep.py results/*.json
  scripts/summarize_sweep.py --median --bootstrap results-10seeds/*.json
"""
import json
import random
import statistics
import sys
from collections import defaultdict


def main():
    args = sys.argv[1:]
    with_median = "--median" in args
    with_bootstrap = "--bootstrap" in args
    paths = [a for a in args if a not in ("--median", "--bootstrap")]
    runs = defaultdict(dict)  # (insert, echo) -> seed -> result
    for path in paths:
        with open(path) as f:
            r = json.load(f)
        seed = int(path.rsplit("_s", 1)[1].split(".")[0])
        runs[(r["insert"], float(r["echo"]))][seed] = r
    base = runs.get(("before_augment", 1.0), {})
    base_fresh = [r["fresh_examples_to_target"] for r in base.values() if r["fresh_examples_to_target"]]
    base_mean = statistics.mean(base_fresh) if base_fresh else None
    base_median = statistics.median(base_fresh) if base_fresh else None
    inserts = ["before_augment", "after_augment", "batch"]
    intervals = []
    median_head = " median | vs e=1 (median) |" if with_median else ""
    print("| insertion | e | seeds | fresh examples to 0.85 (per seed) | mean | vs e=1 |"
          f"{median_head} final accuracy mean (min-max) |")
    print("|---|---|---|---|---|---|" + ("---|---|" if with_median else "") + "---|")
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
            median_cells = ""
            if with_median:
                median = statistics.median(reached) if len(reached) == len(fresh) else None
                median_ratio = f"{median / base_median:.2f}x" if median and base_median else "-"
                median_cells = f" {f'{median / 1000:.0f}k' if median else '-'} | {median_ratio} |"
            acc = [rs[s]["final_test_accuracy"] for s in seeds]
            per_seed = ", ".join(f"{f // 1000}k" if f is not None else "not reached" for f in fresh)
            label = insert if e != 1.0 else "none (baseline)"
            if with_bootstrap and e != 1.0 and mean:
                intervals.append(f"{label} e={e:g}: {bootstrap_ratio(base, rs)}")
            print(f"| {label} | {e:g} | {len(seeds)} | {per_seed} | "
                  f"{f'{mean / 1000:.0f}k' if mean else '-'} | {ratio} |{median_cells} "
                  f"{statistics.mean(acc):.4f} ({min(acc):.4f}-{max(acc):.4f}) |")
    if intervals:
        print()
        print("Ratio of means to the baseline's, 95 % bootstrap interval (paired by seed):")
        for line in intervals:
            print(f"- {line}")


def bootstrap_ratio(base, runs, resamples=20000):
    """95 % percentile interval of mean(runs) / mean(base) over seeds in both."""
    seeds = sorted(s for s in runs if s in base and runs[s]["fresh_examples_to_target"]
                   and base[s]["fresh_examples_to_target"])
    if len(seeds) < 2:
        return "-"
    rng = random.Random(1)
    ratios = []
    for _ in range(resamples):
        pick = [rng.choice(seeds) for _ in seeds]
        ratios.append(sum(runs[s]["fresh_examples_to_target"] for s in pick) /
                      sum(base[s]["fresh_examples_to_target"] for s in pick))
    ratios.sort()
    return (f"{ratios[int(0.025 * resamples)]:.2f}-{ratios[int(0.975 * resamples)]:.2f} "
            f"({len(seeds)} seeds)")


if __name__ == "__main__":
    main()
