#!/usr/bin/env python3
"""Fails when a source file includes a header of a layer it must not depend on.

The layers and what each may include are the table below, the one definition of
docs/ARCHITECTURE.md's "Layers". The build runs this check (target `check_layers`, part
of `all`) and CTest runs it too, so a wrong include fails the build, not only a review.

Usage: check-layers.py [REPO_ROOT]      (default: the folder above this script)
"""
import pathlib
import re
import sys

# folder -> the folders its files may include (its own is always allowed).
# Tests, benchmarks and fuzzers may include anything.
ALLOWED = {
    "profiler": [],
    "core/base": ["profiler"],
    "core/engine": ["core/base", "profiler"],
    "core/tuner": ["core/engine", "core/base", "profiler"],
    # Model files registered with the engine by extension (core/engine/ModelFiles.h).
    "models/onnx": ["core/engine", "core/base", "profiler"],
    # The rank runtime, registered with core/base/Ranks.h as the kernels register theirs.
    "comm/mpi": ["core/base", "profiler"],
    "kernels/shared": ["core/base", "profiler"],
    "kernels/cpu": ["kernels/shared", "core/base", "profiler"],
    "kernels/onednn": ["kernels/shared", "core/base", "profiler"],
    "kernels/cuda": ["kernels/shared", "core/base", "profiler"],
    "cli": ["core/tuner", "core/engine", "core/base", "profiler"],
    # The GUI reads traces through profiler/ and results through core/tuner; it runs the
    # CLI for anything that needs the engine or the kernels. Its own folders are
    # included relative to gui/ ("models/...", "widgets/...").
    "gui": ["core/tuner", "profiler", "models", "widgets", "bench"],
}

# Every folder a quoted include can start from: a layer, or gui's own subfolders.
KNOWN_ROOTS = sorted(set(ALLOWED) | {"models", "widgets", "bench", "tests"}, key=len, reverse=True)
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
SOURCES = (".h", ".hpp", ".cpp", ".cu", ".cuh")


def layer_of(path: pathlib.Path, root: pathlib.Path):
    rel = path.relative_to(root).as_posix()
    for layer in sorted(ALLOWED, key=len, reverse=True):
        if rel.startswith(layer + "/"):
            return layer
    return None


def target_root(include: str):
    for known in KNOWN_ROOTS:
        if include.startswith(known + "/"):
            return known
    return None  # a header beside the file, or a system/third-party header


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent).resolve()
    problems = []
    checked = 0
    for layer in ALLOWED:
        folder = root / layer
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            if path.suffix not in SOURCES or layer_of(path, root) != layer:
                continue
            checked += 1
            text = path.read_text(encoding="utf-8", errors="replace")
            for match in INCLUDE.finditer(text):
                include = match.group(1)
                target = target_root(include)
                if target is None or target == layer or target in ALLOWED[layer]:
                    continue
                line = text.count("\n", 0, match.start()) + 1
                problems.append(f"{path.relative_to(root)}:{line}: layer {layer} must not include "
                                f'"{include}" (layer {target}); it may include: '
                                f"{', '.join([layer] + ALLOWED[layer])}")
    if checked == 0:
        print(f"check-layers: no sources found under {root}", file=sys.stderr)
        return 2
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"check-layers: {len(problems)} include(s) against the layers "
              "(scripts/check-layers.py, docs/ARCHITECTURE.md \"Layers\")", file=sys.stderr)
        return 1
    print(f"check-layers: {checked} files follow the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
