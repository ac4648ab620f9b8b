#!/usr/bin/env python3
"""Replay races of several close members on dumped truth rounds: the indifference zone's
claims tested at the Bonferroni level against Holm's step-down.

Usage: replay-race-zone-levels.py WITHIN MEMBERS ROUNDS.tsv...

Each ROUNDS.tsv is what `bench_tuning_truth --dump-rounds` (or `bench/tuning-truth.sh`'s
truth-rounds-*.tsv) writes: the configs' labels, then one line of step seconds per round.
Per file, the members are the configs within WITHIN (e.g. 0.05) of the best by the
geometric mean step time over all the rounds, the MEMBERS closest at most: what
per-layer's second stage races. From every third round (the rounds taken from there on,
wrapping around, three times over at most) the race is replayed as the tuner's rounds run
it (docs/TUNER-MEASUREMENT.md), with the statistics of replay-rounds-stopping.py (the
10 %-trimmed mean of a quiet machine, the normal approximation of its interval):
- from the 5th round, each look drops the members significantly slower than the fastest
  (one-sided at alpha / (racing - 1)) by more than delta/2, and those shown by the zone's
  claim not to be more than delta faster that are not simpler than it (`simpler`: fewer
  per-layer overrides, then fewer of nhwc and bind=cores, then fewer threads);
- from the 6th, the rounds stop once every comparison with the fastest is significant
  (two-sided, alpha) or its zone claim is shown; 200 rounds at most.
The zone's claims are tested at alpha / (racing - 1) each (Bonferroni, the tuner until
session 30), by Holm's step-down (alpha / k, k the claims not yet shown; the tuner since
session 30), or by Holm's step-down with alpha spent over the looks: the rounds stop and
the zone drops members only at rounds 6, 9, 13, ... (x1.45 up to 200, ten looks), and
every test of the stop (the zone's claims, the two-sided significance) is at alpha / 10.
Prints, per file and in all, the turns (members x rounds) each rule's races took against
Bonferroni's, the median rounds, and how many picks were more than 2 % / 3 % slower than
the members' best by the whole file's mean step time.
The figures: docs/BENCHMARKS.md, "Tuner accuracy and cost, session 30".
"""
import importlib.util
import math
import pathlib
import re
import statistics
import sys

_spec = importlib.util.spec_from_file_location(
    "stopping", pathlib.Path(__file__).with_name("replay-rounds-stopping.py"))
S = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(S)
S.TRIM = 0.1
ALPHA, DELTA, MINIMUM_ROUNDS, FIRST_LOOK, MOST_ROUNDS = 0.05, 0.02, 6, 5, 200


def complexity(label):
    conv = re.search(r"conv=([^ ]+)", label).group(1)
    threads = int(re.search(r"threads=(\d+)", label).group(1))
    return (conv.count(","), ("nhwc" in label) + ("bind=cores" in label), threads)


def p_greater(d):
    """One-sided p of a mean above 0, from the two-sided test."""
    p = S.p_two_sided(d)
    return p / 2 if S.trimmed(d)[0] > 0 else 1 - p / 2


def zone_shown(d, level):
    low = S.zone_low(d, level)
    return low is not None and 1 - math.exp(low) < DELTA


# Looks of the rule that spends alpha over them: rounds 6, 9, 13, ... (x1.45), Bonferroni
# over the looks up to MOST_ROUNDS.
SPACED_LOOKS = []
_look = float(MINIMUM_ROUNDS)
while round(_look) <= MOST_ROUNDS:
    SPACED_LOOKS.append(round(_look))
    _look *= 1.45


def shown_claims(ratios, rule, alpha=ALPHA):
    """The members whose zone claim is shown, {member: log ratios to the fastest}."""
    if rule == "bonferroni":
        return {k for k, d in ratios.items() if zone_shown(d, alpha / len(ratios))}
    shown, open_claims = set(), len(ratios)
    progress = True
    while progress and open_claims:
        progress = False
        for k, d in ratios.items():
            if k not in shown and zone_shown(d, alpha / open_claims):
                shown.add(k)
                open_claims -= 1
                progress = True
    return shown


