#!/usr/bin/env python3
"""How a pair's round-to-round noise grows with the turns between the two members.

Usage: rounds-distance.py ROUNDS.tsv [THREADS]

ROUNDS.tsv is what `bench_tuning_truth --dump-rounds` writes (the configs' labels, then
one line of step seconds per round), its columns in the order the members took their
turns, so two members' distance is how many columns apart they are, the shorter way
round (the last member's turn is followed by the next round's first). For every pair
of members with THREADS threads (default 2; their turns are alike in length), prints the
standard deviation of the per-round log step-time ratio and the same by the median
absolute deviation (x 1.4826), then their medians by distance. A spread that grows with
the distance says the noise is a state of the machine that lasts a few turns, which
pairing cancels only between turns close in time (docs/TUNER-MEASUREMENT.md, "Where the
rounds' noise comes from").
"""
import math
import statistics
import sys


def threads_of(label: str) -> int:
    return int(label.split("threads=")[1].split()[0])


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    lines = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
    labels = lines[0]
    rows = [[float(x) for x in line] for line in lines[1:]]
    rows = [r for r in rows if all(t > 0 for t in r)]  # a member that stopped early: 0
    members = [i for i in range(len(labels)) if threads_of(labels[i]) == threads]
    by_distance = {}
    for a in members:
        for b in members:
            if a >= b:
                continue
            d = [math.log(r[a] / r[b]) for r in rows]
            centre = statistics.median(d)
            mad_sd = 1.4826 * statistics.median(abs(x - centre) for x in d)
            apart = abs(a - b)
            apart = min(apart, len(labels) - apart)
            by_distance.setdefault(apart, []).append((statistics.pstdev(d), mad_sd))
    print(f"{len(rows)} rounds, {len(labels)} members in turn, {len(members)} with "
          f"{threads} threads")
    print("| turns apart | pairs | SD of the log ratio, median | by the MAD, median |")
    print("|---:|---:|---:|---:|")
    for apart in sorted(by_distance):
        spreads = by_distance[apart]
        print(f"| {apart} | {len(spreads)} | {statistics.median(s for s, _ in spreads):.3f} | "
              f"{statistics.median(m for _, m in spreads):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
