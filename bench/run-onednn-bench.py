#!/usr/bin/env python3
"""onednn:* beside direct and gemm, and beside PyTorch when this python has torch.

Training examples/s of LeNet-5 (batch 256) and ResNet-18-small (batch 128) for every
--conv in CONVS and both layouts (`tunescope profile`: fake data, tracer on, input
pipeline included), plus PyTorch NCHW and channels_last on the same nets
(bench/peers/peers.py's TorchContender, only when `import torch` works). Rounds
alternate all contenders of a net, rotating which goes first; the table gives the
median ex/s, the spread (min-max) and ratios to gemm in the same layout and to
PyTorch's better layout, as Markdown for docs/BENCHMARKS.md.

usage: /usr/bin/python3 bench/run-onednn-bench.py --build BUILD_DIR [--threads 2] [--rounds 3] [--quick]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

CONVS = ["direct", "gemm", "onednn:direct", "onednn:auto"]
# (model, batch, warm-up steps, timed steps)
CASES = [("lenet5", 256, 3, 20), ("resnet18-small", 128, 1, 3)]
TRACED = re.compile(r"^(\d+) traced steps: [0-9.]+ s, ([0-9.]+) ex/s", re.M)


def tunescope_rate(cli, model, batch, warmup, steps, threads, layout, conv):
    cmd = [cli, "profile", "--model", model, "--batch", str(batch), "--data", "fake",
           "--fake-count", str(batch * (warmup + steps)), "--test-limit", "1", "--warmup", str(warmup),
           "--steps", str(steps), "--threads", str(threads), "--layout", layout, "--conv", conv]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    match = TRACED.search(proc.stdout.replace("\r", "\n"))
    if proc.returncode != 0 or not match:
        sys.exit(f"onednn-bench: {' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout}")
    return float(match.group(2))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True, help="build folder with the tunescope binary")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one round of 2 steps: checks the script, not a figure")
    args = parser.parse_args()
    cli = os.path.join(args.build, "tunescope")
    if not os.access(cli, os.X_OK):
        sys.exit(f"onednn-bench: no {cli}: build the tunescope target first")
    cases = [(m, b, 1, 2) for m, b, _, _ in CASES] if args.quick else CASES
    rounds = 1 if args.quick else args.rounds

    torch_contender = None
    try:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
        import peers  # needs torch
        import torch
        torch.set_num_threads(args.threads)
        torch_contender = peers.TorchContender
        peer = f"torch {torch.__version__}"
    except ImportError as error:
        peer = f"no PyTorch ({error})"
    print(f"machine: {open('/proc/cpuinfo').read().split('model name')[1].split(':')[1].splitlines()[0].strip()}, "
          f"{os.cpu_count()} cores; threads {args.threads}; {peer}; "
          f"OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(default)')}; "
          f"load before {open('/proc/loadavg').read().split()[:3]}", flush=True)

    table = []
    for model, batch, warmup, steps in cases:
        contenders = {}
        for layout in ("nchw", "nhwc"):
            for conv in CONVS:
                contenders[f"{layout} {conv}"] = (
                    lambda layout=layout, conv=conv: tunescope_rate(cli, model, batch, warmup, steps, args.threads,
                                                                    layout, conv))
        if torch_contender:
            for layout, channels_last in (("nchw", False), ("channels_last", True)):
                net = torch_contender(model, batch, channels_last, "cpu")
                contenders[f"PyTorch {layout}"] = lambda net=net: net.run(warmup, steps)[0]
        names = list(contenders)
        rates = {name: [] for name in names}
        for r in range(rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                rates[name].append(contenders[name]())
                print(f"  {model} round {r + 1} {name}: {rates[name][-1]:.1f} ex/s", flush=True)
        table.append((model, batch, rates))

    print(f"\nload after {open('/proc/loadavg').read().split()[:3]}\n")
    print("| net | batch | contender | median ex/s | min-max | vs gemm same layout | vs PyTorch best |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for model, batch, rates in table:
        med = {name: statistics.median(v) for name, v in rates.items()}
        torch_best = max((v for k, v in med.items() if k.startswith("PyTorch")), default=None)
        for name, v in rates.items():
            layout = name.split()[0]
            gemm = med.get(f"{layout} gemm")
            vs_gemm = f"{med[name] / gemm:.2f}x" if gemm and not name.startswith("PyTorch") else "-"
            vs_torch = f"{med[name] / torch_best:.2f}x" if torch_best else "-"
            print(f"| {model} | {batch} | {name} | {med[name]:.0f} | {min(v):.0f}-{max(v):.0f} | {vs_gemm} | {vs_torch} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
