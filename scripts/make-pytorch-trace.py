#!/usr/bin/env python3
"""Writes a PyTorch-profiler (Kineto) Chrome trace of a few LeNet-5 training steps on
the CPU, the fixture tests/data/pytorch/lenet5-cpu-torch.json that tunescope's reader
is tested against. Needs torch (Debian: python3-torch).

usage: scripts/make-pytorch-trace.py OUT.json [--steps N]
"""
import argparse
import sys

try:
    import torch
    import torch.nn as nn
except ImportError as e:  # the caller decides whether that is a skip or a failure
    print(f"make-pytorch-trace: torch is not importable: {e}", file=sys.stderr)
    sys.exit(77)


def lenet5() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args()

    torch.manual_seed(0)
    torch.set_num_threads(1)  # small and repeatable
    model = lenet5()
    optimiser = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images, labels = torch.randn(16, 1, 28, 28), torch.randint(0, 10, (16,))
    activities = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
        model, images, labels = model.cuda(), images.cuda(), labels.cuda()
    # One warm-up step, then `steps` recorded: ProfilerStep#N user annotations appear.
    schedule = torch.profiler.schedule(wait=0, warmup=1, active=args.steps, repeat=1)
    with torch.profiler.profile(activities=activities, schedule=schedule, with_flops=True) as prof:
        for _ in range(1 + args.steps):
            with torch.profiler.record_function("forward"):
                loss = nn.functional.cross_entropy(model(images), labels)
            with torch.profiler.record_function("backward"):
                optimiser.zero_grad()
                loss.backward()
            optimiser.step()
            prof.step()
    prof.export_chrome_trace(args.out)
    print(f"make-pytorch-trace: torch {torch.__version__}, wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
