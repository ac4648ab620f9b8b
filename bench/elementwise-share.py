#!/usr/bin/env python3
"""The convolution and non-convolution shares of training steps, from tunescope traces.

usage: bench/elementwise-share.py [--bandwidth GB/s] TRACE.json [TRACE.json ...]

Per trace: kernel time by group -- convolution (every kernel named after a conv
algorithm: direct., gemm., winograd., fft-*, onednn:*, including their transforms and
reorders), the elementwise / batch-norm kernels (bn*, relu*, add, accumulate, copy), and
the rest (pooling, fc, loss, sgd) -- with each group's share of the kernel time. Then per
elementwise kernel: calls, mean time, the bytes its trace record declares per call and
the rate that gives; with --bandwidth (the triad of bench_elementwise), that rate as a
share of it. Per training step (the traces' train_step ranges): the elementwise time and
the bytes its kernels declare. Several traces (e.g. interleaved runs of one config) are summed by name.
"""
import argparse
import collections
import json

CONV_PREFIXES = ("direct.", "gemm.", "winograd.", "fft-", "onednn:")
ELEMENTWISE_PREFIXES = ("bn", "relu", "add", "accumulate", "copy")


def group(name):
    if name.startswith(CONV_PREFIXES):
        return "convolution"
    if name.startswith(ELEMENTWISE_PREFIXES):
        return "elementwise"
    return "other"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bandwidth", type=float, help="measured memory bandwidth, GB/s")
    parser.add_argument("--label", default="", help="row label")
    parser.add_argument("traces", nargs="+")
    args = parser.parse_args()
    steps = 0
    time_us = collections.Counter()
    calls = collections.Counter()
    nbytes = collections.Counter()
    for path in args.traces:
        with open(path) as f:
            for e in json.load(f)["traceEvents"]:
                if e.get("ph") == "X" and e.get("name") == "train_step":
                    steps += 1
                if e.get("ph") != "X" or e.get("cat") != "kernel":
                    continue
                time_us[e["name"]] += e["dur"]
                calls[e["name"]] += 1
                nbytes[e["name"]] += e.get("args", {}).get("bytes", 0)
    total = sum(time_us.values())
    by_group = collections.Counter()
    for name, t in time_us.items():
        by_group[group(name)] += t
    print(f"{args.label or ', '.join(args.traces)}: kernel time {total / 1e3:.1f} ms; "
          + "; ".join(f"{g} {by_group[g] / 1e3:.1f} ms ({100 * by_group[g] / total:.1f} %)"
                      for g in ("convolution", "elementwise", "other")))
    if steps:
        ew = [n for n in time_us if group(n) == "elementwise"]
        ew_ms = sum(time_us[n] for n in ew) / 1e3 / steps
        ew_mb = sum(nbytes[n] for n in ew) / 1e6 / steps
        line = (f"per step ({steps} steps): elementwise {ew_ms:.1f} ms, {ew_mb:.0f} MB declared, "
                f"{ew_mb / ew_ms:.1f} GB/s")
        if args.bandwidth:
            line += f"; at the triad's {args.bandwidth:.1f} GB/s those bytes take {ew_mb / args.bandwidth:.1f} ms"
        print(line)
    print("| kernel | calls | mean us | MB per call | GB/s" + (" | of triad |" if args.bandwidth else " |"))
    print("|---|---:|---:|---:|---:|" + ("---:|" if args.bandwidth else ""))
    for name in sorted((n for n in time_us if group(n) == "elementwise"), key=lambda n: -time_us[n]):
        rate = nbytes[name] / (time_us[name] * 1e3)  # bytes per ns = GB/s
        row = (f"| {name} | {calls[name]} | {time_us[name] / calls[name]:.0f} | "
               f"{nbytes[name] / calls[name] / 1e6:.1f} | {rate:.1f} |")
        if args.bandwidth:
            row += f" {100 * rate / args.bandwidth:.0f} % |"
        print(row)


if __name__ == "__main__":
    main()
