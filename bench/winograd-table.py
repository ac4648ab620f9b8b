#!/usr/bin/env python3
"""Pivots bench_conv's JSON output for the winograd layers ("wino.b<batch>.<layer>",
run with --benchmark_repetitions and random interleaving, every repetition kept) into
the Markdown table of docs/BENCHMARKS.md: per layer, layout and pass the median ms of
direct, gemm, fft-own, winograd@f2 and winograd@f4, the largest spread (max - min over
median) among them, and gemm's time over each winograd tile's (above 1: winograd is faster).

usage: bench/winograd-table.py conv.json"""
import json
import statistics
import sys
from collections import OrderedDict

ALGOS = ["direct", "gemm", "fft-own", "winograd@f2", "winograd@f4"]
LAYERS = ["stem_3to16x32", "s1_16x32", "s2_32x16", "s3_64x8", "s4_128x4"]
PASSES = ["fwd", "bwd_data", "bwd_filter"]


def main(path):
    times = OrderedDict()
    for run in json.load(open(path))["benchmarks"]:
        if run.get("run_type") == "aggregate" or not run["name"].startswith("wino."):
            continue
        layer, layout, algo, pas = run.get("run_name", run["name"]).split("/")[:4]
        if algo == "sgemm-roofline":
            continue
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[run["time_unit"]]
        times.setdefault((layer, layout, pas), {}).setdefault(algo, []).append(run["real_time"] * scale)
    print("| layer | layout | pass | " + " | ".join(f"{a} ms" for a in ALGOS)
          + " | spread | gemm / f2 | gemm / f4 |")
    print("|---|---|---|" + "---:|" * (len(ALGOS) + 3))
    # Random interleaving reports in run order: sort by batch, then the net's layer order.
    def order(key):
        layer, layout, pas = key
        batch = int(layer.split(".")[1][1:])
        return (batch, LAYERS.index(layer.split(".")[2]), layout, PASSES.index(pas))

    for (layer, layout, pas), row in sorted(times.items(), key=lambda kv: order(kv[0])):
        med = {a: statistics.median(v) for a, v in row.items()}
        spread = max((max(v) - min(v)) / statistics.median(v) for v in row.values())
        cells = [f"{med[a]:.2f}" if a in med else "-" for a in ALGOS]
        ratio = lambda a: f"{med['gemm'] / med[a]:.2f}x" if a in med and "gemm" in med else "-"
        print(f"| {layer} | {layout} | {pas} | " + " | ".join(cells)
              + f" | {100 * spread:.0f}% | {ratio('winograd@f2')} | {ratio('winograd@f4')} |")


if __name__ == "__main__":
    main(sys.argv[1])
