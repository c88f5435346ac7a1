"""The rough edges issue 40 lists, each as a user met it: HIR_LOG from
Python, element types named as numpy and torch name them, a CompileError
that states the failure and then its diagnostics, and a typo in a tensor
type caught before MLIR sees it. (The torch.compile graph break and the
requires_grad message are in test_torch_op.py.)"""

import os
import subprocess
import sys

import numpy as np
import pytest

import hir

from needs_torch import import_torch
from test_compile import BINARY


def python_stderr(script, **environ):
    """What a fresh interpreter running ``script`` writes to stderr, with
    ``environ`` set and HIR_LOG as the caller gives it (or unset)."""
    env = {name: value for name, value in os.environ.items() if name != "HIR_LOG"}
    env.update(environ)
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return run.stderr


def test_hir_log_shows_the_compilers_events_from_python():
    script = f"import hir; hir.compile({BINARY!r})"
    logged = python_stderr(script, HIR_LOG="debug", HIR_CACHE="0")
    for stage in ("parse", "hir-lower", "llvm", "jit"):
        assert f'hir::compile: compile stage="{stage}"' in logged
    # Without HIR_LOG only warnings show: a compile that succeeds is silent.
    assert python_stderr(script, HIR_CACHE="0") == ""
    # A directive that does not parse is said once; the rest still applies.
    logged = python_stderr(script, HIR_LOG="[,debug", HIR_CACHE="0")
    assert "invalid filter directive" in logged and 'stage="jit"' in logged


@pytest.mark.parametrize(
    "dtype, name", [(np.float64, "float64"), (np.uint8, "uint8"), (np.int16, "int16"), (np.complex64, "complex64")]
)
def test_a_numpy_array_of_another_type_is_named(dtype, name):
    program = hir.compile(BINARY)
    a = np.ones((4, 8), dtype=np.float32)
    with pytest.raises(TypeError, match=f"array #1 of rank #0: {name} is none of HIR's float32, float16, bfloat16, int32 and int64"):
        program(a, a.astype(dtype))


def test_a_torch_tensor_of_another_type_is_named():
    torch = import_torch()
    program = hir.compile(BINARY)
    a = torch.ones(4, 8)
    with pytest.raises(TypeError, match="array #0 of rank #0: float64 is none of HIR's"):
        program(a.double(), a)
    with pytest.raises(TypeError, match=r"array #1 of rank #0: bool \(8 bits\) is none of HIR's"):
        program(a, a > 0)


def test_a_compile_error_states_the_failure_then_its_diagnostics():
    # Propagation meets two distributions for gelu's result: the weight's
    # split columns and the reduce-scattered rows of the output.
    b = hir.Builder("mlp")
    tp = b.mesh("tp", [0, 1])
    x = b.input("x", (8, 16), "f32", tp, ["serial", "serial"])
    w1 = b.input("w1", (32, 16), "f32", tp, ["didx", "serial"])
    w2 = b.input("w2", (16, 32), "f32", tp, ["serial", "didx"])
    b.output(b.linear(b.gelu(b.linear(x, w1)), w2, axes=["didx", "serial"]))
    with pytest.raises(hir.CompileError) as error:
        hir.compile(b)
    headline, *diagnostics = str(error.value).splitlines()
    assert headline == "lowering failed in stage 'hir-lower' (MLIR's diagnostics say where)"
    assert "error: conflicting distributions inferred for operand #0 of 'fusion.linear'" in diagnostics[0]
    assert "see the errors above" not in str(error.value)


def test_a_tensor_type_typo_is_caught_by_the_builder():
    # The first MLP of the issue failed on a hand-written type; the builder
    # writes every type and checks each call's shapes first.
    b = hir.Builder("mlp")
    x = b.input("x", (8, 16), "f32")
    w1 = b.input("w1", (32, 61), "f32")
    with pytest.raises(hir.BuildError, match=r"linear\(%x, %w1\): the input's last extent 16 is not the weight's K = 61"):
        b.linear(x, w1)
