#!/usr/bin/env python3
"""Golden host programs: what `hir-lower` prints for every example and every
lit input (a `shard` program after `convert-shard-to-fusion`), in each option set, kept under test/Golden/ so that a change to the
passes that changes any of it shows as a diff (a refactor must show none, or
explain each in its commit).

For each input file (split at `// -----` as lit's --split-input-file does)
and each option set, the golden file holds hir-opt's output and its
diagnostics, with the repository's path replaced by `<root>` (or says that
they are the same as with the default options).

usage: golden.py --check     compare with test/Golden/ (exit 1 and a diff on any change)
       golden.py --update    rewrite test/Golden/
"""
import argparse
import difflib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "test" / "Golden"
OPTION_SETS = [
    "",
    "num-streams=2",
    "p2p=nccl",
    "p2p=cuda",
    "p2p=nccl ring-chunks=1",
    "p2p=cuda ring-chunks=2",
    "fuse=none",
]


def inputs():
    """The examples and the lit inputs, but the dialects' verifier and
    syntax tests, which no pass sees."""
    def reaches_passes(path):
        return not (path.parent.parent.name == "Dialect"
                    and path.stem in ("invalid", "syntax-errors"))
    return sorted(ROOT.glob("examples/*.mlir")) + sorted(
        path for path in (ROOT / "test").rglob("*.mlir")
        if "Output" not in path.parts and reaches_passes(path))


def lowered(hir_opt, path):
    sections = []
    for options in OPTION_SETS:
        # convert-shard-to-fusion imports a program written with upstream
        # shard and leaves every other as it is.
        pipeline = "builtin.module(convert-shard-to-fusion,hir-lower{%s})" % options
        done = subprocess.run([hir_opt, "--split-input-file", f"--pass-pipeline={pipeline}",
                               str(path)], capture_output=True, text=True, timeout=120)
        text = done.stdout
        if done.stderr:
            text += "".join(f"// stderr: {line}\n" for line in done.stderr.splitlines())
        text = f"(exit {done.returncode})\n" + text.replace(str(ROOT), "<root>")
        if sections and text == sections[0][1]:
            text = "same as hir-lower{}\n"
        sections.append((options, text))
    return "".join(f"// ===== hir-lower{{{options}}} {text}" for options, text in sections)


def golden_path(path):
    return GOLDEN / (str(path.relative_to(ROOT)).replace(os.sep, "__") + ".golden")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--update", action="store_true")
    parser.add_argument("--hir-opt", default=shutil.which("hir-opt")
                        or str(ROOT / "target" / "release" / "hir-opt"))
    args = parser.parse_args()

    expected = {golden_path(path): lowered(args.hir_opt, path) for path in inputs()}
    if args.update:
        if GOLDEN.exists():
            shutil.rmtree(GOLDEN)
        GOLDEN.mkdir(parents=True)
        for path, text in expected.items():
            path.write_text(text)
        print(f"golden: wrote {len(expected)} files to {GOLDEN.relative_to(ROOT)}")
        return 0
    changed = 0
    for path, text in expected.items():
        old = path.read_text() if path.exists() else ""
        if old != text:
            changed += 1
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(keepends=True), text.splitlines(keepends=True),
                str(path.relative_to(ROOT)), "now"))
    stale = sorted(set(GOLDEN.glob("*.golden")) - set(expected))
    for path in stale:
        print(f"golden: {path.relative_to(ROOT)} has no input any more")
    print(f"golden: {len(expected)} inputs x {len(OPTION_SETS)} option sets: "
          f"{changed} changed, {len(stale)} stale")
    return 1 if changed or stale else 0


if __name__ == "__main__":
    sys.exit(main())
