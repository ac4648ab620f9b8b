#!/usr/bin/env python3
"""Which CPU each thread of a command runs on, over time: whether the OS queues two lane
threads on one CPU (the one-at-a-time steps of docs/BENCHMARKS.md). Runs COMMAND and
samples /proc/PID/task/*/stat (field 3: state, field 39: the CPU last run on) about every
0.5 ms; the sampler takes part of a CPU itself. Reports, over the samples where the two
threads with the most CPU time (the lanes, in a two-lane run) were both runnable (R), how
often they sat on the same CPU, and the stretches of consecutive such samples.
Usage: bench/lane-cpu-probe.py COMMAND...   (e.g. build/tunescope profile ... --streams 2)
"""
import collections
import os
import subprocess
import sys
import time


def snapshot(pid):
    snap = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = open(f"/proc/{pid}/task/{tid}/stat").read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # fields[0] is field 3
        snap[int(tid)] = (fields[0], int(fields[36]), int(fields[11]) + int(fields[12]))
    return snap


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    samples = []
    while child.poll() is None:
        try:
            samples.append(snapshot(child.pid))
        except OSError:
            break
        time.sleep(0.0005)
    cpu_time = {}
    for snap in samples:
        for tid, (_, _, ticks) in snap.items():
            cpu_time[tid] = ticks
    if len(cpu_time) < 2:
        sys.exit("lane-cpu-probe: fewer than two threads seen")
    a, b = sorted(cpu_time, key=lambda t: -cpu_time[t])[:2]
    both = same = 0
    stretches = []  # [same CPU?, consecutive both-runnable samples]
    runnable_on = {a: collections.Counter(), b: collections.Counter()}
    for snap in samples:
        for t in (a, b):
            if t in snap and snap[t][0] == "R":
                runnable_on[t][snap[t][1]] += 1
        if a in snap and b in snap and snap[a][0] == "R" and snap[b][0] == "R":
            both += 1
            together = snap[a][1] == snap[b][1]
            same += together
            if stretches and stretches[-1][0] == together:
                stretches[-1][1] += 1
            else:
                stretches.append([together, 1])
    print(f"{len(samples)} samples; the two busiest threads both runnable in {both}, "
          f"on the same CPU in {same} ({100 * same / max(1, both):.0f} %)")
    for t in (a, b):
        print(f"  thread {t}: runnable samples by CPU {dict(runnable_on[t])}")
    print("  longest same-CPU stretch:", max((n for s, n in stretches if s), default=0), "samples")


if __name__ == "__main__":
    main()
