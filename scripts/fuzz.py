#!/usr/bin/env python3
"""Mutation fuzzing of HIR's tools: no input may make them panic, crash or hang.

Takes the lit inputs and the examples (split at `// -----`), mutates them
with a seeded generator (lines deleted, duplicated or swapped, numbers
replaced by edge values, types, parallel types and SSA names exchanged,
text truncated or spliced with bytes), and runs every mutant through
`hir-opt --hir-lower` and through `hir-run` on the cpu backend, on as many
ranks as its mesh has (with `--check` for a fusion program). Each run ends in one of:

  ok       exit 0
  error    a non-zero exit with a diagnostic (`error:` on stderr)
  panic    a Rust panic (exit 101 or `panicked at`)
  crash    a signal, or a non-zero exit without a diagnostic
  busy     still running after the time limit, computing all along: a
           program that does not end (valid MLIR may loop 2^63 times)
  hang     still running after the time limit, mostly waiting

Panics, crashes and hangs fail the run (exit 1); their mutants are written
to --keep for reproduction, and so are the busy ones, which do not fail it. The run is deterministic for a seed, and bounded
both by --mutants and by --seconds (whichever ends first).

usage: fuzz.py [--mutants N] [--seconds S] [--seed K] [--bin DIR] [--keep DIR]
"""
import argparse
import os
import random
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EDGE_NUMBERS = ["0", "1", "-1", "2", "3", "7", "65536", "2147483648",
                "9223372036854775807", "18446744073709551616", "-9223372036854775808"]
TYPES = ["f32", "bf16", "f16", "f64", "i32", "i64", "i1", "index"]
PARALLEL = ["serial", "didx", "stream"]
# What a mutant's process may take: a large allocation fails fast instead of
# paging the machine to death.
MEMORY_LIMIT = 8 << 30


def seeds():
    """The chunks of every lit input and example, without comments: those
    meant to be valid, and those a verifier is meant to reject."""
    # Not lit's Output/ folders: the seeds are the same on every machine.
    files = sorted(path for path in (ROOT / "test").rglob("*.mlir")
                   if "Output" not in path.parts) + sorted((ROOT / "examples").glob("*.mlir"))
    valid, invalid = [], []
    for path in files:
        text = path.read_text(errors="replace")
        for chunk in re.split(r"^// -----.*$", text, flags=re.M):
            lines = [line for line in chunk.splitlines()
                     if not line.lstrip().startswith("//")]
            if any(line.strip() for line in lines):
                seed = (path.relative_to(ROOT), "\n".join(lines) + "\n")
                (invalid if "expected-error" in chunk else valid).append(seed)
    return valid, invalid


def mutate(text, rng):
    lines = text.splitlines()
    kind = rng.randrange(9)
    if kind == 0 and lines:
        del lines[rng.randrange(len(lines))]
    elif kind == 1 and lines:
        index = rng.randrange(len(lines))
        lines.insert(index, lines[index])
    elif kind == 2 and len(lines) > 1:
        a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[a], lines[b] = lines[b], lines[a]
    elif kind == 3:
        numbers = list(re.finditer(r"(?<![%@\w])\d+", text))
        if numbers:
            match = rng.choice(numbers)
            return text[:match.start()] + rng.choice(EDGE_NUMBERS) + text[match.end():]
    elif kind == 4:
        found = [m for t in TYPES for m in re.finditer(r"\b%s\b" % t, text)]
        if found:
            match = rng.choice(found)
            return text[:match.start()] + rng.choice(TYPES) + text[match.end():]
    elif kind == 5:
        found = [m for p in PARALLEL for m in re.finditer(r"\b%s\b" % p, text)]
        if found:
            match = rng.choice(found)
            return text[:match.start()] + rng.choice(PARALLEL) + text[match.end():]
    elif kind == 6:
        names = list(re.finditer(r"%[\w]+", text))
        if len(names) > 1:
            match, other = rng.choice(names), rng.choice(names)
            return text[:match.start()] + other.group(0) + text[match.end():]
    elif kind == 7 and text:
        return text[:rng.randrange(len(text))]
    else:
        at = rng.randrange(len(text) + 1)
        noise = "".join(rng.choice("{}[]()<>,:=%@#!x0123456789 \n\"") for _ in range(rng.randrange(1, 8)))
        return text[:at] + noise + text[at:]
    return "\n".join(lines) + "\n"


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


SLOWEST = [0.0, ""]


