#!/usr/bin/env python3
"""A bounded fuzz of the `hir` Python API (issue 41, item 7): seeded random
calls of compiled programs on the cpu backend, with arrays of random dtypes,
shapes, strides, memory orders and counts, outputs given or not, single
calls and `run_ranks`, from several threads at once. Each call must either
return outputs equal to numpy's computation of the same program, or raise
one of the API's documented errors (`hir.HirError` and its subclasses,
`TypeError`, `ValueError`); anything else is a finding: another exception,
a wrong answer, or the process dying (a crash or an abort), which the
parent sees as the child's exit by a signal. Findings name the seed and the
call, so that `--seed S --calls N` replays them.

    scripts/fuzz_python.py --seconds 60          # as ./test.sh runs it
    scripts/fuzz_python.py --seed 7 --calls 500  # one child, one seed
    scripts/fuzz_python.py --seed 1 --wrong      # the self-check: must fail

`--wrong` gives the checker a wrong meaning of one program (a @ b - c), so
that a run that reports nothing proves the check compares outputs.
"""

import argparse
import os
import subprocess
import sys
import threading
import time

import numpy as np

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples")

# One-rank programs and their numpy meaning (on f64, then rounded to f32).
ADD_MATMUL = """
fusion.mesh @dev = [0]
func.func @f(%a: tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>,
             %b: tensor<16x4xf32, #fusion.dist<@dev, [serial, serial]>>,
             %c: tensor<8x4xf32, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<8x4xf32, #fusion.dist<@dev, [serial, serial]>> {
  %p = fusion.matmul %a, %b : tensor<8x16xf32, #fusion.dist<@dev, [serial, serial]>>,
                              tensor<16x4xf32, #fusion.dist<@dev, [serial, serial]>>
                           -> tensor<8x4xf32, #fusion.dist<@dev, [serial, serial]>>
  %y = fusion.add %p, %c : tensor<8x4xf32, #fusion.dist<@dev, [serial, serial]>>,
                           tensor<8x4xf32, #fusion.dist<@dev, [serial, serial]>>
                        -> tensor<8x4xf32, #fusion.dist<@dev, [serial, serial]>>
  return %y : tensor<8x4xf32, #fusion.dist<@dev, [serial, serial]>>
}
"""

INT_NEG = """
fusion.mesh @dev = [0]
func.func @g(%a: tensor<5x3xi32, #fusion.dist<@dev, [serial, serial]>>)
    -> tensor<5x3xi32, #fusion.dist<@dev, [serial, serial]>> {
  %y = fusion.neg %a : tensor<5x3xi32, #fusion.dist<@dev, [serial, serial]>>
                    -> tensor<5x3xi32, #fusion.dist<@dev, [serial, serial]>>
  return %y : tensor<5x3xi32, #fusion.dist<@dev, [serial, serial]>>
}
"""

DTYPES = [np.float32, np.float16, np.float64, np.int32, np.int64, np.int8, np.uint8, np.bool_, np.complex64]
ALLOWED = None  # (hir.HirError, TypeError, ValueError), set once hir is imported


class Finding(Exception):
    pass


def array(rng, shape, dtype, layout):
    """A random array of `shape` and `dtype` in memory `layout`: 0
    contiguous, 1 read-only, 2 Fortran order, 3 a strided slice of a larger
    one."""
    base = rng.standard_normal(shape) * 3
    data = base.astype(dtype) if dtype is not np.bool_ else base > 0
    if layout == 1:
        data = data.copy()
        data.setflags(write=False)
    elif layout == 2:
        data = np.asfortranarray(data)
    elif layout == 3 and len(shape) > 0:
        bigger = np.zeros(tuple(2 * n for n in shape), dtype=data.dtype)
        view = bigger[tuple(slice(None, None, 2) for _ in shape)]
        view[...] = data
        data = view
    return data


def perturbed(rng, shape):
    """A shape other than `shape`."""
    choice = rng.integers(3)
    if choice == 0 and shape:
        return shape[:-1]
    if choice == 1:
        return shape + (1,)
    return (shape[0] + 1,) + shape[1:] if shape else (2,)


def well_formed(arrays, shapes, dtype):
    return len(arrays) == len(shapes) and all(
        isinstance(a, np.ndarray)
        and a.shape == s
        and a.dtype == dtype
        and a.flags.c_contiguous
        for a, s in zip(arrays, shapes)
    )


def call(hir, rng, program, shapes, dtype, meaning, outputs):
    """One random call of `program` (inputs of `shapes`, `outputs` output
    shapes), checked as the module's doc says."""
    # Half the calls are well formed; the others have one fault of a kind.
    fault = int(rng.integers(12)) if rng.integers(2) else -1
    dtypes = [dtype] * len(shapes)
    arg_shapes = list(shapes)
    layouts = [int(rng.integers(6) == 0) for _ in shapes]
    which = int(rng.integers(len(shapes)))
    if fault in (0, 1):
        dtypes[which] = DTYPES[rng.integers(len(DTYPES))]
    elif fault in (2, 3):
        arg_shapes[which] = perturbed(rng, shapes[which])
    elif fault in (4, 5):
        layouts[which] = int(rng.integers(2, 4))
    arrays = [array(rng, s, d, lay) for s, d, lay in zip(arg_shapes, dtypes, layouts)]
    if fault == 6:
        arrays = arrays[:-1]
    elif fault == 7:
        arrays.append(array(rng, (3,), dtype, 0))
        arrays.append(array(rng, (3,), dtype, 0))
    elif fault == 8:
        arrays[which] = [1.0, 2.0] if rng.integers(2) else None
    given = []
    if rng.integers(4) == 0 and len(arrays) == len(shapes):
        out_shapes = [perturbed(rng, s) if fault == 9 else s for s in outputs]
        out_dtype = DTYPES[rng.integers(len(DTYPES))] if fault == 10 else dtype
        given = [np.zeros(s, dtype=out_dtype) for s in out_shapes]
    try:
        result = program(*arrays, *given)
    except ALLOWED:
        return "refused"
    if not well_formed(arrays + given, shapes + outputs[: len(given)], dtype):
        raise Finding(f"{program.name} took ill-formed arguments {describe(arrays + given)} without an error")
    expected = meaning(*[a.astype(np.float64) for a in arrays]).astype(dtype)
    got = given[0] if given else result
    if dtype == np.float32:
        ok = np.allclose(got, expected, rtol=1e-4, atol=1e-4)
    else:
        ok = np.array_equal(got, expected)
    if not ok:
        raise Finding(f"{program.name}: wrong answer for {describe(arrays)}")
    return "ran"


