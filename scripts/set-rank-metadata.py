#!/usr/bin/env python3
"""Marks a tunescope Chrome JSON trace (plain or .gz) as one rank's own trace of an MPI
run: sets otherData.extra rank, world_size, clock_offset_ns and
clock_offset_uncertainty_ns, as the ranks of `mpirun ... tunescope profile` write them.
Used to make a 2-rank input for `tunescope merge-traces` from two one-process runs
(scripts/gui-screenshot.sh); --align-to puts this trace's first event on another's, the
offset a ping-pong would measure had the two runs been simultaneous.

Usage: set-rank-metadata.py IN OUT --rank R --world-size N
           [--offset-ns NS | --align-to RANK0_TRACE] [--uncertainty-ns NS]
"""
import argparse
import gzip
import json
import sys


def load(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def first_start_ns(doc):
    """The earliest complete event, in ns on the trace's own clock."""
    origin = int(doc.get("otherData", {}).get("time_origin_ns", 0))
    starts = [e["ts"] for e in doc["traceEvents"] if e.get("ph") == "X"]
    if not starts:
        sys.exit("set-rank-metadata: no complete events to align")
    return origin + round(min(starts) * 1000)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world-size", type=int, required=True)
    parser.add_argument("--offset-ns", type=int)
    parser.add_argument("--align-to")
    parser.add_argument("--uncertainty-ns", type=int)
    args = parser.parse_args()
    if not 0 <= args.rank < args.world_size:
        sys.exit(f"set-rank-metadata: rank {args.rank} outside world size {args.world_size}")
    try:
        doc = load(args.input)
        extra = doc["otherData"]["extra"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"set-rank-metadata: {args.input}: not a tunescope trace ({e})")
    extra["rank"] = str(args.rank)
    extra["world_size"] = str(args.world_size)
    offset = args.offset_ns
    if args.align_to:
        offset = first_start_ns(doc) - first_start_ns(load(args.align_to))
    if offset is not None:
        extra["clock_offset_ns"] = str(offset)
    if args.uncertainty_ns is not None:
        extra["clock_offset_uncertainty_ns"] = str(args.uncertainty_ns)
    with open(args.output, "w", encoding="utf-8") as f:
        json.dump(doc, f)


if __name__ == "__main__":
    main()
