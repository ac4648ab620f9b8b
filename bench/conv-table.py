#!/usr/bin/env python3
"""Pivots bench_conv's JSON output (--benchmark_out) into the Markdown table of
docs/BENCHMARKS.md: one row per layer and layout, GFLOP/s of each algorithm's
forward / backward-data / backward-filter pass beside the sgemm of the same size.
With repetitions the median is used. When the run has forced FFT tilings
(<algorithm>@<tiling>), a second table gives each FFT variant's time relative to the
same algorithm untiled (@off) and to direct, per pass."""
import json
import sys
from collections import OrderedDict


def main(path):
    runs = json.load(open(path))["benchmarks"]
    rows = OrderedDict()
    algorithms = []
    for run in runs:
        if "FLOPS" not in run:
            continue
        if run.get("run_type") == "aggregate" and run.get("aggregate_name") != "median":
            continue
        parts = run.get("run_name", run["name"]).split("/")
        layer, layout, algo = parts[0], parts[1], parts[2]
        gflops = run["FLOPS"] / 1e9
        row = rows.setdefault((layer, layout), {})
        if algo == "sgemm-roofline":
            row["sgemm"] = gflops
            continue
        if algo not in algorithms:
            algorithms.append(algo)
        row.setdefault(algo, {})[parts[3]] = gflops
    header = "| layer | layout | sgemm | " + " | ".join(f"{a} fwd/bwd_data/bwd_filter" for a in algorithms) + " |"
    print(header)
    print("|---|---|---:|" + "---:|" * len(algorithms))
    for (layer, layout), row in rows.items():
        cells = []
        for a in algorithms:
            passes = row.get(a, {})
            cells.append("/".join(f"{passes[p]:.1f}" if p in passes else "-" for p in ("fwd", "bwd_data", "bwd_filter")))
        print(f"| {layer} | {layout} | {row.get('sgemm', float('nan')):.1f} | " + " | ".join(cells) + " |")
    tiling_table(rows, algorithms)


def tiling_table(rows, algorithms):
    """Time ratios (GFLOP/s of the peer over GFLOP/s of the variant: < 1 is faster)."""
    variants = [a for a in algorithms if a.startswith("fft") and "@off" not in a and a.split("@")[0] + "@off" in algorithms]
    if not variants:
        return
    passes = ("fwd", "bwd_data", "bwd_filter")
    print()
    print("| layer | layout | " + " | ".join(f"{v} / untiled, / direct" for v in variants) + " |")
    print("|---|---|" + "---:|" * len(variants))
    for (layer, layout), row in rows.items():
        cells = []
        for v in variants:
            mine, untiled, direct = row.get(v, {}), row.get(v.split("@")[0] + "@off", {}), row.get("direct", {})
            def ratios(peer):
                return "/".join(f"{peer[p] / mine[p]:.2f}" if p in mine and p in peer else "-" for p in passes)
            cells.append(ratios(untiled) + ", " + ratios(direct))
        print(f"| {layer} | {layout} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/dev/stdin")