def race(logs, labels, order, rule):
    """(rounds, turns, the pick) of one race over the rounds in `order`."""
    racing, turns = list(range(len(logs))), 0
    for n in range(1, min(len(order), MOST_ROUNDS) + 1):
        turns += len(racing)
        if n < FIRST_LOOK:
            continue
        rows = order[:n]
        mean = {k: S.trimmed([logs[k][r] for r in rows])[0] for k in racing}
        fastest = min(racing, key=lambda k: mean[k])
        ratios = {k: [logs[k][r] - logs[fastest][r] for r in rows] for k in racing if k != fastest}
        spaced = rule == "holm, looks spaced"
        alpha = ALPHA / len(SPACED_LOOKS) if spaced else ALPHA
        shown = shown_claims(ratios, "bonferroni" if rule == "bonferroni" else "holm", alpha)
        significant = {k for k, d in ratios.items() if S.p_two_sided(d) < alpha}
        looks = n >= MINIMUM_ROUNDS and (not spaced or n in SPACED_LOOKS)
        if looks and all(k in shown or k in significant for k in ratios):
            return n, turns, fastest
        level = ALPHA / len(ratios)
        drops = {k for k, d in ratios.items()
                 if (p_greater(d) < level and math.exp(S.trimmed(d)[0]) > 1 + DELTA / 2)
                 or ((not spaced or n in SPACED_LOOKS) and k in shown and S.trimmed(d)[0] >= 0
                     and not complexity(labels[k]) < complexity(labels[fastest]))}
        racing = [k for k in racing if k not in drops]
        if len(racing) == 1:
            return n, turns, racing[0]
    rows = order[:n]
    return n, turns, min(racing, key=lambda k: S.trimmed([logs[k][r] for r in rows])[0])


def summary(rule, races, bonferroni):
    """One rule's turns (against Bonferroni's), median rounds and picks too slow."""
    return (f"{rule}: turns {sum(x[1] for x in races) / sum(x[1] for x in bonferroni):.3f}x "
            f"Bonferroni's, rounds median {statistics.median(x[0] for x in races)}, picks > 2 %: "
            f"{sum(x[2] > 0.02 for x in races)}, > 3 %: {sum(x[2] > 0.03 for x in races)}")


def main() -> int:
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    within, most_members = float(sys.argv[1]), int(sys.argv[2])
    rules = ("bonferroni", "holm", "holm, looks spaced")
    total = {rule: [] for rule in rules}
    for path in sys.argv[3:]:
        lines = [line.rstrip("\n").split("\t") for line in open(path) if line.strip()]
        labels, rows = lines[0], [[float(x) for x in line] for line in lines[1:]]
        columns, n = list(zip(*rows)), len(rows)
        geo = [sum(math.log(t) for t in c) / n for c in columns]
        mean = [sum(c) / n for c in columns]
        best = min(geo)
        chosen = sorted((i for i in range(len(labels)) if geo[i] - best < math.log(1 + within)),
                        key=lambda i: geo[i])[:most_members]
        if len(chosen) < 2:
            print(f"{path}: 1 member within {within:.0%}, no race")
            continue
        logs = [[math.log(columns[i][r]) for r in range(n)] for i in chosen]
        best_mean = min(mean[i] for i in chosen)
        results = {}
        for rule in rules:
            results[rule] = []
            for offset in range(0, n, 3):
                order = [(offset + r) % n for r in range(n)] * 3
                rounds, turns, pick = race(logs, [labels[i] for i in chosen], order, rule)
                results[rule].append((rounds, turns, mean[chosen[pick]] / best_mean - 1))
            total[rule] += results[rule]
        print(f"{path}: {len(chosen)} members, {len(results[rules[0]])} replays")
        for rule in rules:
            print("  " + summary(rule, results[rule], results[rules[0]]))
    if total[rules[0]]:
        print(f"all {len(total[rules[0]])} replays:")
        for rule in rules:
            print("  " + summary(rule, total[rule], total[rules[0]]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
