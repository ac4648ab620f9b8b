#!/usr/bin/env python3
"""tunescope beside PyTorch on the same two nets, batches, threads and optimizer.

For each case (lenet5 batch 256, resnet18-small batch 128 and 512) it tunes tunescope
once (`tunescope tune`, per-layer find over the net's candidate algorithms, wall time
reported; the tuned contender runs the config file that tune writes), then runs rounds that alternate four
contenders -- tunescope default config, tunescope tuned config, PyTorch contiguous
(NCHW) and PyTorch channels_last -- rotating their order every round, and prints the
median examples/s of each and the ratios tunescope / PyTorch as a Markdown table, then the
paired ratio: per round, tuned / the better PyTorch layout, its median and range.

Like for like: the PyTorch nets below mirror core/engine/Models.cpp layer by layer; the
parameter counts of both sides are printed (tunescope's from the `sgd` kernels of its
own trace: each update reads 5 flops per parameter), and both sides must show a falling
loss. Fake data on both sides (tunescope's generated fake set; PyTorch one fixed random
batch), SGD lr 0.02, momentum 0.9, weight decay 5e-4 (tunescope's defaults), softmax
cross-entropy. OMP_WAIT_POLICY passes through to PyTorch: on a loaded machine GNU
OpenMP's default spin-waiting slows it several-fold (see docs/BENCHMARKS.md).
tunescope's figure is `tunescope profile`'s traced steps (tracer on, its
input pipeline included); PyTorch's is the same number of steps on a batch already in
memory.

usage: peers.py --build BUILD_DIR [--threads 2] [--quick] [--device cpu|cuda]
                [--case MODEL:BATCH ...] [--tuned-config PATH] [--unfused] [--rounds N]
                [--tune-space net|all]
--case runs only the named cases; --tuned-config runs that config as "tunescope tuned"
instead of tuning (one case); --unfused adds the tuned config with fuse=off as a fifth
contender, so fusion is measured beside everything else in the same rounds.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

LR, MOMENTUM, WEIGHT_DECAY, CLASSES = 0.02, 0.9, 5e-4, 10


# ---- the nets of core/engine/Models.cpp ----

class LeNet5(nn.Module):
    """conv 5x5 6 -> relu -> maxpool 2 -> conv 5x5 16 -> relu -> maxpool 2 -> fc 120 -> relu
    -> fc 84 -> relu -> fc 10, on 1x32x32."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, bias=True)
        self.conv2 = nn.Conv2d(6, 16, 5, bias=True)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, CLASSES)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class BasicBlock(nn.Module):
    """conv3x3-bn-relu-conv3x3-bn plus identity or 1x1 projection + bn, then relu (no conv bias)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout, eps=1e-5)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout, eps=1e-5)
        self.proj = None
        if stride != 1 or cin != cout:
            self.proj = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, 0, bias=False), nn.BatchNorm2d(cout, eps=1e-5))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (self.proj(x) if self.proj is not None else x))


class ResNet18Small(nn.Module):
    """stem conv3x3 16 + bn + relu, 4 stages x 2 basic blocks (16, 32, 64, 128; stride 2 at the
    first block of stages 2-4), global average pool, fc 10, on 3x32x32."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16, eps=1e-5)
        blocks, cin = [], 16
        for stage, width in enumerate((16, 32, 64, 128)):
            for block in range(2):
                blocks.append(BasicBlock(cin, width, 2 if stage > 0 and block == 0 else 1))
                cin = width
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(128, CLASSES)

    def forward(self, x):
        x = self.blocks(F.relu(self.bn1(self.conv1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


NETS = {"lenet5": (LeNet5, 1), "resnet18-small": (ResNet18Small, 3)}


class TorchContender:
    """One PyTorch net, optimizer and fixed fake batch, kept across rounds (warm, as a
    training job is)."""

    def __init__(self, model, batch, channels_last, device):
        net_class, channels = NETS[model]
        torch.manual_seed(1)
        self.device = device
        self.batch = batch
        fmt = torch.channels_last if channels_last else torch.contiguous_format
        self.net = net_class().to(device=device, memory_format=fmt)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=LR, momentum=MOMENTUM, weight_decay=WEIGHT_DECAY)
        self.x = torch.rand(batch, channels, 32, 32, device=device).contiguous(memory_format=fmt)
        self.y = (torch.arange(batch, device=device) % CLASSES)
        self.parameters = sum(p.numel() for p in self.net.parameters())

    def step(self):
        self.opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(self.net(self.x), self.y)
        loss.backward()
        self.opt.step()
        return loss

    def run(self, warmup, steps):
        losses = [self.step().item() for _ in range(warmup)]
        sync()
        start = time.perf_counter()
        timed = [self.step() for _ in range(steps)]
        sync()
        seconds = time.perf_counter() - start
        losses += [l.item() for l in timed]
        return self.batch * steps / seconds, losses


def sync():
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


# ---- tunescope through its CLI ----

PROGRESS_LOSS = re.compile(r"loss ([0-9.]+)")
TRACED = re.compile(r"^(\d+) traced steps: [0-9.]+ s, ([0-9.]+) ex/s", re.M)


class TunescopeContender:
    def __init__(self, cli, model, batch, threads, backend, config=None, extra=()):
        self.cli, self.model, self.batch, self.threads, self.backend, self.config = (
            cli, model, batch, threads, backend, config)
        self.extra = list(extra)  # flags after --config override its values

    def command(self, warmup, steps, trace=None):
        cmd = [self.cli, "profile", "--model", self.model, "--batch", str(self.batch), "--data", "fake",
               "--fake-count", str(self.batch * (warmup + steps)), "--test-limit", "1",
               "--warmup", str(warmup), "--steps", str(steps), "--threads", str(self.threads),
               "--backend", self.backend]
        if self.config:
            cmd += ["--config", self.config]
        cmd += self.extra
        if trace:
            cmd += ["--trace", trace]
        return cmd

    def run(self, warmup, steps, trace=None):
        out = run_checked(self.command(warmup, steps, trace))
        match = TRACED.search(out)
        if not match:
            sys.exit(f"peers: no 'traced steps' line in the output of {' '.join(self.command(warmup, steps))}:\n{out}")
        # Progress lines print the running mean loss of the bar; the last of each bar is its mean.
        losses = [float(v) for v in PROGRESS_LOSS.findall(out)]
        return float(match.group(2)), losses


def run_checked(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        sys.exit(f"peers: {' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout}")
    return proc.stdout.replace("\r", "\n")


def tunescope_parameters(trace_path):
    """Parameters of tunescope's net from its trace: every step updates each parameter tensor
    once with an `sgd` kernel of 5 flops per element (kernels/cpu/SgdCpu.cpp)."""
    with open(trace_path) as f:
        events = json.load(f)["traceEvents"]
    steps = sum(1 for e in events if e.get("ph") == "X" and e.get("name") == "train_step")
    flops = sum(e["args"]["flops"] for e in events if e.get("ph") == "X" and e.get("name") == "sgd")
    return round(flops / 5 / steps) if steps else 0


# What `tunescope tune` searches per net on the cpu backend: the per-layer find over the
# algorithms that can win there (the others lose by 2x or more on every layer of these nets,
# docs/BENCHMARKS.md "Roofline"; under load a noisy find picked them on a few layers), both
# layouts. --tune-space all searches everything registered with the default strategy.
# ResNet-18-small's find runs NHWC only: NCHW is slower with every algorithm there (problem 1
# of docs/ARCHITECTURE.md), and the find at batch 512 takes minutes per layout.
TUNE_SPACE = {
    "lenet5": ["--strategy", "per-layer", "--algorithms",
               "direct,direct-small,direct-lanes,fft-own,onednn:auto,onednn:direct"],
    "resnet18-small": ["--strategy", "per-layer", "--layout-list", "nhwc", "--algorithms",
                       "winograd,onednn:auto,onednn:direct,onednn:winograd"],
}


# Minimum timed steps per trial: LeNet-5's steps take milliseconds, and with two its find
# picked on noise under load (direct over direct-small on conv1, against every rerun).
TUNE_STEPS = {"lenet5": 10, "resnet18-small": 2}


def tune(cli, model, batch, threads, backend, budget, out, space):
    cmd = [cli, "tune", "--model", model, "--batch", str(batch), "--data", "fake",
           "--fake-count", str(batch * 4), "--test-limit", "1", "--threads-list", str(threads),
           "--backend", backend, "--warmup", "1", "--steps", str(TUNE_STEPS.get(model, 2)), "-o", out]
    if space == "net" and backend == "cpu":
        # The find runs before any candidate and is not cut by --budget; a budget it used up
        # would leave only the baseline, so these tunes run without one.
        cmd += TUNE_SPACE[model]
    else:
        cmd += ["--budget", str(budget)]
    start = time.perf_counter()
    log = run_checked(cmd)
    seconds = time.perf_counter() - start
    winner = re.search(r"^winner: (.*), [0-9.]+ ex/s", log, re.M)
    return seconds, winner.group(1) if winner else "?", " ".join(cmd)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True, help="build folder with the tunescope binary")
    parser.add_argument("--threads", type=int, default=2, help="threads of both sides (default 2)")
    parser.add_argument("--quick", action="store_true", help="one round of few steps: checks the script, not a figure")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                        help="cuda: PyTorch with cudnn.benchmark and tunescope --backend cuda (not run on this machine yet)")
    parser.add_argument("--case", action="append", default=[], metavar="MODEL:BATCH",
                        help="run only this case (repeatable), e.g. resnet18-small:128")
    parser.add_argument("--tuned-config", help="config JSON to run as 'tunescope tuned' instead of tuning (one case)")
    parser.add_argument("--unfused", action="store_true", help="add the tuned config with --fuse off as a contender")
    parser.add_argument("--rounds", type=int, help="rounds per case (default: the case's)")
    parser.add_argument("--tune-space", choices=["net", "all"], default="net",
                        help="net (default): per-layer find over each net's candidate algorithms "
                             "(TUNE_SPACE); all: every algorithm, the default strategy")
    args = parser.parse_args()
    cli = os.path.join(args.build, "tunescope")
    if not os.access(cli, os.X_OK):
        sys.exit(f"peers: no {cli}: build the tunescope target first")
    if args.device == "cuda":
        if not torch.cuda.is_available():
            sys.exit("peers: --device cuda but PyTorch sees no CUDA device")
        torch.backends.cudnn.benchmark = True
    torch.set_num_threads(args.threads)

    # (model, batch, rounds, warmup, steps, tune budget s): resnet 512 takes fewer steps.
    cases = [("lenet5", 256, 5, 3, 20, 20), ("resnet18-small", 128, 3, 1, 3, 45), ("resnet18-small", 512, 3, 1, 1, 60)]
    if args.quick:
        cases = [(m, b, 1, 1, 2, 5) for m, b, *_ in cases[:2]]
    if args.case:
        cases = [c for c in cases if f"{c[0]}:{c[1]}" in args.case]
        if len(cases) != len(args.case):
            sys.exit(f"peers: --case takes lenet5:256, resnet18-small:128 or resnet18-small:512, got {args.case}")
    if args.tuned_config and len(cases) != 1:
        sys.exit("peers: --tuned-config needs exactly one --case")
    if args.rounds:
        cases = [(m, b, args.rounds, w, st, bu) for m, b, _, w, st, bu in cases]

    print(f"machine: {cpu_model()}, {os.cpu_count()} cores; threads {args.threads}; torch {torch.__version__}; "
          f"device {args.device}; OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(default)')}; "
          f"load {open('/proc/loadavg').read().split()[:3]}", flush=True)
    work = tempfile.mkdtemp(prefix="tunescope-peers-")
    print(f"work folder (tuned configs, traces): {work}", flush=True)
    rows, checks = [], []
    for model, batch, rounds, warmup, steps, budget in cases:
        if args.tuned_config:
            tuned_path, tune_seconds, winner = args.tuned_config, 0.0, args.tuned_config
            print(f"\n{model} batch {batch}: tuned config given: {tuned_path}", flush=True)
        else:
            tuned_path = os.path.join(work, f"tuned-{model}-{batch}.json")
            tune_seconds, winner, tune_cmd = tune(cli, model, batch, args.threads, args.device, budget, tuned_path,
                                                 args.tune_space)
            print(f"\n{model} batch {batch}: tuned in {tune_seconds:.0f} s -> {winner}\n  ({tune_cmd})", flush=True)
        contenders = {
            "tunescope default": TunescopeContender(cli, model, batch, args.threads, args.device),
            "tunescope tuned": TunescopeContender(cli, model, batch, args.threads, args.device, tuned_path),
            "PyTorch NCHW": TorchContender(model, batch, False, args.device),
            "PyTorch channels_last": TorchContender(model, batch, True, args.device),
        }
        if args.unfused:
            contenders["tunescope tuned fuse=off"] = TunescopeContender(
                cli, model, batch, args.threads, args.device, tuned_path, ["--fuse=off"])
        names = list(contenders)
        rates = {name: [] for name in names}
        for r in range(rounds):
            order = names[r % len(names):] + names[:r % len(names)]  # each contender leads once in a while
            for name in order:
                trace = os.path.join(work, f"{model}-{batch}.json") if r == 0 and name == "tunescope default" else None
                c = contenders[name]
                rate, losses = c.run(warmup, steps, trace) if trace else c.run(warmup, steps)
                rates[name].append(rate)
                first, last = (losses[0], losses[-1]) if len(losses) >= 2 else (None, None)
                if r == 0:
                    checks.append((model, batch, name, first, last))
                trend = f"loss {first:.3f} -> {last:.3f}" if first is not None else "too few steps for a loss trend"
                print(f"  round {r + 1} {name}: {rate:.1f} ex/s ({trend})", flush=True)
        ours = tunescope_parameters(os.path.join(work, f"{model}-{batch}.json"))
        theirs = contenders["PyTorch NCHW"].parameters
        print(f"  parameters: tunescope {ours}, PyTorch {theirs}{'' if ours == theirs else '  MISMATCH'}")
        med = {name: statistics.median(v) for name, v in rates.items()}
        rows.append((model, batch, med, rates, tune_seconds, winner, ours, theirs))

    print("\n| net | batch | tunescope default ex/s | tunescope tuned ex/s | tune s | PyTorch NCHW ex/s "
          "| PyTorch channels_last ex/s | default / PT NCHW | tuned / PT NCHW | tuned / PT best |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for model, batch, med, rates, tune_seconds, winner, _, _ in rows:
        d, t = med["tunescope default"], med["tunescope tuned"]
        pn, pc = med["PyTorch NCHW"], med["PyTorch channels_last"]
        print(f"| {model} | {batch} | {d:.0f} | {t:.0f} | {tune_seconds:.0f} | {pn:.0f} | {pc:.0f} "
              f"| {d / pn:.2f}x | {t / pn:.2f}x | {t / max(pn, pc):.2f}x |")
    if args.unfused:
        print("\nfusion: " + "; ".join(
            f"{m} {b}: tuned {med['tunescope tuned']:.0f} ex/s vs fuse=off {med['tunescope tuned fuse=off']:.0f} ex/s "
            f"= {med['tunescope tuned'] / med['tunescope tuned fuse=off']:.2f}x" for m, b, med, *_ in rows))
    print("\npaired (per round: tuned / the better PyTorch layout in the same round; median, min-max): " + "; ".join(
        f"{m} {b}: {statistics.median(p):.2f}x ({min(p):.2f}-{max(p):.2f})"
        for m, b, p in ((m, b, paired_ratios(rates)) for m, b, _, rates, *_ in rows)))
    print("tuned configs: " + "; ".join(f"{m} {b}: {w}" for m, b, _, _, _, w, _, _ in rows))
    print("spread (min-max ex/s over rounds): " + "; ".join(
        f"{m} {b} {name}: {min(v):.0f}-{max(v):.0f}" for m, b, _, rates, *_ in rows for name, v in rates.items()))
    print(f"load after: {open('/proc/loadavg').read().split()[:3]}")

    # A run of one traced step prints no running loss; those (resnet 512) are the same net as at 128.
    failed = [c for c in checks if c[3] is not None and not c[4] < c[3]]
    params_ok = all(r[6] == r[7] for r in rows)
    for model, batch, name, first, last in failed:
        print(f"peers: {name} on {model} batch {batch}: loss did not fall ({first:.3f} -> {last:.3f})", file=sys.stderr)
    if not params_ok:
        print("peers: parameter counts differ: the nets do not match", file=sys.stderr)
    return 1 if failed or not params_ok else 0


def paired_ratios(rates):
    """tuned / max(PyTorch NCHW, channels_last) round by round: the load that comes and goes
    hits the contenders of one round alike, so the paired ratio moves less than the medians'."""
    return [t / max(n, c) for t, n, c in zip(rates["tunescope tuned"], rates["PyTorch NCHW"],
                                              rates["PyTorch channels_last"])]


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
