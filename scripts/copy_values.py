#!/usr/bin/env python3
"""The gain of echo per placement and factor (AutoPlacementOptions'
copy_gains_before / _after / _batch, include/dataecho/echo_planner.h) from the
fresh examples the trainer needed to reach its target: G_p(e) = F_1 / F_e on
the means over seeds, with its spread (F_1 / F_e of each seed against that
seed's own F_1). Also the linear fit (copy_value_*):

With e copies per fresh example worth v of a fresh one each, a step of B rows
is worth B (1 + (e - 1) v) / e fresh examples, so the fresh examples to a
target at factor e, F_e, satisfy F_e (1 + (e - 1) v) = F_1. Per placement,
with x = e - 1 and y = F_1 / F_e - 1 on the means over seeds, v is the least
squares slope through the origin, sum(x y) / sum(x x), clamped to [0, 1].

Input: the trainer's --json files named INSERT_eE_sS.json (INSERT one of
before_augment, after_augment, batch; E = 1 is the baseline, any INSERT).

  scripts/copy_values.py /tmp/copy_values/*.json
"""
import json
import os
import statistics
import sys
from collections import defaultdict


def main():
    runs = defaultdict(dict)  # (insert, e) -> seed -> fresh examples to target
    for path in sys.argv[1:]:
        name = os.path.basename(path)[: -len(".json")]
        insert, e, seed = name.rsplit("_", 2)
        with open(path) as f:
            r = json.load(f)
        if r["fresh_examples_to_target"] is None:
            sys.exit(f"{path}: did not reach the target; raise --fresh_budget")
        e = float(e[1:])
        runs[("baseline" if e == 1 else insert, e)][int(seed[1:])] = r["fresh_examples_to_target"]
    if ("baseline", 1.0) not in runs:
        sys.exit("no e = 1 run")
    f1 = statistics.mean(runs[("baseline", 1.0)].values())
    print("| placement | e | seeds | fresh examples to target (per seed) | mean | F_1 / F_e |")
    print("| --- | --- | --- | --- | --- | --- |")
    fits = {}
    gains = defaultdict(list)  # insert -> [(e, G, lowest, highest)]
    for (insert, e), seeds in sorted(runs.items(), key=lambda kv: (kv[0][0] != "baseline", kv[0])):
        mean = statistics.mean(seeds.values())
        per_seed = ", ".join(f"{seeds[s] / 1000:.0f}k" for s in sorted(seeds))
        print(f"| {insert} | {e:g} | {len(seeds)} | {per_seed} | {mean / 1000:.0f}k | "
              f"{f1 / mean:.2f} |")
        if insert != "baseline":
            base = runs[("baseline", 1.0)]
            per = [base[s] / seeds[s] for s in seeds if s in base]
            gains[insert].append((e, f1 / mean, min(per, default=f1 / mean),
                                  max(per, default=f1 / mean)))
            sxy, sxx = fits.get(insert, (0.0, 0.0))
            fits[insert] = (sxy + (e - 1) * (f1 / mean - 1), sxx + (e - 1) ** 2)
    print()
    for insert, gs in sorted(gains.items()):
        name = {"before_augment": "before", "after_augment": "after"}.get(insert, insert)
        values = ", ".join(f"{g:.2f}" for _, g, _, _ in sorted(gs))
        spread = ", ".join(f"e = {e:g}: {lo:.2f}-{hi:.2f}" for e, _, lo, hi in sorted(gs))
        print(f"copy_gains_{name} = [{values}]  (G(e) for e = "
              f"{', '.join(f'{e:g}' for e, _, _, _ in sorted(gs))}; per seed {spread})")
    print()
    for insert, (sxy, sxx) in sorted(fits.items()):
        raw = sxy / sxx
        print(f"v_{insert} = {min(1.0, max(0.0, raw)):.2f} (unclamped {raw:.3f})")


if __name__ == "__main__":
    main()
