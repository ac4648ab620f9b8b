#!/usr/bin/env python3
"""What an idealised race would measure to pick within 3 % of a truth's best, at its noise.

Usage: rounds-lower-bound.py ROUNDS.tsv EXHAUSTIVE_SECONDS [SHARE] [WITHIN]

ROUNDS.tsv is a truth's interleaved rounds (`bench_tuning_truth --dump-rounds`, kept by
`KEEP=DIR bench/tuning-truth.sh` as DIR/truth-rounds-TAG.tsv): the configs' labels, then
one line of step seconds per round. EXHAUSTIVE_SECONDS is exhaustive's mean measurement
in the same run (tuning-truth.sh prints it), the yardstick of the issue's cost.

The idealised race knows in advance which configs are close: the truth's members within
WITHIN (default 0.06) of the best by the mean step time. It runs no finds, no first
stage, no settle steps, one timed step per member a round, drops no one, and after n
rounds picks the member with the lowest mean log step time. Resampling the truth's
rounds (whole rounds, so that the pairing holds; 2000 draws, seeded) gives the share of
its picks within 3 % of the best as tuning-truth.sh scores them, for n = 5, 10, 20, ...
until it reaches SHARE (default 0.9: 9 tunes of 10), and the seconds of steps n rounds
cost, against exhaustive. The least n that reaches it (bisected) bounds a real tune from
below: it must also find the close members and settle each turn. Scored against the
same rounds it resamples, the share is optimistic, so the bound is too. Above 0.25x of
exhaustive, no tune that measures in such rounds meets the issue's cost at its accuracy
on that machine state (docs/TUNER-MEASUREMENT.md, "When the rounds stop undecided").
"""
import math
import random
import statistics
import sys

DRAWS = 2000


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    exhaustive = float(sys.argv[2])
    target = float(sys.argv[3]) if len(sys.argv) > 3 else 0.9
    within = float(sys.argv[4]) if len(sys.argv) > 4 else 0.06
    if not (exhaustive > 0 and 0 < target < 1 and 0.03 <= within < 1):
        print("rounds-lower-bound.py: EXHAUSTIVE_SECONDS must be > 0, SHARE in (0, 1) and "
              "WITHIN in [0.03, 1)", file=sys.stderr)
        return 2
    lines = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
    labels = lines[0]
    rows = [[float(x) for x in line] for line in lines[1:]]
    rows = [r for r in rows if len(r) == len(labels) and all(t > 0 for t in r)]
    if len(rows) < 3:
        print(f"{sys.argv[1]}: fewer than 3 complete rounds", file=sys.stderr)
        return 1
    means = [statistics.mean(r[i] for r in rows) for i in range(len(labels))]
    best = min(range(len(labels)), key=lambda i: means[i])
    close = [i for i in range(len(labels)) if means[best] / means[i] >= 1 - within]
    good = {i for i in close if means[best] / means[i] >= 0.97}
    logs = [[math.log(t) for t in r] for r in rows]
    round_seconds = sum(means[i] for i in close)
    print(f"{sys.argv[1]}: {len(rows)} rounds; {len(close)} members within {within:.0%} of the "
          f"best ({labels[best]}, {means[best] * 1e3:.1f} ms), {len(good)} of them within 3 %; "
          f"a round of them: {round_seconds * 1e3:.0f} ms of steps")
    print(f"| rounds | picks within 3 % | seconds of steps | vs exhaustive ({exhaustive:.1f} s) |")
    print("|---:|---:|---:|---:|")
    rng = random.Random(1)

    def share_at(n: int) -> float:
        hits = 0
        for _ in range(DRAWS):
            drawn = [logs[rng.randrange(len(logs))] for _ in range(n)]
            hits += min(close, key=lambda i: sum(r[i] for r in drawn)) in good
        return hits / DRAWS

    reached = None
    n, below = 5, 0
    while n <= 5 * 2 ** 8:
        share = share_at(n)
        seconds = n * round_seconds
        print(f"| {n} | {share:.3f} | {seconds:.1f} | {seconds / exhaustive:.2f}x |")
        if share >= target:
            reached = n
            break
        below = n
        n *= 2
    if reached is None:
        print(f"{target:.0%} of picks within 3 % not reached by {below} rounds")
        return 0
    # The least n between the last short of it and the first to reach it.
    while reached - below > 1:
        middle = (below + reached) // 2
        if share_at(middle) >= target:
            reached = middle
        else:
            below = middle
    seconds = reached * round_seconds
    print(f"least rounds for {target:.0%} of picks within 3 %: {reached}, {seconds:.1f} s of steps "
          f"= {seconds / exhaustive:.2f}x of exhaustive")
    return 0


if __name__ == "__main__":
    sys.exit(main())
