#!/usr/bin/env python3
"""Pivots bench_conv's JSON output (--benchmark_out) into the Markdown table of
docs/BENCHMARKS.md: one row per layer and layout, GFLOP/s of each algorithm's
forward / backward-data / backward-filter pass beside the sgemm of the same size."""
import json
import sys
from collections import OrderedDict


def main(path):
    runs = json.load(open(path))["benchmarks"]
    rows = OrderedDict()
    algorithms = []
    for run in runs:
        if run.get("run_type") == "aggregate" or "FLOPS" not in run:
            continue
        parts = run["name"].split("/")
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


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/dev/stdin")