def cpu_seconds(pid):
    """CPU time the process `pid` has used (all its threads), or 0 if gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(command, timeout):
    began = time.monotonic()
    # Mutants are compiled once each: the compile cache would only fill up.
    env = dict(os.environ, HIR_CACHE="0")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, preexec_fn=limit_memory, env=env)
    try:
        _, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # Computing all along is a program that does not end (a loop of
        # 2^63 steps is valid MLIR); waiting is a hang.
        busy = cpu_seconds(process.pid) >= timeout / 2
        process.kill()
        process.communicate()
        return ("busy" if busy else "hang"), ""
    finally:
        took = time.monotonic() - began
        if took > SLOWEST[0]:
            SLOWEST[:] = [took, " ".join(command)]
    stderr = stderr.decode(errors="replace")
    if process.returncode == 0:
        return "ok", stderr
    if process.returncode == 101 or "panicked at" in stderr:
        return "panic", stderr
    if process.returncode < 0 or "error" not in stderr.lower():
        return "crash", stderr
    return "error", stderr


def ranks_of(text):
    mesh = re.search(r"fusion\.mesh\s+@\w+\s*=\s*\[([^\]]*)\]", text)
    if not mesh:
        return 1
    count = len([d for d in mesh.group(1).split(",") if d.strip()])
    return min(max(count, 1), 8)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mutants", type=int, default=2500)
    parser.add_argument("--seconds", type=float, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bin", type=Path, default=ROOT / "target" / "release")
    parser.add_argument("--keep", type=Path, default=ROOT / "target" / "fuzz")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    valid, invalid = seeds()
    work = args.keep / "work"
    work.mkdir(parents=True, exist_ok=True)
    counts = {tool: {"ok": 0, "error": 0, "busy": 0, "panic": 0, "crash": 0, "hang": 0}
              for tool in ("hir-opt", "hir-run")}
    failures = []
    began = time.monotonic()
    tried = 0
    for tried in range(1, args.mutants + 1):
        if time.monotonic() - began > args.seconds:
            tried -= 1
            break
        # Mostly small changes to programs that run, so that many mutants
        # get past the verifiers into the passes and the runtime.
        origin, text = rng.choice(valid if rng.random() < 0.85 else invalid)
        for _ in range(1 if rng.random() < 0.7 else rng.randrange(2, 4)):
            text = mutate(text, rng)
        mutant = work / f"mutant-{tried}.mlir"
        mutant.write_text(text)
        commands = {
            "hir-opt": ([str(args.bin / "hir-opt"), "--hir-lower", str(mutant)], 20),
            # hir-run's own --timeout bounds a rank's waits; the limit here is above it.
            # --check compares a fusion program with its reference; host IR
            # runs on random inputs.
            "hir-run": ([str(args.bin / "hir-run"), "-n", str(ranks_of(text)), "--timeout", "5"]
                        + (["--check"] if "fusion." in text else []) + [str(mutant)], 60),
        }
        for tool, (command, limit) in commands.items():
            outcome, stderr = run(command, limit)
            counts[tool][outcome] += 1
            if outcome == "busy":
                # Not a failure, but kept for a look: a spin where the tools
                # should wait or fail would show here too.
                (args.keep / f"busy-{tried}-{tool}.mlir").write_text(text)
            if outcome in ("panic", "crash", "hang"):
                kept = args.keep / f"{outcome}-{tried}-{tool}.mlir"
                kept.write_text(f"// from {origin}; seed {args.seed}, mutant {tried}\n"
                                f"// {' '.join(command)}\n{text}")
                failures.append((kept, outcome, stderr.strip().splitlines()[-3:]))
        mutant.unlink()
    elapsed = time.monotonic() - began
    for tool, count in counts.items():
        total = sum(count.values())
        print(f"fuzz: {tool}: {total} runs: {count['ok']} ok, {count['error']} clean errors, "
              f"{count['busy']} never ending (busy at the limit), "
              f"{count['panic']} panics, {count['crash']} crashes, {count['hang']} hangs")
    for kept, outcome, tail in failures:
        print(f"fuzz: {outcome}: {kept}")
        for line in tail:
            print(f"fuzz:   {line}")
    print(f"fuzz: slowest run {SLOWEST[0]:.1f}s: {SLOWEST[1]}")
    print(f"fuzz: {tried} mutants of {len(valid)} valid and {len(invalid)} invalid seed chunks "
          f"in {elapsed:.0f}s (seed {args.seed})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
