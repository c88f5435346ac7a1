"""Differentiable programs (hir.compile(..., differentiable=True)) on the cpu
backend: gradients of single ops and of the TP MLP (f32 and bf16) against
torch autograd of the same math in float64, computed independently; inputs
left out of wrt; torch.compile(fullgraph=True) forward and backward; the
op's registration checked by torch.library.opcheck; the forward and
backward on two ranks as threads; SGD training of the MLP against torch's
own; attention's gradient against torch's; and the errors. (Training the
transformer block: test_train_block.py.)"""

import numpy as np
import pytest

import hir

from needs_torch import import_torch

torch = import_torch()
F = torch.nn.functional


def mlp(devices=1, dtype="f32", tokens=8, hidden=16, ffn=32):
    """Megatron's MLP (``hir.models.tp_mlp``) at a small size."""
    return hir.models.tp_mlp(devices, tokens, hidden, ffn, dtype)


def reference_mlp(x, w1, b1, w2):
    return F.linear(F.gelu(F.linear(x, w1, b1), approximate="tanh"), w2)


def mlp_tensors(seed, dtype=torch.float32, tokens=8, hidden=16, ffn=32):
    generator = torch.Generator().manual_seed(seed)
    made = (
        torch.randn(tokens, hidden, generator=generator),
        torch.randn(ffn, hidden, generator=generator) / hidden**0.5,
        torch.randn(ffn, generator=generator) * 0.1,
        torch.randn(hidden, ffn, generator=generator) / ffn**0.5,
    )
    return [tensor.to(dtype) for tensor in made]


def gradients(function, tensors, cotangent):
    """d<cotangent, function(tensors)> by torch autograd, for every tensor
    (None for those function leaves out of its graph)."""
    leaves = [tensor.detach().requires_grad_() for tensor in tensors]
    (function(*leaves) * cotangent).sum().backward()
    return [leaf.grad for leaf in leaves]


def reference_gradients(function, tensors, cotangent):
    """The same in float64, from the same values."""
    return gradients(function, [t.double() for t in tensors], cotangent.double())


def assert_close_relative(got, expected, tolerance, what):
    """The largest error relative to the largest reference value."""
    error = ((got.double() - expected).abs().max() / expected.abs().max()).item()
    assert error <= tolerance, f"{what}: relative error {error:.2e} > {tolerance:.0e}"


# Each op and its math in torch; rsqrt and div take inputs in [0.5, 2].
UNARY = {
    "exp": torch.exp,
    "tanh": torch.tanh,
    "neg": torch.neg,
    "abs": torch.abs,
    "gelu": lambda a: F.gelu(a, approximate="tanh"),
    "relu": torch.relu,
    "rsqrt": torch.rsqrt,
}
BINARY = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
    "max": torch.maximum,
    "matmul": torch.matmul,
}
POSITIVE = ("rsqrt", "div")


def single_op(kind):
    """A program of one op of ``kind`` on [4, 6] (matmul: times [6, 3])."""
    b = hir.Builder(kind)
    a = b.input("a", (4, 6), "f32")
    if kind in UNARY:
        b.output(getattr(b, kind)(a))
    else:
        other = b.input("b", (6, 3) if kind == "matmul" else (4, 6), "f32")
        b.output(getattr(b, kind)(a, other))
    return b


@pytest.mark.parametrize("kind", list(UNARY) + list(BINARY))
def test_a_single_op_has_torchs_gradient(kind):
    program = hir.compile(single_op(kind), differentiable=True)
    assert isinstance(program, hir.DifferentiableProgram)
    generator = torch.Generator().manual_seed(len(kind))
    shapes = [shape for _, shape, _ in program.parameters[: program.num_inputs]]
    low = 0.5 if kind in POSITIVE else -2.0
    tensors = [torch.rand(shape, generator=generator) * (2.0 - low) + low for shape in shapes]
    math = UNARY.get(kind) or BINARY[kind]
    cotangent = torch.randn(program.parameters[-1][1], generator=generator)
    got = gradients(program, tensors, cotangent)
    expected = reference_gradients(math, tensors, cotangent)
    for index, (g, e) in enumerate(zip(got, expected)):
        assert g.dtype == torch.float32 and g.shape == tensors[index].shape
        assert_close_relative(g, e, 1e-5, f"{kind}: d input #{index}")


