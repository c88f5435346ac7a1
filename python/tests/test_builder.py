"""hir.Builder: fusion programs written from shapes, meshes and op calls,
compiled and run against numpy; and the errors a call raises, naming it,
before MLIR sees the text."""

import numpy as np
import pytest

import hir


def gelu(z):
    return 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z**3)))


def tp_mlp(devices, tokens=8, hidden=16, ffn=32):
    """Megatron's MLP (``hir.models.tp_mlp``) at a small size, in f32."""
    return hir.models.tp_mlp(devices, tokens, hidden, ffn)


def test_a_tp_mlp_on_one_device_matches_numpy():
    program = hir.compile(tp_mlp(1))
    assert program.name == "@tp_mlp"
    rng = np.random.default_rng(7)
    x = rng.standard_normal((8, 16), dtype=np.float32)
    w1 = rng.standard_normal((32, 16), dtype=np.float32) * 0.25
    b1 = rng.standard_normal(32, dtype=np.float32)
    w2 = rng.standard_normal((16, 32), dtype=np.float32) * 0.25
    y = program(x, w1, b1, w2)
    reference = gelu(x.astype(np.float64) @ w1.T + b1) @ w2.T
    np.testing.assert_allclose(y, reference, rtol=1e-4, atol=1e-4)


def test_a_tp_mlp_on_two_ranks_matches_numpy():
    hir.init(world_size=2, num_streams=2)
    program = hir.compile(tp_mlp(2), num_streams=2)
    assert [shape for _, shape, _ in program.parameters] == [(4, 16), (16, 16), (16,), (16, 16), (4, 16)]
    rng = np.random.default_rng(8)
    x = rng.standard_normal((8, 16), dtype=np.float32)
    w1 = rng.standard_normal((32, 16), dtype=np.float32) * 0.25
    b1 = rng.standard_normal(32, dtype=np.float32)
    w2 = rng.standard_normal((16, 32), dtype=np.float32) * 0.25
    ranks = [
        [np.ascontiguousarray(part) for part in (x[4 * r : 4 * r + 4], w1[16 * r : 16 * r + 16], b1[16 * r : 16 * r + 16], w2[:, 16 * r : 16 * r + 16])]
        for r in range(2)
    ]
    y = np.concatenate([outputs[0] for outputs in program.run_ranks(ranks)])
    reference = gelu(x.astype(np.float64) @ w1.T + b1) @ w2.T
    np.testing.assert_allclose(y, reference, rtol=1e-4, atol=1e-4)


