#!/usr/bin/env python3
"""Draws test accuracy vs fresh examples, one curve per echo factor, as SVG.

Reads the --json files of examples/fashion_mnist_trainer; runs with the same
echo factor (different seeds) are averaged point by point. Standard library
only; the SVG is written by hand.

  scripts/plot_curves.py --title "Echo before augmentation" \
      --out docs/echo_before_augment.svg results/before_augment_e*_s*.json
"""
import argparse
import json
import sys
from collections import defaultdict

COLORS = ["#1b1b1b", "#1f77b4", "#2ca02c", "#d62728", "#9467bd", "#ff7f0e", "#8c564b"]


def load(paths):
    runs = defaultdict(list)
    for path in paths:
        with open(path) as f:
            r = json.load(f)
        runs[float(r["echo"])].append(r["curve"])
    curves = {}
    for echo, cs in runs.items():
        n = min(len(c) for c in cs)
        curves[echo] = (len(cs), [(sum(c[i][0] for c in cs) / len(cs), sum(c[i][1] for c in cs) / len(cs))
                                  for i in range(n)])
    return curves


def svg(curves, title, target, y_min, y_max):
    w, h = 640, 420
    left, right, top, bottom = 70, 150, 40, 55
    pw, ph = w - left - right, h - top - bottom
    x_max = max(p[0] for _, pts in curves.values() for p in pts)
    x_step = 100000 if x_max > 300000 else 50000 if x_max > 100000 else 10000
    x_max = ((int(x_max) - 1000 + x_step - 1) // x_step) * x_step  # 600,064 -> 600k

    def px(x):
        return left + pw * x / x_max

    def py(y):
        return top + ph * (1 - (y - y_min) / (y_max - y_min))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<clipPath id="plot"><rect x="{left}" y="{top}" width="{pw}" height="{ph}"/></clipPath>',
           f'<text x="{left + pw / 2}" y="22" text-anchor="middle" font-size="14">{title}</text>']
    # Grid and ticks.
    y = y_min
    while y <= y_max + 1e-9:
        out.append(f'<line x1="{left}" y1="{py(y):.1f}" x2="{left + pw}" y2="{py(y):.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{left - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:.2f}</text>')
        y += 0.02
    x = 0
    while x <= x_max:
        out.append(f'<line x1="{px(x):.1f}" y1="{top}" x2="{px(x):.1f}" y2="{top + ph}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{px(x):.1f}" y="{top + ph + 16}" text-anchor="middle">{x // 1000}k</text>')
        x += x_step
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="black"/>')
    out.append(f'<text x="{left + pw / 2}" y="{h - 12}" text-anchor="middle">fresh examples</text>')
    out.append(f'<text x="18" y="{top + ph / 2}" text-anchor="middle" '
               f'transform="rotate(-90 18 {top + ph / 2})">test accuracy</text>')
    if target is not None:
        out.append(f'<line x1="{left}" y1="{py(target):.1f}" x2="{left + pw}" y2="{py(target):.1f}" '
                   f'stroke="gray" stroke-dasharray="5,4"/>')
        out.append(f'<text x="{left + pw - 4}" y="{py(target) - 4:.1f}" text-anchor="end" '
                   f'fill="gray">target {target}</text>')
    # Curves and legend.
    for i, echo in enumerate(sorted(curves)):
        seeds, pts = curves[echo]
        color = COLORS[i % len(COLORS)]
        path = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2" '
                   f'clip-path="url(#plot)"/>')
        ly = top + 10 + 20 * i
        out.append(f'<line x1="{left + pw + 12}" y1="{ly}" x2="{left + pw + 36}" y2="{ly}" '
                   f'stroke="{color}" stroke-width="2"/>')
        label = f"e = {echo:g}" + (f" ({seeds} seeds)" if seeds > 1 else "")
        out.append(f'<text x="{left + pw + 42}" y="{ly + 4}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--title", default="Fashion-MNIST MLP: test accuracy vs fresh examples")
    ap.add_argument("--target", type=float, default=0.85)
    ap.add_argument("--y_min", type=float, default=0.76)
    ap.add_argument("--y_max", type=float, default=0.90)
    args = ap.parse_args()
    curves = load(args.json)
    if not curves:
        sys.exit("no runs")
    with open(args.out, "w") as f:
        f.write(svg(curves, args.title, args.target, args.y_min, args.y_max))


if __name__ == "__main__":
    main()
