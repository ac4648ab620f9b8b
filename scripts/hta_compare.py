#!/usr/bin/env python3
"""Runs Holistic Trace Analysis' temporal and kernel breakdowns on a tunescope trace
exported in the Kineto layout, and compares them with `tunescope report` of the same
trace. Called by scripts/check-hta.sh inside a venv that has HolisticTraceAnalysis.

usage: hta_compare.py TRACE_DIR REPORT.txt

By default HTA rounds every event inward to whole microseconds (ts up, end down: it
warns "Rounding down ns resolution events"), so each kernel may lose up to 2 us: the
tolerance of a sum over n kernels is 2n + 1 us. With HTA_DISABLE_NS_ROUNDING=1 HTA keeps
our nanoseconds and the only difference left is the report's 1 us display rounding:
the tolerance is 1 us. Exit 0 when everything agrees, 1 otherwise.
"""
import os
import re
import sys
import warnings


def parse_report(path):
    """Kernel totals (us) and calls by name, measured span and busy time (us)."""
    text = open(path).read()
    span = re.search(r"^trace: (\d+) activities, \d+ ranges over ([\d.]+) ms", text, re.M)
    busy = re.search(r"\(busy ([\d.]+) ms\)", text)
    if not span or not busy:
        sys.exit(f"hta_compare: cannot find the span or busy time in {path}")
    kernels = {}
    table = text.split("kernels", 1)[1].split("\n\n", 1)[0]
    for line in table.splitlines()[3:]:
        # name (may contain spaces), calls, total ms, mean us, share %
        match = re.match(r"^\s+(.+?)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", line)
        if match:
            kernels[match.group(1)] = (int(match.group(2)), float(match.group(3)) * 1000)
    return {"activities": int(span.group(1)), "span_us": float(span.group(2)) * 1000,
            "busy_us": float(busy.group(1)) * 1000, "kernels": kernels}


def main():
    trace_dir, report_path = sys.argv[1], sys.argv[2]
    ours = parse_report(report_path)
    warnings.filterwarnings("ignore")
    from hta.trace_analysis import TraceAnalysis  # noqa: E402 (needs the venv)
    import hta.version

    analysis = TraceAnalysis(trace_dir=trace_dir)
    temporal = analysis.get_temporal_breakdown(visualize=False).iloc[0]
    _, kernel_metrics = analysis.get_gpu_kernel_breakdown(
        visualize=False, duration_ratio=1.0, num_kernels=100000, include_memory_kernels=True)

    failures = []
    n = ours["activities"]
    exact = os.environ.get("HTA_DISABLE_NS_ROUNDING") == "1"

    def tolerance(kernels):
        return 1 if exact else 2 * kernels + 1

    def compare(what, theirs, mine, tolerance):
        ok = abs(theirs - mine) <= tolerance
        print(f"  {what:<34} HTA {theirs:>12.1f} us   tunescope {mine:>12.1f} us   "
              f"diff {theirs - mine:>+7.1f} (tol {tolerance:.0f})  {'ok' if ok else 'MISMATCH'}")
        if not ok:
            failures.append(what)

    print(f"HolisticTraceAnalysis {'.'.join(map(str, hta.version.__version_tuple__))} "
          f"on {trace_dir} ({n} kernels), "
          f"{'ns kept (HTA_DISABLE_NS_ROUNDING=1)' if exact else 'HTA rounding to us'}")
    print("temporal breakdown:")
    hta_busy = temporal["kernel_time(us)"] - temporal["idle_time(us)"]
    compare("kernel time (span)", temporal["kernel_time(us)"], ours["span_us"], tolerance(1))
    compare("busy (compute + non-compute)", hta_busy, ours["busy_us"], tolerance(n))
    compare("idle", temporal["idle_time(us)"], ours["span_us"] - ours["busy_us"], tolerance(n) + 1)
    print(f"  HTA idle {temporal['idle_time_pctg']}%, compute {temporal['compute_time_pctg']}%, "
          f"non-compute {temporal['non_compute_time_pctg']}%; tunescope idle "
          f"{100 * (1 - ours['busy_us'] / ours['span_us']):.2f}%")
    print("kernel breakdown (sum per kernel name):")
    theirs = {row["name"]: row["sum (us)"] for _, row in kernel_metrics.iterrows()}
    if set(theirs) != set(ours["kernels"]):
        print(f"  kernel names differ: only HTA {sorted(set(theirs) - set(ours['kernels']))}, "
              f"only tunescope {sorted(set(ours['kernels']) - set(theirs))}")
        failures.append("kernel names")
    for name in sorted(set(theirs) & set(ours["kernels"]), key=lambda k: -ours["kernels"][k][1]):
        calls, total = ours["kernels"][name]
        compare(f"{name} ({calls} calls)", theirs[name], total, tolerance(calls))
    if failures:
        print(f"hta_compare: FAILED: {', '.join(failures)}")
        return 1
    print("hta_compare: HTA agrees with tunescope report")
    return 0


if __name__ == "__main__":
    sys.exit(main())
