#!/usr/bin/env python3
"""Which statistic ranks interleaved rounds: each config against a reference over the same rounds.

Usage: rounds-statistics.py ROUNDS.tsv [REFERENCE_INDEX] [WINDOW ...]

ROUNDS.tsv is what `bench_tuning_truth --dump-rounds` writes (the configs' labels, then
one line of step seconds per round). Prints, per config against the reference (default:
the config with the lowest mean step time): median / median (the truth's statistic until
session 15), mean / mean (what a training run pays), the paired median ratio (the tune's
sign test until session 15) and exp(mean paired log ratio) (the tune's sign-flip test
since); then, for windows of WINDOW consecutive rounds (default 8 12 20 30: what a tune's
rounds see), how often the paired median and the mean log ratio call the config faster
than the reference, and how often the mean of the window does: whether short runs of
rounds see another machine state than the long run (docs/TUNER-MEASUREMENT.md).
"""
import math
import statistics
import sys


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    lines = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
    labels, rows = lines[0], [[float(x) for x in line] for line in lines[1:]]
    columns = [list(c) for c in zip(*rows)]
    if len(sys.argv) > 2:
        ref = int(sys.argv[2])
    else:
        ref = min(range(len(labels)), key=lambda j: statistics.mean(columns[j]))
    windows = [int(w) for w in sys.argv[3:]] or [8, 12, 20, 30]
    base = columns[ref]
    print(f"{len(rows)} rounds; reference {labels[ref]}")
    print("| config | median ms | mean ms | median / median | mean / mean | paired median | exp(mean log ratio) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for j, label in enumerate(labels):
        c = columns[j]
        logs = [math.log(a / b) for a, b in zip(c, base)]
        print(f"| {label} | {statistics.median(c) * 1e3:.2f} | {statistics.mean(c) * 1e3:.2f} | "
              f"{statistics.median(c) / statistics.median(base):.3f} | "
              f"{statistics.mean(c) / statistics.mean(base):.3f} | "
              f"{math.exp(statistics.median(logs)):.3f} | {math.exp(statistics.mean(logs)):.3f} |")
    print("\nwindows of consecutive rounds: share of windows where the config reads faster than the"
          " reference by the paired median / by the mean log ratio / by the window's mean")
    for j, label in enumerate(labels):
        if j == ref:
            continue
        c = columns[j]
        for k in windows:
            if k > len(rows):
                continue
            starts = range(len(rows) - k + 1)
            by_median = by_log = by_mean = 0
            for s in starts:
                logs = [math.log(c[i] / base[i]) for i in range(s, s + k)]
                by_median += statistics.median(logs) < 0
                by_log += statistics.mean(logs) < 0
                by_mean += sum(c[s:s + k]) < sum(base[s:s + k])
            n = len(starts)
            print(f"  {label[:60]:60s} {k:3d} rounds: {by_median / n:.2f} / {by_log / n:.2f} / {by_mean / n:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
