"""Running programs on numpy arrays on the cpu backend: one rank in this
process by default, N ranks as threads with hir.init, outputs new or given
(written in place), and errors that name the rank and the op."""

import numpy as np
import pytest

import hir

from test_compile import BINARY

MATMUL = BINARY.replace("fusion.add", "fusion.matmul")


def test_returns_new_outputs_and_makes_a_one_rank_cpu_world():
    program = hir.compile(BINARY)
    a = np.arange(32, dtype=np.float32).reshape(4, 8)
    b = np.full((4, 8), 0.5, dtype=np.float32)
    c = program(a, b)
    np.testing.assert_array_equal(c, a + b)
    assert hir.world() == {"backend": "cpu", "world_size": 1, "ranks": [0], "num_streams": 4}


def test_writes_given_outputs_in_place(examples):
    program = hir.compile(examples / "matmul.mlir")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 16), dtype=np.float32)
    b = rng.standard_normal((16, 32), dtype=np.float32)
    c = np.full((8, 32), np.nan, dtype=np.float32)
    returned = program(a, b, c)
    assert returned is c
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_reads_and_writes_views_of_one_buffer():
    # Inputs and output are row blocks of one array: the memory is the
    # program's, not a copy of it.
    program = hir.compile(BINARY)
    block = np.zeros((12, 8), dtype=np.float32)
    block[0:4] = 1.0
    block[4:8] = 2.0
    program(block[0:4], block[4:8], block[8:12])
    np.testing.assert_array_equal(block[8:12], np.full((4, 8), 3.0))


def test_half_precision():
    program = hir.compile(BINARY.replace("f32", "f16"))
    a = np.linspace(-2, 2, 32, dtype=np.float16).reshape(4, 8)
    np.testing.assert_array_equal(program(a, a), a + a)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integers_exactly_with_wrapping(dtype):
    mlir = {np.int32: "i32", np.int64: "i64"}[dtype]
    program = hir.compile(BINARY.replace("fusion.add", "fusion.mul").replace("f32", mlir))
    a = np.full((4, 8), np.iinfo(dtype).max // 3, dtype=dtype)
    b = np.arange(32, dtype=dtype).reshape(4, 8)
    c = program(a, b)
    assert c.dtype == dtype
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(c, a * b)


def test_imports_a_shard_program(examples):
    # Megatron's MLP with bias and gelu as one linalg.generic, imported as
    # hir-run imports it, on one rank of a 4-device grid.
    hir.init(world_size=4, backend="cpu", num_streams=2)
    program = hir.compile(examples / "shard_generic_mlp.mlir", num_streams=2)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((32, 16), dtype=np.float32)
    w1 = rng.standard_normal((64, 16), dtype=np.float32) * 0.25
    b1 = rng.standard_normal(64, dtype=np.float32)
    w2 = rng.standard_normal((16, 64), dtype=np.float32) * 0.25
    z = x @ w1.T + b1
    gelu = 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z**3)))
    y = gelu @ w2.T
    ranks = [
        [
            np.ascontiguousarray(part)
            for part in (x[8 * r : 8 * r + 8], w1[16 * r : 16 * r + 16], b1[16 * r : 16 * r + 16], w2[:, 16 * r : 16 * r + 16])
        ]
        for r in range(4)
    ]
    outputs = program.run_ranks(ranks)
    for r, (out,) in enumerate(outputs):
        np.testing.assert_allclose(out, y[8 * r : 8 * r + 8], rtol=1e-4, atol=1e-4)


def test_ranks_as_threads_allgather(examples):
    hir.init(world_size=4, backend="cpu", num_streams=2)
    program = hir.compile(examples / "allgather.mlir", num_streams=2)
    full = np.arange(32, dtype=np.float32).reshape(8, 4)
    outputs = program.run_ranks([[np.ascontiguousarray(full[:, r : r + 1])] for r in range(4)])
    assert len(outputs) == 4
    for (out,) in outputs:
        np.testing.assert_array_equal(out, full)


def test_wrong_shape_dtype_count_and_layout_are_errors():
    program = hir.compile(BINARY)
    a = np.zeros((4, 8), dtype=np.float32)
    with pytest.raises(ValueError, match=r"input #1 of @add is a \[8, 4\] f32 array, but it takes a \[4, 8\] f32"):
        program(a, np.zeros((8, 4), dtype=np.float32))
    with pytest.raises(ValueError, match="f16"):
        program(a, a.astype(np.float16))
    with pytest.raises(TypeError, match="takes 2 input arrays"):
        program(a)
    with pytest.raises(ValueError, match="not row-major"):
        program(a, np.zeros((8, 4), dtype=np.float32).T)
    with pytest.raises(TypeError, match="DLPack"):
        program(a, [[0.0] * 8] * 4)
    # Types HIR has no entry for are named as numpy and torch name them.
    with pytest.raises(TypeError, match="float64 is none of HIR's float32"):
        program(a, a.astype(np.float64))
    with pytest.raises(TypeError, match="uint8 is none of"):
        program(a, a.astype(np.uint8))


def test_world_sizes_are_bounded_as_hir_run_n_is():
    # A world too large for memory is a ValueError, not the end of the
    # interpreter; the world before it is kept.
    hir.init(world_size=2)
    with pytest.raises(ValueError, match="world_size must be from 1 to 1024, not 1099511627776"):
        hir.init(world_size=2**40)
    with pytest.raises(ValueError, match="world_size must be from 1 to 1024, not 0"):
        hir.init(world_size=0)
    with pytest.raises(ValueError, match="num_streams must be from 1 to 1024, not 1048576"):
        hir.init(world_size=2, num_streams=2**20)
    assert hir.world()["world_size"] == 2


def test_a_world_of_threads_needs_every_ranks_arrays(examples):
    hir.init(world_size=2, backend="cpu")
    program = hir.compile(examples / "binary.mlir")
    a = np.zeros((4, 8), dtype=np.float32)
    with pytest.raises(ValueError, match="this process runs 2 ranks"):
        program(a, a)


# Row 4 of a [4, 8] buffer (an index the verifier cannot see): the view
# overruns it.
OVERRUN = """
func.func @overrun(%a: memref<4x8xf32>, %b: memref<8xf32>) {
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c4 to %c5 step %c1 {
    %ai = host.select %a[0][%i] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: ?>>
    host.neg ins(%ai : memref<8xf32, strided<[1], offset: ?>>) outs(%b : memref<8xf32>)
  }
  return
}
"""


def test_a_failing_rank_raises_run_error_with_rank_and_op():
    program = hir.compile(OVERRUN)
    a = np.zeros((4, 8), dtype=np.float32)
    b = np.full(8, 7.0, dtype=np.float32)
    with pytest.raises(hir.RunError) as error:
        program(a, b)
    assert error.value.rank == 0
    assert error.value.op == "hir_rt_neg_f32"
    assert "operand #1 view [offset 128 B, 8 x 4 B, strides 1] overruns its allocation of 128 B" in str(error.value)
    assert error.value.errors == [(0, "hir_rt_neg_f32", error.value.errors[0][2])]
    np.testing.assert_array_equal(b, np.full(8, 7.0))
