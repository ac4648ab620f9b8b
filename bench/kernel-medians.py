#!/usr/bin/env python3
"""Per-kernel medians and minima over the training steps of tunescope traces.

usage: bench/kernel-medians.py TRACE.json [TRACE.json ...]

On a shared, loaded machine a step's wall time and a kernel's mean swing with what else
runs; the median of each kernel over the steps (and its minimum, the closest to an
unloaded run) moves much less. For each trace (Chrome JSON written by `tunescope profile
--trace`) this prints the median and minimum step, the number of kernels per step, and per
kernel name the sum over its calls in one step of each call's median (and minimum) over
the steps, largest first. The k-th kernel of every step is taken as the same call, so all
steps must run the same kernels (one config, no eval steps inside the traced steps).
"""
import collections
import json
import statistics
import sys


def steps_of(path):
    with open(path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    iterations = sorted((e for e in events if e.get("cat") == "iteration"), key=lambda e: e["ts"])
    kernels = sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    steps = [[k for k in kernels if it["ts"] <= k["ts"] <= it["ts"] + it["dur"]] for it in iterations]
    if not steps or len({len(s) for s in steps}) != 1:
        sys.exit(f"kernel-medians: {path}: the steps run different kernel counts "
                 f"({sorted({len(s) for s in steps})}); one config per trace")
    return iterations, steps


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        iterations, steps = steps_of(path)
        by_name = collections.defaultdict(lambda: [0.0, 0.0])
        for k in range(len(steps[0])):
            durations = [step[k]["dur"] for step in steps]
            entry = by_name[steps[0][k]["name"]]
            entry[0] += statistics.median(durations)
            entry[1] += min(durations)
        step_ms = [it["dur"] / 1000 for it in iterations]
        print(f"{path}: {len(steps)} steps, median step {statistics.median(step_ms):.2f} ms "
              f"(min {min(step_ms):.2f}), {len(steps[0])} kernels per step, kernel medians sum "
              f"{sum(v[0] for v in by_name.values()) / 1000:.2f} ms")
        print(f"  {'kernel':48s} {'median ms':>10s} {'min ms':>8s}")
        for name, (median, low) in sorted(by_name.items(), key=lambda item: -item[1][0]):
            print(f"  {name:48s} {median / 1000:10.3f} {low / 1000:8.3f}")


if __name__ == "__main__":
    main()