def test_reductions_and_broadcasts_have_torchs_gradient():
    b = hir.Builder("rows")
    a = b.input("a", (4, 6), "f32")
    rows = b.mul(b.broadcast(b.sum(a, [1]), (4, 6), [1]), a)
    b.output(b.add(rows, b.broadcast(b.amax(a, [0]), (4, 6), [0])))
    program = hir.compile(b, differentiable=True)
    a = torch.randn(4, 6, generator=torch.Generator().manual_seed(5))
    cotangent = torch.randn(4, 6, generator=torch.Generator().manual_seed(6))
    (got,) = gradients(program, [a], cotangent)
    (expected,) = reference_gradients(lambda a: a.sum(1, keepdim=True) * a + a.amax(0, keepdim=True), [a], cotangent)
    assert_close_relative(got, expected, 1e-5, "sum, amax, broadcast, mul, add")


# bf16: HIR's gradients are 2e-3 to 6e-3 off float64, as torch's own bf16
# autograd of the same MLP is (3e-3 to 5e-3): 2e-2 is a few bf16 ulps.
@pytest.mark.parametrize("dtype, tolerance", [("f32", 1e-5), ("bf16", 2e-2)])
def test_the_mlp_has_torchs_gradients(dtype, tolerance):
    program = hir.compile(mlp(1, dtype), differentiable=True)
    assert program.wrt == [0, 1, 2, 3] and program.num_outputs == 1 and program.num_saved > 0
    torch_dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[dtype]
    tensors = mlp_tensors(1, torch_dtype)
    cotangent = torch.randn(8, 16, generator=torch.Generator().manual_seed(2)).to(torch_dtype)
    leaves = [tensor.clone().requires_grad_() for tensor in tensors]
    y = program(*leaves)
    assert y.grad_fn is not None and y.dtype == torch_dtype
    assert_close_relative(y.detach(), reference_mlp(*[t.double() for t in tensors]), tolerance, "y")
    (y * cotangent).sum().backward()
    expected = reference_gradients(reference_mlp, tensors, cotangent)
    for name, leaf, e in zip(("x", "w1", "b1", "w2"), leaves, expected):
        assert leaf.grad.dtype == torch_dtype and leaf.grad.shape == leaf.shape
        assert_close_relative(leaf.grad, e, tolerance, f"d {name} ({dtype})")


@pytest.mark.parametrize("saved", ["gathered", "recompute"])
def test_inputs_left_out_of_wrt_get_no_gradient(saved):
    program = hir.compile(mlp(1), differentiable=True, wrt=[3, 1], saved=saved)
    assert program.wrt == [3, 1]
    tensors = mlp_tensors(3)
    cotangent = torch.randn(8, 16, generator=torch.Generator().manual_seed(4))
    got = gradients(program, tensors, cotangent)
    expected = reference_gradients(reference_mlp, tensors, cotangent)
    assert got[0] is None and got[2] is None
    assert_close_relative(got[1], expected[1], 1e-5, "d w1")
    assert_close_relative(got[3], expected[3], 1e-5, "d w2")


def test_numpy_arrays_run_the_forward():
    program = hir.compile(mlp(1), differentiable=True)
    tensors = mlp_tensors(5)
    y = program(*[tensor.numpy() for tensor in tensors])
    assert isinstance(y, np.ndarray)
    assert_close_relative(torch.from_numpy(y), reference_mlp(*[t.double() for t in tensors]), 1e-5, "y")


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_torch_compile_fullgraph_forward_and_backward(backend):
    program = hir.compile(mlp(1), differentiable=True)

    def loss(x, w1, b1, w2):
        # Torch work on both sides of the HIR call, traced into one graph.
        return program(x * 2.0, w1, b1, w2).tanh().square().sum()

    tensors = mlp_tensors(6)
    compiled = torch.compile(loss, fullgraph=True, backend=backend)
    eager_leaves = [tensor.clone().requires_grad_() for tensor in tensors]
    compiled_leaves = [tensor.clone().requires_grad_() for tensor in tensors]
    eager = loss(*eager_leaves)
    eager.backward()
    got = compiled(*compiled_leaves)
    got.backward()
    torch.testing.assert_close(got, eager, rtol=1e-5, atol=1e-5)
    for eager_leaf, compiled_leaf in zip(eager_leaves, compiled_leaves):
        torch.testing.assert_close(compiled_leaf.grad, eager_leaf.grad, rtol=1e-5, atol=1e-5)
    expected = reference_gradients(
        lambda x, *weights: reference_mlp(x * 2.0, *weights).tanh().square().sum().reshape(1), tensors, torch.ones(1)
    )
    for leaf, e in zip(compiled_leaves, expected):
        assert_close_relative(leaf.grad, e, 1e-4, "compiled gradient")