def describe(arrays):
    return [
        (a.shape, str(a.dtype), a.strides) if isinstance(a, np.ndarray) else type(a).__name__ for a in arrays
    ]


def child(seed, calls, wrong):
    """Runs `calls` random calls from seed `seed`, several from threads at
    once; prints the outcome counts, exits 1 on a finding."""
    global ALLOWED
    import hir

    ALLOWED = (hir.HirError, TypeError, ValueError)
    rng = np.random.default_rng(seed)
    programs = [
        (
            hir.compile(ADD_MATMUL),
            [(8, 16), (16, 4), (8, 4)],
            np.float32,
            (lambda a, b, c: a @ b - c) if wrong else (lambda a, b, c: a @ b + c),
            [(8, 4)],
        ),
        (hir.compile(INT_NEG), [(5, 3)], np.int32, lambda a: -a, [(5, 3)]),
    ]
    sum4 = hir.compile(os.path.join(EXAMPLES, "sum.mlir"))
    counts = {"ran": 0, "refused": 0}
    lock = threading.Lock()
    findings = []

    def work(thread_seed, n):
        local = np.random.default_rng(thread_seed)
        for index in range(n):
            program, shapes, dtype, meaning, outputs = programs[local.integers(len(programs))]
            try:
                outcome = call(hir, local, program, shapes, dtype, meaning, outputs)
            except Finding as finding:
                findings.append(f"seed {seed} thread {thread_seed} call {index}: {finding}")
                return
            except BaseException as error:  # noqa: BLE001 - any other error is a finding
                findings.append(f"seed {seed} thread {thread_seed} call {index}: {type(error).__name__}: {error}")
                return
            with lock:
                counts[outcome] += 1

    done = 0
    while done < calls and not findings:
        threads = int(rng.integers(1, 5))
        n = int(min(calls - done, rng.integers(5, 40)))
        pool = [threading.Thread(target=work, args=(int(rng.integers(1 << 30)), n)) for _ in range(threads)]
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
        done += n * threads
        # The 4-rank sum through run_ranks, on a world of 4 threads, with
        # one rank's row sometimes wrong.
        hir.init(world_size=4)
        rows = [array(rng, perturbed(rng, (8,)) if rng.integers(8) == 0 else (8,), np.float32, 0) for _ in range(4)]
        try:
            (ranks_out) = sum4.run_ranks([[row.reshape(1, -1) if row.ndim == 1 else row] for row in rows])
            if all(r.shape == (8,) and r.flags.c_contiguous for r in rows):
                expected = np.sum(np.stack(rows).astype(np.float64), axis=0).astype(np.float32)
                for out in ranks_out:
                    if not np.allclose(out[0], expected, rtol=1e-5, atol=1e-5):
                        findings.append(f"seed {seed}: sum over 4 ranks is wrong")
            counts["ran"] += 1
        except ALLOWED:
            counts["refused"] += 1
        except BaseException as error:  # noqa: BLE001
            findings.append(f"seed {seed}: run_ranks raised {type(error).__name__}: {error}")
        hir.init(world_size=1)
    print(f"seed {seed}: {counts['ran']} calls ran and matched numpy, {counts['refused']} refused")
    for finding in findings:
        print(f"FINDING {finding}")
    sys.exit(1 if findings else 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60, help="stop starting children after this long")
    parser.add_argument("--seed", type=int, help="run one child with this seed")
    parser.add_argument("--calls", type=int, default=300, help="calls per child")
    parser.add_argument("--wrong", action="store_true", help="check against a wrong meaning (must fail)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.seed, args.calls, args.wrong)
    seeds = [args.seed] if args.seed is not None else range(1 << 30)
    start, children, failed = time.monotonic(), 0, []
    for seed in seeds:
        if args.seed is None and time.monotonic() - start > args.seconds:
            break
        cmd = [sys.executable, __file__, "--child", "--seed", str(seed), "--calls", str(args.calls)]
        cmd += ["--wrong"] if args.wrong else []
        try:
            result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            failed.append(f"seed {seed}: hung for 120 s")
            continue
        children += 1
        sys.stdout.write(result.stdout)
        if result.returncode < 0:
            failed.append(f"seed {seed}: the process died by signal {-result.returncode}\n{result.stderr[-2000:]}")
        elif result.returncode != 0:
            failed.append(f"seed {seed}: findings (exit {result.returncode})\n{result.stderr[-2000:]}")
    print(f"python fuzz: {children} children in {time.monotonic() - start:.0f} s, {len(failed)} failed")
    for failure in failed:
        print(f"FAILED {failure}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
