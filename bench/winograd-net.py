#!/usr/bin/env python3
"""Whole-net training throughput of resnet18-small with winograd on its 3x3 stride-1
layers (gemm on the strided convs and 1x1 projections, which winograd cannot run)
against gemm everywhere, NCHW and NHWC: interleaved rounds whose order rotates, each
`tunescope profile` run's traced ex/s, then per layout the median, the spread (max - min
over median) and winograd / gemm as a Markdown table for docs/BENCHMARKS.md.

usage: bench/winograd-net.py BUILD_DIR [--rounds 5] [--batch 128] [--steps 3] [--threads 2]"""
import argparse
import re
import statistics
import subprocess

STRIDED = "s2b1.conv1=gemm,s3b1.conv1=gemm,s4b1.conv1=gemm,s2b1.proj=gemm,s3b1.proj=gemm,s4b1.proj=gemm"


def run(cli, layout, conv, a):
    out = subprocess.run([cli, "profile", "--model", "resnet18-small", "--data", "fake", "--batch", str(a.batch),
                          "--fake-count", str(a.batch * (a.steps + 2)), "--warmup", "1", "--steps", str(a.steps),
                          "--layout", layout, "--conv", conv, "--threads", str(a.threads)],
                         capture_output=True, text=True, check=True).stdout
    return float(re.search(r"traced steps: .*s, ([0-9.]+) ex/s", out).group(1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("build")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    cli = a.build + "/tunescope"
    configs = [(layout, conv) for layout in ("nchw", "nhwc") for conv in ("gemm", "winograd," + STRIDED)]
    rates = {c: [] for c in configs}
    for r in range(a.rounds):
        for c in configs[r % len(configs):] + configs[:r % len(configs)]:
            rates[c].append(run(cli, c[0], c[1], a))
    print("| layout | conv | ex/s median | spread | rounds | winograd / gemm |")
    print("|---|---|---:|---:|---:|---:|")
    for layout in ("nchw", "nhwc"):
        base = statistics.median(rates[(layout, "gemm")])
        for layout_, conv in configs:
            if layout_ != layout:
                continue
            v = rates[(layout, conv)]
            med = statistics.median(v)
            name = conv.split(",")[0]
            ratio = f"{med / base:.2f}x" if name == "winograd" else "1.00x"
            print(f"| {layout} | {name} | {med:.1f} | {100 * (max(v) - min(v)) / med:.0f}% | {len(v)} | {ratio} |")


if __name__ == "__main__":
    main()
