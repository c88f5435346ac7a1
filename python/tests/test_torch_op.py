"""Programs as torch operators (torch.library) on the cpu backend: their
fake implementation agrees with the real one (torch.library.opcheck),
torch.compile(fullgraph=True) traces a model calling them and matches the
same model in eager torch, names never collide, and a program compiled
without differentiable=True says so when asked for gradients."""

import pytest

import hir

from needs_torch import import_torch
from test_builder import tp_mlp
from test_compile import BINARY

torch = import_torch()


def mlp_weights(seed):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(8, 16, generator=generator)
    w1 = torch.randn(32, 16, generator=generator) * 0.25
    b1 = torch.randn(32, generator=generator)
    w2 = torch.randn(16, 32, generator=generator) * 0.25
    return x, w1, b1, w2


def test_the_op_is_named_after_the_entry_and_the_program():
    op = hir.compile(BINARY).as_torch_op()
    assert op._qualname.startswith("hir::add_")
    # Compiled again from the same text and options: the same op.
    assert hir.compile(BINARY).as_torch_op() is op
    # Other options, or another program with the same entry: another op.
    assert hir.compile(BINARY, num_streams=1).as_torch_op()._qualname != op._qualname
    assert hir.compile(BINARY.replace("fusion.add", "fusion.mul")).as_torch_op()._qualname != op._qualname


def test_the_fake_implementation_agrees_with_the_real_one():
    program = hir.compile(tp_mlp(1))
    torch.library.opcheck(program.as_torch_op(), mlp_weights(1))


def test_a_two_output_program():
    b = hir.Builder("two")
    a = b.input("a", (4, 8), "f32")
    b.output(b.relu(a), b.cast(b.sum(a, [1]), "f16"))
    op = hir.compile(b).as_torch_op()
    a = torch.randn(4, 8)
    positive, sums = op(a)
    torch.testing.assert_close(positive, a.relu())
    assert sums.dtype == torch.float16
    torch.testing.assert_close(sums, a.sum(dim=1).half(), rtol=1e-3, atol=1e-3)
    torch.library.opcheck(op, (a,))


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_torch_compile_fullgraph_matches_eager(backend):
    op = hir.compile(tp_mlp(1)).as_torch_op()

    class Block(torch.nn.Module):
        def __init__(self, w1, b1, w2):
            super().__init__()
            self.w1, self.b1, self.w2 = (torch.nn.Parameter(w, requires_grad=False) for w in (w1, b1, w2))

        def forward(self, x):
            # Torch work on both sides of the HIR call, traced into one graph.
            return op(x * 2.0, self.w1, self.b1, self.w2).tanh() + 1.0

    x, w1, b1, w2 = mlp_weights(2)
    block = Block(w1, b1, w2)
    compiled = torch.compile(block, fullgraph=True, backend=backend)
    with torch.no_grad():
        got = compiled(x)
        hidden = torch.nn.functional.gelu(torch.nn.functional.linear(x * 2.0, w1, b1), approximate="tanh")
        expected = torch.nn.functional.linear(hidden, w2).tanh() + 1.0
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-4)
    # aot_eager runs eager's kernels around the op: the same bits. Inductor
    # generates its own tanh, which may round differently in the last place
    # (torch 2.15 on AVX-512 does in 2 elements of 128).
    ulps = 0 if backend == "aot_eager" else 4 * torch.finfo(torch.float32).eps
    torch.testing.assert_close(got, block(x), rtol=ulps, atol=ulps)


def test_tracing_checks_shapes_and_dtypes():
    op = hir.compile(BINARY).as_torch_op()
    compiled = torch.compile(lambda a, b: op(a, b), fullgraph=True, backend="aot_eager")
    with pytest.raises(Exception, match=r"@add: input #1 has shape \[4, 9\], the program takes \[4, 8\]"):
        compiled(torch.ones(4, 8), torch.ones(4, 9))
    with pytest.raises(Exception, match=r"@add: input #0 is torch.float64, the program takes torch.float32 \(f32\)"):
        compiled(torch.ones(4, 8, dtype=torch.float64), torch.ones(4, 8))


def test_a_plain_call_with_a_tensor_that_requires_grad_says_why():
    program = hir.compile(BINARY)
    a = torch.ones(4, 8, requires_grad=True)
    with pytest.raises(TypeError, match=r"array #0 of rank #0 requires grad, and this program is not differentiable: compile it with hir.compile\(\.\.\., differentiable=True\), call it under torch.no_grad\(\), or pass tensor.detach\(\)"):
        program(a, torch.ones(4, 8))
    with torch.no_grad():
        torch.testing.assert_close(program(a, torch.ones(4, 8)), torch.full((4, 8), 2.0))
    torch.testing.assert_close(program(a.detach(), torch.ones(4, 8)), torch.full((4, 8), 2.0))


def test_the_op_runs_forward_on_tensors_that_require_grad_but_has_no_gradient():
    op = hir.compile(BINARY).as_torch_op()
    a = torch.ones(4, 8, requires_grad=True)
    c = op(a, torch.ones(4, 8))
    torch.testing.assert_close(c.detach(), torch.full((4, 8), 2.0))
    with pytest.raises(RuntimeError, match="no autograd formula"):
        c.sum().backward()


def test_a_program_without_inputs_is_refused():
    # Its outputs would have no device to be made on.
    with pytest.raises(ValueError, match="takes no input"):
        hir.compile("""
fusion.mesh @dev = [0]
func.func @ones() -> tensor<4xf32, #fusion.dist<@dev, [serial]>> {
  %r = fusion.fill 1.0 : tensor<4xf32, #fusion.dist<@dev, [serial]>>
  return %r : tensor<4xf32, #fusion.dist<@dev, [serial]>>
}
""").as_torch_op()


def test_torch_tensors_views_and_subclasses_reach_the_program():
    """A plain tensor is exported by torch's C DLPack function, a view at an
    offset included; a subclass keeps its own __dlpack__; a strided view
    is refused as before."""
    add = hir.compile(BINARY)
    base = torch.arange(64, dtype=torch.float32).reshape(8, 8)
    a, b = base[4:, :], torch.full((4, 8), 0.5)
    assert a.storage_offset() == 32
    torch.testing.assert_close(add(a, b), a + b, rtol=0, atol=0)

    exported = []

    class Recorded(torch.Tensor):
        def __dlpack__(self, *args, **kwargs):
            exported.append(type(self).__name__)
            return super().__dlpack__(*args, **kwargs)

    recorded = b.as_subclass(Recorded)
    out = torch.empty(4, 8)
    add(a, recorded, out)
    assert exported == ["Recorded"]
    torch.testing.assert_close(out, a + b, rtol=0, atol=0)

    with pytest.raises(ValueError, match=r"array #0 of rank #0: strides \[1, 8\]"):
        add(base[:, :4].t(), b)
