#!/usr/bin/env python3
"""Before/after per-layer figures on a shared machine: runs two or more bench_conv
binaries (e.g. an old build's and a new one's) on the same filter in interleaved rounds,
rotating which goes first, and prints each benchmark's median (min-max) ms per binary
and the ratio of the first binary's median to the last's, as a Markdown table.

usage: interleave-conv.py ROUNDS FILTER BENCH_CONV [BENCH_CONV ...] [--threads N] [--min-time S]
"""
import argparse
import collections
import re
import statistics
import subprocess


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rounds", type=int)
    parser.add_argument("filter", help="--benchmark_filter of bench_conv")
    parser.add_argument("binaries", nargs="+", help="bench_conv programs to compare")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--min-time", type=float, default=0.15)
    args = parser.parse_args()
    if args.rounds < 1 or args.rounds > 100:
        parser.error(f"ROUNDS must be 1..100, got {args.rounds}")
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    loads = []
    for r in range(args.rounds):
        order = args.binaries[r % len(args.binaries):] + args.binaries[:r % len(args.binaries)]
        for binary in order:
            loads.append(open("/proc/loadavg").read().split()[0])
            proc = subprocess.run([binary, f"--threads={args.threads}", f"--benchmark_filter={args.filter}",
                                   f"--benchmark_min_time={args.min_time}"], capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(f"interleave-conv: {binary} exited {proc.returncode}:\n{proc.stderr}")
            for line in proc.stdout.splitlines():
                m = re.match(r"(\S+)/real_time\s+([0-9.]+) ms", line)
                if m:
                    times[m.group(1)][binary].append(float(m.group(2)))
    print("load (1 min) before each run: " + " ".join(loads))
    first, last = args.binaries[0], args.binaries[-1]
    print("| benchmark | " + " | ".join(f"{b} median (min-max) ms" for b in args.binaries) + " | first / last |")
    print("|---|" + "---:|" * (len(args.binaries) + 1))
    for name, per_binary in times.items():
        cells = [f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})" if (v := per_binary[b]) else "-"
                 for b in args.binaries]
        ratio = (f"{statistics.median(per_binary[first]) / statistics.median(per_binary[last]):.2f}x"
                 if per_binary[first] and per_binary[last] else "-")
        print(f"| {name} | " + " | ".join(cells) + f" | {ratio} |")


if __name__ == "__main__":
    main()