def test_every_kind_of_op_matches_numpy():
    b = hir.Builder("ops")
    a = b.input("a", (4, 6), "f32")
    w = b.input("w", (6, 3), "f32")
    ids = b.input("ids", (4, 6), "i32")
    t = b.transpose(b.reshape(b.add(a, b.cast(ids, "f32")), (6, 4)), [1, 0])
    s = b.sub(b.mul(t, b.exp(b.neg(a))), b.div(b.abs(a), b.relu(b.tanh(a))))
    m = b.matmul(b.max(s, b.min(a, b.rsqrt(b.abs(a)))), w)  # [4, 3]
    row = b.broadcast(b.sum(m, [0]), (4, 3), [0])
    b.output(b.add(m, row), b.amax(b.gelu(a), [1]), b.linear(a, b.transpose(w, [1, 0])))
    program = hir.compile(b)
    rng = np.random.default_rng(3)
    a = rng.uniform(0.5, 2.0, (4, 6)).astype(np.float32)
    w = rng.standard_normal((6, 3), dtype=np.float32)
    ids = rng.integers(-5, 5, (4, 6), dtype=np.int32)
    out, peak, projected = program(a, w, ids)
    a64 = a.astype(np.float64)
    t = (a64 + ids).reshape(6, 4).T
    s = t * np.exp(-a64) - np.abs(a64) / np.maximum(np.tanh(a64), 0)
    m = np.maximum(s, np.minimum(a64, 1 / np.sqrt(np.abs(a64)))) @ w
    np.testing.assert_allclose(out, m + m.sum(axis=0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(peak, gelu(a64).max(axis=1), rtol=1e-5)
    np.testing.assert_allclose(projected, a64 @ w, rtol=1e-5, atol=1e-5)


def test_the_text_has_every_type_written_out():
    text = tp_mlp(2).mlir()
    assert "fusion.mesh @tp = [0, 1]" in text
    assert "%x: tensor<8x16xf32, #fusion.dist<@tp, [didx, serial]>>" in text
    # gelu's result is placed as its operand, written out.
    assert "fusion.gelu %1 : tensor<8x32xf32, #fusion.dist<@tp, [serial, didx]>> -> tensor<8x32xf32, #fusion.dist<@tp, [serial, didx]>>" in text
    assert str(tp_mlp(2)) == text


def test_stream_axes_and_a_two_d_mesh():
    b = hir.Builder("streamed")
    grid = b.mesh("grid", [[0, 1], [2, 3]])
    x = b.input("x", (4, 8), "f32", grid, ["didy", "didx"])
    b.output(b.relu(x, axes=["didy", "didx"]), b.neg(b.set(x, ["stream<2>", "didx"])))
    assert "fusion.mesh @grid = [[0, 1], [2, 3]]" in b.mlir()
    assert "-> tensor<4x8xf32, #fusion.dist<@grid, [serial, didx]>>" in b.mlir()  # stream not carried on


def builder_with_input(shape=(4, 8), dtype="f32"):
    b = hir.Builder("bad")
    b.mesh("tp", [0, 1])
    return b, b.input("x", shape, dtype, "tp", ["didx", "serial"])


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda b, x: b.add(x, b.transpose(x, [1, 0])), r"add\(%x, %0\): shapes differ: 4x8 vs 8x4"),
        (lambda b, x: b.matmul(x, x), r"matmul\(%x, %x\): contraction extents differ: lhs has K = 8, rhs has K = 4"),
        (lambda b, x: b.linear(x, x, x), r"linear\(%x, %x, %x\): bias must be \[4\], got 4x8"),
        (lambda b, x: b.set(x, mesh="pp"), r"set\(%x\): unknown mesh '@pp' \(declared: @tp\)"),
        (lambda b, x: b.exp(b.cast(x, "i32")), r"exp\(%0\): takes f32, f16, bf16, not i32"),
        (lambda b, x: b.add(x, b.cast(x, "f16")), r"add\(%x, %0\): dtypes differ: %x is f32, %0 f16"),
        (lambda b, x: b.cast(x, "f64"), r"cast\(%x, 'f64'\): dtype 'f64' is none of HIR's f32, f16, bf16, i32, i64"),
        (lambda b, x: b.sum(x, [2]), r"sum\(%x, \[2\]\): reduced axis 2 is out of range for rank 2"),
        (lambda b, x: b.amax(x, []), r"amax\(%x, \[\]\): reduces no axis"),
        (lambda b, x: b.reshape(x, (3, 8)), r"reshape\(%x, \[3, 8\]\): shape 3x8 holds 24 elements, the input 4x8 32"),
        (lambda b, x: b.broadcast(x, (4, 2, 4), [1]), r"broadcast\(%x, \[1\]\): shape 4x2x4 without the broadcast axes is 4x4"),
        (lambda b, x: b.transpose(x, [0, 0]), r"transpose\(%x, \[0, 0\]\): a permuted axis is listed twice"),
        (lambda b, x: b.relu(x, axes=["didx"]), r"relu\(%x\): axes \['didx'\] give no parallel type per axis of a tensor of rank 2"),
        (lambda b, x: b.relu(x, axes=["didx", "didx"]), r"more than one 'didx' axis"),
        (lambda b, x: b.relu(x, axes=["split", "serial"]), r"unknown parallel type 'split'"),
        (lambda b, x: b.relu(x, axes=[["didx"], "serial"]), r"unknown parallel type \['didx'\]"),
        (lambda b, x: b.relu(x, axes=["stream<3>", "serial"]), r"stream axis 0 of extent 4 does not split into 3 chunks"),
        (lambda b, x: b.relu(b.sum(x, [0]), axes=["didy"]), r"didy needs a mesh of 2 axes; @tp has 1"),
        (lambda b, x: b.input("y", (3,), "f32", "tp", ["didx"]), r"input\('y'\): axis 0 of extent 3 is didx but not a multiple of the 2 devices of @tp"),
        (lambda b, x: b.output(hir.Builder().input("y", (2,), "f32")), r"output\(%y\): %y belongs to another builder"),
        (lambda b, x: b.unary("sin", x), r"sin\(%x\): no such unary op"),
        (lambda b, x: b.mesh("tp", [0]), r"mesh\('tp'\): a mesh or the entry has that name already"),
        (lambda b, x: b.mesh("bad", [0]), r"mesh\('bad'\): a mesh or the entry has that name already"),
        (lambda b, x: b.mesh("pp", [1, 1]), r"mesh\('pp'\): a device appears twice"),
        (lambda b, x: b.mesh("pp", [[0, 1], [2]]), r"mesh\('pp'\): a mesh is a list of ranks, or equal rows"),
        (lambda b, x: b.mlir(), r"bad: no output; call output\(tensor\)"),
        (lambda b, x: b.output(b.sum(x, [1])), r"output\(%0\): its distribution over @tp is left to inference; give the call that makes it axes=\[...\]"),
    ],
)
def test_a_bad_call_is_a_build_error_naming_it(call, message):
    b, x = builder_with_input()
    with pytest.raises(hir.BuildError, match=message):
        call(b, x)


def test_several_meshes_need_one_named():
    b = hir.Builder()
    b.mesh("a", [0])
    b.mesh("b", [0])
    with pytest.raises(hir.BuildError, match=r"input\('x'\): several meshes are declared; say which"):
        b.input("x", (2,), "f32")
