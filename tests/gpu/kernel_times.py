#!/usr/bin/env python3
"""Kernel times per training step from an Nsight Compute CSV.

    ncu --clock-control none --metrics gpu__time_duration.sum --csv --launch-skip 400 --launch-count 200 \\
        scalelab train --device cuda --cuda-graphs off --model cnn --batch-size 1024 --max-steps 20 \\
        --epochs 1 --no-eval --quiet > ncu.csv
    tests/gpu/kernel_times.py ncu.csv

Sums gpu__time_duration.sum per kernel name over the profiled launches and prints the kernels in
order of time, per step, with their share of the total. --steps says how many training steps the
launches cover; by default it is estimated as the most common launch count among the kernels
(most run once per step; the first and last step may be cut).
"""
import argparse
import collections
import csv
import sys

def fail(message):
    """Bad input: one line on stderr, exit 2."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


SCALE_TO_NS = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", help="ncu --csv output with the metric gpu__time_duration.sum")
    ap.add_argument("--steps", type=float, default=0, help="training steps the profiled launches cover (0: estimate)")
    ap.add_argument("--top", type=int, default=16, help="kernels to list")
    a = ap.parse_args()
    try:
        rows = [r for r in csv.reader(open(a.csv)) if len(r) > 10]
    except OSError as e:
        fail(f"{a.csv}: {e.strerror}; give the CSV that ncu --csv wrote")
    if not rows or "Kernel Name" not in rows[0]:
        fail(f"{a.csv}: no ncu CSV header (Kernel Name, Metric Unit, Metric Value); run ncu with --csv")
    head = rows[0]
    name, unit, value = head.index("Kernel Name"), head.index("Metric Unit"), head.index("Metric Value")
    total = collections.defaultdict(float)
    count = collections.Counter()
    for r in rows[1:]:
        if r[unit] not in SCALE_TO_NS:
            fail(f"{a.csv}: unknown time unit {r[unit]!r}; profile gpu__time_duration.sum")
        ns = float(r[value].replace(",", "")) * SCALE_TO_NS[r[unit]]
        short = r[name].split("(")[0][:90]
        total[short] += ns
        count[short] += 1
    if not total:
        fail(f"{a.csv}: no kernel rows")
    whole = sum(total.values())
    how = "given"
    if a.steps <= 0:
        a.steps = collections.Counter(count.values()).most_common(1)[0][0]
        how = "estimated: the most common launch count"
    print(f"{sum(count.values())} launches, {whole / 1e6:.3f} ms in all, {whole / 1e6 / a.steps:.3f} ms per step "
          f"({a.steps:g} steps, {how})")
    print(f"{'ms/step':>9} {'share':>6} {'launches':>8}  kernel")
    for k, ns in sorted(total.items(), key=lambda kv: -kv[1])[:a.top]:
        print(f"{ns / 1e6 / a.steps:9.3f} {100 * ns / whole:5.1f}% {count[k]:8d}  {k}")


if __name__ == "__main__":
    main()