def test_opcheck_checks_the_autograd_registration():
    program = hir.compile(mlp(1), differentiable=True)
    program.as_torch_op()  # registers the forward op's formula
    tensors = [tensor.requires_grad_() for tensor in mlp_tensors(7)]
    torch.library.opcheck(program.forward.as_torch_op(), tuple(tensors))


def test_the_forward_and_backward_on_two_ranks_as_threads():
    # A world of ranks as threads runs every rank in one call, which a
    # torch op (one rank's tensors) cannot: run_ranks the two programs.
    hir.init(world_size=2, num_streams=2)
    program = hir.compile(mlp(2), differentiable=True, num_streams=2)
    x, w1, b1, w2 = mlp_tensors(8)
    dy = torch.randn(8, 16, generator=torch.Generator().manual_seed(9))

    def shards(r):
        return [x[4 * r : 4 * r + 4], w1[16 * r : 16 * r + 16], b1[16 * r : 16 * r + 16], w2[:, 16 * r : 16 * r + 16]]

    forward = program.forward.run_ranks([[t.contiguous() for t in shards(r)] for r in range(2)])
    y = torch.cat([outputs[0] for outputs in forward])
    backward = program.backward.run_ranks([outputs[1:] + [dy[4 * r : 4 * r + 4].contiguous()] for r, outputs in enumerate(forward)])
    dx = torch.cat([grads[0] for grads in backward])
    dw1 = torch.cat([grads[1] for grads in backward])
    db1 = torch.cat([grads[2] for grads in backward])
    dw2 = torch.cat([grads[3] for grads in backward], dim=1)
    assert_close_relative(y, reference_mlp(x.double(), w1.double(), b1.double(), w2.double()), 1e-5, "y")
    expected = reference_gradients(reference_mlp, [x, w1, b1, w2], dy)
    for name, got, e in zip(("x", "w1", "b1", "w2"), (dx, dw1, db1, dw2), expected):
        assert_close_relative(got, e, 1e-5, f"d {name} on two ranks")


def test_sgd_training_matches_torchs():
    """Ten SGD steps of the MLP's weights on a fixed batch, HIR's forward and
    backward against torch's own training of the same model from the same
    initial weights; x is data (not in wrt)."""
    program = hir.compile(mlp(1), differentiable=True, wrt=[1, 2, 3])
    x, w1, b1, w2 = mlp_tensors(10)
    target = torch.randn(8, 16, generator=torch.Generator().manual_seed(11))

    def train(forward):
        weights = [w.clone().requires_grad_() for w in (w1, b1, w2)]
        optimizer = torch.optim.SGD(weights, lr=0.5)
        losses = []
        for _ in range(10):
            optimizer.zero_grad()
            loss = F.mse_loss(forward(x, *weights), target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return losses, weights

    losses, weights = train(program)
    torch_losses, torch_weights = train(reference_mlp)
    assert all(later < earlier for earlier, later in zip(losses, losses[1:])), losses
    assert losses[-1] < 0.8 * losses[0], losses
    np.testing.assert_allclose(losses, torch_losses, rtol=1e-5)
    for name, got, expected in zip(("w1", "b1", "w2"), weights, torch_weights):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6, msg=f"{name} after 10 steps")


ATTENTION = """
fusion.mesh @dev = [0]
func.func @attend(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x3xf32>, %m: tensor<4x6xf32>)
    -> (tensor<2x4x3xf32>, tensor<2x4x3xf32>) {
  %o = fusion.attention %q, %k, %v causal
      : tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x3xf32> -> tensor<2x4x3xf32>
  %p = fusion.attention %q, %k, %v, %m scale 0.3
      : tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x3xf32>, tensor<4x6xf32> -> tensor<2x4x3xf32>
  return %o, %p : tensor<2x4x3xf32>, tensor<2x4x3xf32>
}
"""


