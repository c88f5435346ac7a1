"""One world called from many Python threads at once (each call releases
the GIL while its ranks run): calls run one after another, each gets its own
inputs' result, threads may pass the very same arrays, and a call whose
ranks fail leaves the world working for the next."""

import pathlib
import threading

import numpy as np
import pytest

import hir

from test_run import OVERRUN

# The README's program: y = x[0] + x[1] + x[2] + x[3], rows over 4 ranks.
SUM = (pathlib.Path(__file__).resolve().parents[2] / "examples" / "sum.mlir").read_text()

THREADS = 8
CALLS = 250


def run_threads(work):
    errors = []

    def guarded(thread):
        try:
            work(thread)
        except BaseException as error:  # reported by the main thread
            errors.append((thread, error))

    threads = [threading.Thread(target=guarded, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


def test_eight_threads_on_one_world_each_get_their_own_sums():
    hir.init(world_size=4, backend="cpu", num_streams=2)
    program = hir.compile(SUM)
    # Even threads pass the arrays of set 0, odd ones those of set 1: the
    # same numpy arrays in four threads at once.
    sets = [np.arange(32, dtype=np.float32).reshape(4, 1, 8) + 100 * s for s in range(2)]

    def work(thread):
        x = sets[thread % 2]
        expected = x.sum(axis=0)[0]
        for call in range(CALLS):
            outputs = program.run_ranks([[x[r]] for r in range(4)])
            for rank, (y,) in enumerate(outputs):
                np.testing.assert_array_equal(y, expected, err_msg=f"thread {thread} call {call} rank {rank}")

    run_threads(work)


def test_a_failed_call_among_threads_leaves_the_world_working():
    hir.init(world_size=4, backend="cpu", num_streams=2)
    program = hir.compile(SUM)
    overrun = hir.compile(OVERRUN)
    x = np.arange(32, dtype=np.float32).reshape(4, 1, 8)
    expected = x.sum(axis=0)[0]

    def work(thread):
        for call in range(CALLS // 5):
            if thread == 0 and call % 10 == 0:
                a, b = np.zeros((4, 8), dtype=np.float32), np.zeros(8, dtype=np.float32)
                with pytest.raises(hir.RunError, match="overruns its allocation"):
                    overrun.run_ranks([[a, b] for _ in range(4)])
                continue
            outputs = program.run_ranks([[x[r]] for r in range(4)])
            for (y,) in outputs:
                np.testing.assert_array_equal(y, expected)

    run_threads(work)
    assert hir.world()["world_size"] == 4
