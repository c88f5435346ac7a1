"""Ctrl-C during a call (issue 41): a child process calling a program gets
SIGINT and raises KeyboardInterrupt within a bound, whether the time goes to
a Python loop of calls, a program whose own loop calls the runtime forever,
or one whose loop never calls it; afterwards its world runs a correct call
again, or, when a rank could not be stopped, says it is closed."""

import os
import signal
import subprocess
import sys
import time

import pytest

# The brief's bound is 1 s; CI's 2 loaded cores get some slack.
BOUND = 2.0

CHILD = r'''
import signal, sys
# A child started in the background inherits SIGINT ignored: restore Python's.
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np
import hir

NEG = """
func.func @neg(%a: memref<8xf32>, %b: memref<8xf32>) {
  host.neg ins(%a : memref<8xf32>) outs(%b : memref<8xf32>)
  return
}
"""
# Never ends; calls the runtime on every iteration.
SPIN = """
func.func @spin(%a: memref<8xf32>, %b: memref<8xf32>) {
  %true = arith.constant true
  scf.while : () -> () {
    scf.condition(%true)
  } do {
    host.neg ins(%a : memref<8xf32>) outs(%b : memref<8xf32>)
    scf.yield
  }
  return
}
"""
# 2^40 iterations, each a runtime call.
MANY = """
func.func @many(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1099511627776 : index
  scf.for %i = %c0 to %n step %c1 {
    host.neg ins(%a : memref<8xf32>) outs(%b : memref<8xf32>)
  }
  return
}
"""
# Sums 0..n[0] without a runtime call (n chosen to take seconds).
BUSY = """
func.func @busy(%n: memref<1xi64>, %out: memref<1xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0 : i64
  %bound = memref.load %n[%c0] : memref<1xi64>
  %ub = arith.index_cast %bound : i64 to index
  %sum = scf.for %i = %c0 to %ub step %c1 iter_args(%acc = %zero) -> (i64) {
    %ii = arith.index_cast %i : index to i64
    %next = arith.addi %acc, %ii : i64
    scf.yield %next : i64
  }
  memref.store %sum, %out[%c0] : memref<1xi64>
  return
}
"""

mode, ranks = sys.argv[1], int(sys.argv[2])
hir.init(world_size=ranks, num_streams=2)
neg = hir.compile(NEG)
a = np.arange(8, dtype=np.float32)
args = [[a, np.zeros(8, np.float32)] for _ in range(ranks)]
if mode == "loop":
    program = neg
elif mode == "busy":
    program = hir.compile(BUSY)
    args = [[np.array([4_000_000_000], np.int64), np.zeros(1, np.int64)] for _ in range(ranks)]
else:
    program = hir.compile({"spin": SPIN, "many": MANY}[mode])
print("running", flush=True)
try:
    while True:
        program.run_ranks(args)
except KeyboardInterrupt:
    print("interrupted", flush=True)
try:
    outputs = [np.zeros(8, np.float32) for _ in range(ranks)]
    neg.run_ranks([[a, b] for b in outputs])
    print("ran", all(np.array_equal(b, -a) for b in outputs), flush=True)
except hir.HirError as error:
    print("raised", type(error).__name__, error, flush=True)
'''


def interrupt(mode, ranks=1):
    """Runs the child in `mode`, interrupts its call, and returns how long
    KeyboardInterrupt took and what the child printed after it."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, mode, str(ranks)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline() == "running\n", child.stderr.read()
        time.sleep(0.5)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        line = child.stdout.readline()
        took = time.monotonic() - sent
        assert line == "interrupted\n", (line, child.stderr.read())
        # Not communicate(): it would miss what readline already buffered.
        rest, errors = child.stdout.read(), child.stderr.read()
        child.wait(timeout=60)
    finally:
        child.kill()
    assert child.returncode == 0, errors
    return took, rest


@pytest.mark.parametrize("mode", ["loop", "spin", "many"])
@pytest.mark.parametrize("ranks", [1, 3])
def test_ctrl_c_stops_the_call_and_the_world_runs_again(mode, ranks):
    took, rest = interrupt(mode, ranks)
    assert took < BOUND, f"KeyboardInterrupt took {took:.2f}s"
    assert rest == "ran True\n"


def test_a_rank_that_cannot_be_stopped_leaves_the_world_closed():
    took, rest = interrupt("busy", 2)
    assert took < BOUND, f"KeyboardInterrupt took {took:.2f}s"
    assert rest.startswith("raised HirError this world is closed: an interrupted run left ranks [0, 1]"), rest
    assert "hir.init makes a new one" in rest


def test_an_uncaught_ctrl_c_ends_the_process():
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD.replace("except KeyboardInterrupt:", "except ImportError:"), "many", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline() == "running\n", child.stderr.read()
        time.sleep(0.5)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        _, errors = child.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        child.kill()
    assert "KeyboardInterrupt" in errors, errors
    assert child.returncode != 0
    assert took < BOUND, f"the process took {took:.2f}s to end"
