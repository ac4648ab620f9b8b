#!/usr/bin/env python3
"""Markdown table of interleaved rounds' step times, per model and configuration.

Usage: rounds-table.py ROWS NAME=LABEL [NAME=LABEL ...]

ROWS holds one line per round and configuration: "MODEL NAME MS_PER_STEP". Each
NAME=LABEL is a row of the table, in that order; the first is the baseline of the ratio
column. Used by run-workers-tune-bench.sh and run-ranks-bench.sh.
"""
import statistics
import sys


def main() -> int:
    if len(sys.argv) < 3 or any("=" not in arg for arg in sys.argv[2:]):
        print(__doc__, file=sys.stderr)
        return 2
    rows = [line.split() for line in open(sys.argv[1]) if line.strip()]
    names = dict(arg.split("=", 1) for arg in sys.argv[2:])
    baseline = next(iter(names))
    print(f"| model | configuration | median ms/step | min..max | ratio to {names[baseline]} |")
    print("|---|---|---|---|---|")
    for model in dict.fromkeys(r[0] for r in rows):
        times = {v: [float(r[2]) for r in rows if r[0] == model and r[1] == v] for v in names}
        base = statistics.median(times[baseline])
        for v, label in names.items():
            t = times[v]
            if not t:
                print(f"| {model} | {label} | no rounds | | |")
                continue
            m = statistics.median(t)
            print(f"| {model} | {label} | {m:.2f} | {min(t):.2f}..{max(t):.2f} | {m / base:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