def reference_attention(q, k, v, m):
    """Both attentions, stacked: causal (top-left, as torch's is_causal
    with fewer queries than keys), and with a float mask and a scale."""
    causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    masked = F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.3)
    return torch.stack([causal, masked])


def test_attention_has_torchs_gradient():
    # The backward computes the probabilities again from q, k and v.
    program = hir.compile(ATTENTION, differentiable=True)
    assert program.wrt == [0, 1, 2, 3]
    generator = torch.Generator().manual_seed(14)
    shapes = [shape for _, shape, _ in program.parameters[: program.num_inputs]]
    tensors = [torch.randn(shape, generator=generator) for shape in shapes]
    cotangent = torch.randn(2, 2, 4, 3, generator=generator)
    got = gradients(lambda *t: torch.stack(program(*t)), tensors, cotangent)
    expected = reference_gradients(reference_attention, tensors, cotangent)
    for name, g, e in zip(("q", "k", "v", "mask"), got, expected):
        assert_close_relative(g, e, 1e-5, f"attention: d {name}")


def test_the_pass_diagnostics_are_located():
    with pytest.raises(hir.CompileError, match="cannot differentiate @attend") as raised:
        hir.compile(ATTENTION, differentiable=True, wrt=[4])
    # Located at the function, line 3 of the text.
    assert "-:3:1: error: wrt argument 4 is out of range: '@attend' has 4 arguments" in str(raised.value)


def with_an_index():
    b = hir.Builder("gather")
    a = b.input("a", (4, 6), "f32")
    ids = b.input("ids", (4, 6), "i32")
    b.output(b.mul(a, b.cast(ids, "f32")))
    return b


def test_wrt_errors_are_the_pass_diagnostics():
    with pytest.raises(hir.CompileError, match=r"wrt argument 1 of '@gather' is tensor<4x6xi32.*only floating-point tensors get gradients"):
        hir.compile(with_an_index(), differentiable=True, wrt=[1])
    with pytest.raises(hir.CompileError, match="wrt argument 2 is out of range: '@gather' has 2 arguments"):
        hir.compile(with_an_index(), differentiable=True, wrt=[0, 2])
    with pytest.raises(hir.CompileError, match="wrt lists argument 0 twice"):
        hir.compile(with_an_index(), differentiable=True, wrt=[0, 0])
    # By default, the floating-point inputs; the integer one gets None.
    program = hir.compile(with_an_index(), differentiable=True)
    assert program.wrt == [0]
    a, ids = torch.randn(4, 6, requires_grad=True), torch.arange(24, dtype=torch.int32).reshape(4, 6)
    program(a, ids).sum().backward()
    torch.testing.assert_close(a.grad, ids.float())


@pytest.mark.parametrize(
    "options, error, message",
    [
        ({"differentiable": True, "saved": "later"}, ValueError, "option 'saved' must be one of gathered|recompute, not 'later'"),
        ({"differentiable": True, "wrt": []}, ValueError, "wrt takes input positions from 0, at least one"),
        ({"differentiable": True, "wrt": [-1]}, ValueError, "wrt takes input positions from 0"),
        ({"differentiable": True, "wrt": "0"}, TypeError, "wrt takes input positions"),
        ({"wrt": [0]}, ValueError, "wrt and saved are for hir.compile"),
        ({"saved": "recompute"}, ValueError, "wrt and saved are for hir.compile"),
    ],
)
def test_bad_arguments_are_refused(options, error, message):
    with pytest.raises(error, match=message):
        hir.compile(mlp(1), **options)


def test_host_ir_and_integer_programs_cannot_be_differentiated():
    host = """
func.func @neg(%a: memref<4xf32>, %b: memref<4xf32>) {
  host.neg ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  return
}
"""
    with pytest.raises(hir.CompileError, match="@neg is host IR: only a fusion program can be differentiated"):
        hir.compile(host, differentiable=True)
    b = hir.Builder("ints")
    b.output(b.neg(b.input("i", (4,), "i32")))
    with pytest.raises(ValueError, match="@ints has no floating-point input to differentiate"):
        hir.compile(b, differentiable=True)
