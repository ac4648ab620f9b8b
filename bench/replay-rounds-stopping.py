#!/usr/bin/env python3
"""How many rounds the tuner's stopping rule needs for two close configs, and what it picks.

Usage: replay-rounds-stopping.py ROUNDS.tsv [WITHIN] [OFFSET_STEP] [TRIM]

ROUNDS.tsv is what `bench_tuning_truth --dump-rounds` writes (the configs' labels, then one
line of step seconds per round). For every pair of configs whose geometric mean step times
over all the rounds are within WITHIN (default 0.05) of each other, and for every start
round 0, OFFSET_STEP (default 10), ... (the rounds taken from there on, wrapping around),
it replays the rounds' rule for the last two members (docs/TUNER-MEASUREMENT.md): after
every round from the 6th on, the fastest is the lower mean log step time; the comparison is
decided when the two-sided sign-flip test of the mean paired log ratio gives p < 0.05
(exact up to 16 rounds, the normal approximation beyond, as core/tuner/StepStatistics.cpp),
or when the indifference zone shows the other not more than delta (0.02) faster. The zone
is replayed twice: with the tuner's bound (the low end of the two-sided interval at
1 - alpha) and with a one-sided bound at 1 - alpha (the two-sided interval at 1 - 2 alpha).
Prints, per rule, the rounds to decide (median, mean, total against the tuner's) and how
often the pick is more than 2 % / 3 % slower than the pair's better by the whole dump's
geometric mean (what the rounds rank by) and by its mean step time (what the truth judges).
TRIM (default 0) replays the rounds' statistic trimmed as a quiet tune's rounds read it
(kRoundsTrim, 0.1): g = floor(TRIM n) log ratios cut from each end, the interval over the
winsorized ones divided by 1 - 2g/n, the test by the normal approximation once g > 0.
The figures: docs/BENCHMARKS.md, "Tuner cost: the finds' references and the zone's bound,
session 16", and session 24's one-sided bound on a quiet machine.
"""
import math
import statistics
import sys

ALPHA, DELTA, MINIMUM_ROUNDS = 0.05, 0.02, 6
RULES = (("tuner's two-sided bound", ALPHA / 2), ("one-sided bound", ALPHA))  # (name, tail)


TRIM = 0.0


def trimmed(d):
    """(trimmed mean, winsorized values, g) as core/tuner/StepStatistics.cpp's `trimmed`."""
    n = len(d)
    g = int(math.floor(TRIM * n + 1e-9))
    if 2 * g >= n:
        g = 0
    s = sorted(d)
    if g == 0:
        return sum(d) / n, list(d), 0
    low, high = s[g], s[n - 1 - g]
    return sum(s[g:n - g]) / (n - 2 * g), [min(max(x, low), high) for x in d], g


def zone_low(d, tail):
    """The low end of the mean's interval with `tail` below it, or None while unbounded."""
    n = len(d)
    z = statistics.NormalDist().inv_cdf(1 - tail)
    if not (n > z * z and 2.0**-n <= tail + 1e-12):
        return None
    m, w, g = trimmed(d)
    c = sum(w) / n
    ss = sum((x - c) ** 2 for x in w)
    return m - z * math.sqrt(ss / (n * (n - z * z))) / (1 - 2 * g / n)


def p_two_sided(d):
    m, w, g = trimmed(d)
    if g > 0:
        var = sum(x * x for x in w)
        zz = abs(m) * (len(d) - 2 * g) / math.sqrt(var) if var > 0 else 0
        return 2 * (1 - statistics.NormalDist().cdf(zz)) if var > 0 else 1.0
    s = abs(sum(d))
    if len(d) <= 16:
        sums = [0.0]
        for x in d:
            sums = [t + x for t in sums] + [t - x for t in sums]
        return sum(1 for t in sums if abs(t) >= s - 1e-12) / len(sums)
    var = sum(x * x for x in d)
    return 2 * (1 - statistics.NormalDist().cdf(s / math.sqrt(var))) if var > 0 else 1.0


def replay(a, b, tail):
    """(rounds to decide, True if a is picked) over paired log step times a, b."""
    for n in range(1, len(a) + 1):
        if n < MINIMUM_ROUNDS:
            continue
        a_fastest = trimmed([y - x for x, y in zip(a[:n], b[:n])])[0] >= 0
        d = [(y - x) if a_fastest else (x - y) for x, y in zip(a[:n], b[:n])]
        low = zone_low(d, tail)
        if (low is not None and 1 - math.exp(low) < DELTA) or p_two_sided(d) < ALPHA:
            return n, a_fastest
    return len(a), trimmed([y - x for x, y in zip(a, b)])[0] >= 0


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    within = float(sys.argv[2]) if len(sys.argv) > 2 else 0.05
    step = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    global TRIM
    TRIM = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
    lines = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
    labels, rows = lines[0], [[float(x) for x in line] for line in lines[1:]]
    columns = [list(c) for c in zip(*rows)]
    n = len(rows)
    logs = [[math.log(t) for t in c] for c in columns]
    geo = [sum(c) / n for c in logs]
    mean = [sum(c) / n for c in columns]
    results = {name: [] for name, _ in RULES}  # (rounds, loss by geo mean, loss by mean)
    pairs = 0
    for i in range(len(labels)):
        for j in range(i + 1, len(labels)):
            if abs(geo[i] - geo[j]) > math.log(1 + within):
                continue
            pairs += 1
            for offset in range(0, n, step):
                order = [(offset + r) % n for r in range(n)]
                a, b = [logs[i][r] for r in order], [logs[j][r] for r in order]
                for name, tail in RULES:
                    rounds, a_picked = replay(a, b, tail)
                    pick = i if a_picked else j
                    results[name].append((rounds,
                                          math.exp(geo[pick] - min(geo[i], geo[j])) - 1,
                                          mean[pick] / min(mean[i], mean[j]) - 1))
    tuner_total = sum(r[0] for r in results[RULES[0][0]])
    print(f"{pairs} pairs within {within:.0%} over {n} rounds, {len(results[RULES[0][0]])} "
          f"replays each")
    for name, _ in RULES:
        r = results[name]
        if not r:
            continue
        rounds = [x[0] for x in r]
        print(f"{name}: rounds to decide median {statistics.median(rounds):.0f}, mean "
              f"{statistics.mean(rounds):.1f} ({sum(rounds) / tuner_total:.2f}x the tuner's); "
              f"picks slower than the better by the geometric mean > 2 %: "
              f"{sum(x[1] > 0.02 for x in r)}, > 3 %: {sum(x[1] > 0.03 for x in r)}; "
              f"by the mean > 3 %: {sum(x[2] > 0.03 for x in r)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
