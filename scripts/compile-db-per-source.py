#!/usr/bin/env python3
"""Writes a compile database with one entry per source file, for clang-tidy.

A unity build (the test programs, tests/CMakeLists.txt) compiles batches of sources
through generated unity_N_cxx.cxx files, and CMake's compile_commands.json then names
only those. Each such entry is replaced here by one per source the batch includes,
with the batch's command; every other entry is kept as it is.

usage: compile-db-per-source.py BUILD_DIR OUT_DIR
"""
import json
import pathlib
import re
import sys


def per_source(entry):
    unity = pathlib.Path(entry["file"])
    if not re.fullmatch(r"unity_\d+_cxx\.cxx", unity.name):
        return [entry]
    sources = re.findall(r'^#include "([^"]+)"', unity.read_text(), re.MULTILINE)
    if not sources:
        sys.exit(f"compile-db-per-source: {unity} includes no sources")
    out = []
    for source in sources:
        e = dict(entry, file=source)
        if "command" in e:
            e["command"] = e["command"].replace(str(unity), source)
        if "arguments" in e:
            e["arguments"] = [source if a == str(unity) else a for a in e["arguments"]]
        out.append(e)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    build, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    db = build / "compile_commands.json"
    try:
        entries = json.loads(db.read_text())
    except (OSError, ValueError) as e:
        sys.exit(f"compile-db-per-source: cannot read {db}: {e}")
    expanded = [e for entry in entries for e in per_source(entry)]
    out.mkdir(parents=True, exist_ok=True)
    (out / "compile_commands.json").write_text(json.dumps(expanded, indent=1))


if __name__ == "__main__":
    main()
