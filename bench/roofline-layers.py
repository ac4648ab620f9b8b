#!/usr/bin/env python3
"""Per-layer roofline of ResNet-18-small: for every cpu conv algorithm, `tunescope
profile` runs the whole net with that algorithm on every conv layer that supports it
(gemm on the others), in interleaved rounds; each run's conv-pass table (effective
GFLOP/s per layer and pass, % of the measured peak cached in --db) is parsed. Per layer
the algorithm with the lowest median time per step (fwd + bwd_data + bwd_filter) wins;
the Markdown table gives its per-pass median GFLOP/s, the min-max spread over rounds,
and its share of the measured peak; then each algorithm's median ms per layer.

usage: bench/roofline-layers.py [--tunescope build/tunescope] [--db roofline.db]
           [--batch 128] [--rounds 3] [--steps 2] [--layout nchw] [--threads 0]
           [--algorithms gemm,direct,...]"""
import argparse
import re
import statistics
import subprocess
import sys
from collections import OrderedDict, defaultdict

PASSES = ["fwd", "bwd_data", "bwd_filter"]
UNSUPPORTED = re.compile(r"layer (\S+): algorithm '[^']+' does not support")


def algorithms(tunescope):
    out = subprocess.run([tunescope, "list-algorithms"], check=True, capture_output=True, text=True).stdout
    names, in_cpu = [], False
    for line in out.splitlines():
        if line.startswith("backend "):
            in_cpu = line.startswith("backend cpu")
        elif in_cpu and line.strip().startswith("conv "):
            names.append(line.split()[1])
    return names


def profile(args, conv):
    cmd = [args.tunescope, "profile", "--model", "resnet18-small", "--data", "fake", "--batch", str(args.batch),
           "--fake-count", str(args.batch * (args.steps + 1)), "--warmup", "1", "--steps", str(args.steps),
           "--layout", args.layout, "--conv", conv, "--db", args.db, "--top", "1"]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    return subprocess.run(cmd, capture_output=True, text=True)


def conv_for(args, algo, fallbacks):
    return algo + "".join(f",{layer}=gemm" for layer in sorted(fallbacks))


def supported_conv(args, algo):
    """The --conv text running `algo` on every layer it supports: each layer it refuses
    (the CLI names it) falls back to gemm. One-step probes: unsupported layers fail at build."""
    fallbacks = set()
    while True:
        r = profile(argparse.Namespace(**{**vars(args), "steps": 1}), conv_for(args, algo, fallbacks))
        if r.returncode == 0:
            return conv_for(args, algo, fallbacks), fallbacks
        m = UNSUPPORTED.search(r.stdout + r.stderr)
        if not m or m.group(1) in fallbacks:
            sys.stderr.write(f"{algo}: skipped: {(r.stdout + r.stderr).strip().splitlines()[-1]}\n")
            return None, None
        fallbacks.add(m.group(1))


def parse_table(text):
    """Rows of the conv-pass table: (layer, algorithm, pass) -> (mean ms, GFLOP/s, % peak or None)."""
    rows, header = {}, None
    for line in text.splitlines():
        if line.startswith("conv passes"):
            header = []
            continue
        if header is None:
            continue
        cells = re.split(r"\s{2,}", line.strip())
        if not header:
            header = cells
            continue
        if set(line.strip()) <= {"-"}:
            continue
        if len(cells) != len(header):
            break
        row = dict(zip(header, cells))
        pct = row.get("% peak")
        rows[(row["layer"], row["algorithm"], row["pass"])] = (
            float(row["mean ms"]), float(row["GFLOP/s"]), float(pct) if pct not in (None, "-") else None)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tunescope", default="build/tunescope")
    p.add_argument("--db", default="roofline.db")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--layout", default="nchw")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--algorithms", default="")
    args = p.parse_args()

    algos = args.algorithms.split(",") if args.algorithms else algorithms(args.tunescope)
    convs = OrderedDict()
    for algo in algos:
        conv, fallbacks = supported_conv(args, algo)
        if conv:
            convs[algo] = conv
            if fallbacks:
                sys.stderr.write(f"{algo}: gemm on {', '.join(sorted(fallbacks))}\n")

    # samples[(layer, algo, pass)] = [(ms, gflops, pct), ...] over rounds; interleaved.
    samples, layer_order, machine = defaultdict(list), [], ""
    for rnd in range(args.rounds):
        for algo, conv in convs.items():
            r = profile(args, conv)
            if r.returncode != 0:
                sys.stderr.write(f"round {rnd} {algo}: failed: {r.stdout[-500:]}{r.stderr[-500:]}\n")
                continue
            for line in r.stdout.splitlines():
                if line.startswith("machine peak:"):
                    machine = line
            for (layer, alg, pas), value in parse_table(r.stdout).items():
                if alg != algo:
                    continue  # the gemm fallback of a layer this algorithm refuses
                if layer not in layer_order:
                    layer_order.append(layer)
                samples[(layer, algo, pas)].append(value)

    print(machine)
    print()
    print("| layer | best algorithm | ms/step (fwd+bwd) | pass | GFLOP/s median | spread (min-max) | % of measured peak |")
    print("|---|---|---:|---|---:|---:|---:|")
    per_layer_ms = defaultdict(dict)
    for layer in layer_order:
        for algo in convs:
            passes = [samples.get((layer, algo, pas)) for pas in PASSES]
            ran = [s for s in passes if s]
            if ran:
                per_layer_ms[layer][algo] = sum(statistics.median(v[0] for v in s) for s in ran)
        best = min(per_layer_ms[layer], key=per_layer_ms[layer].get)
        for pas in PASSES:
            s = samples.get((layer, best, pas))
            if not s:
                continue
            g = [v[1] for v in s]
            pct = [v[2] for v in s if v[2] is not None]
            print(f"| {layer} | {best} | {per_layer_ms[layer][best]:.2f} | {pas} | {statistics.median(g):.1f} | "
                  f"{min(g):.1f}-{max(g):.1f} | {statistics.median(pct):.1f} |" if pct else
                  f"| {layer} | {best} | {per_layer_ms[layer][best]:.2f} | {pas} | {statistics.median(g):.1f} | "
                  f"{min(g):.1f}-{max(g):.1f} | not measured |")
    print()
    print("| layer | " + " | ".join(f"{a} ms" for a in convs) + " |")
    print("|---|" + "---:|" * len(convs))
    for layer in layer_order:
        print(f"| {layer} | " + " | ".join(f"{per_layer_ms[layer][a]:.2f}" if a in per_layer_ms[layer] else "-"
                                           for a in convs) + " |")


if __name__ == "__main__":
    main()
