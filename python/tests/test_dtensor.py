"""Programs on DTensors, in a torch.distributed group of one gloo rank on
the cpu backend: placements mapped from the program's distributions
(didx as Shard, serial as Replicate), inputs redistributed to them,
outputs of global shape, under torch.compile(fullgraph=True) too;
gradients of a differentiable program as DTensors; and the errors of a
DTensor that does not fit."""

import pytest

import hir

from needs_torch import import_torch

torch = import_torch()
import torch.distributed as dist  # noqa: E402
from torch.distributed.device_mesh import init_device_mesh  # noqa: E402
from torch.distributed.tensor import Replicate, Shard, distribute_tensor  # noqa: E402

HOST_NEG = """
func.func @neg(%a: memref<4xf32>, %b: memref<4xf32>) {
  host.neg ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  return
}
"""


@pytest.fixture(scope="module")
def mesh():
    # A store in this process: a group of one rank needs no network.
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    yield init_device_mesh("cpu", (1,))
    dist.destroy_process_group()


def column_parallel(devices, **options):
    """Y = X W^T, X gathered from its row blocks, Y's columns split like W's rows."""
    b = hir.Builder("column_parallel")
    tp = b.mesh("tp", list(range(devices)))
    x = b.input("x", (8, 16), "f32", tp, ["didx", "serial"])
    w = b.input("w", (32, 16), "f32", tp, ["didx", "serial"])
    b.output(b.linear(b.set(x, ["serial", "serial"]), w, axes=["serial", "didx"]))
    return hir.compile(b, **options)


def test_distributions_say_which_axis_each_mesh_axis_splits():
    program = column_parallel(2)
    assert program.distributions == [
        ((8, 16), [0, 1], [2], [0]),
        ((32, 16), [0, 1], [2], [0]),
        ((8, 32), [0, 1], [2], [1]),
    ]
    b = hir.Builder("on_a_grid")
    grid = b.mesh("grid", [[0, 1], [2, 3]])
    b.output(b.relu(b.input("x", (4, 6), "f32", grid, ["didx", "didy"])))
    assert hir.compile(b).distributions[0] == ((4, 6), [0, 1, 2, 3], [2, 2], [1, 0])


@pytest.mark.parametrize("compiled", [False, True])
def test_dtensors_in_and_out_match_torch(mesh, compiled):
    op = column_parallel(1).as_dtensor_op()
    call = torch.compile(lambda x, w: op(x, w).relu(), fullgraph=True, backend="aot_eager") if compiled else op
    generator = torch.Generator().manual_seed(5)
    x, w = torch.randn(8, 16, generator=generator), torch.randn(32, 16, generator=generator)
    # x comes replicated: redistributed to the program's Shard(0).
    y = call(distribute_tensor(x, mesh, [Replicate()]), distribute_tensor(w, mesh, [Shard(0)]))
    assert y.placements == (Shard(1),) and y.shape == (8, 32)
    expected = (x @ w.T).relu() if compiled else x @ w.T
    torch.testing.assert_close(y.full_tensor(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("compiled", [False, True])
def test_gradients_come_back_as_dtensors(mesh, compiled):
    op = column_parallel(1, differentiable=True).as_dtensor_op()
    call = torch.compile(lambda x, w: op(x, w).tanh().sum(), fullgraph=True, backend="aot_eager") if compiled else (
        lambda x, w: op(x, w).tanh().sum()
    )
    generator = torch.Generator().manual_seed(6)
    x, w = torch.randn(8, 16, generator=generator), torch.randn(32, 16, generator=generator) * 0.25
    x_d = distribute_tensor(x, mesh, [Replicate()]).requires_grad_()
    w_d = distribute_tensor(w, mesh, [Shard(0)]).requires_grad_()
    call(x_d, w_d).full_tensor().backward()
    # Each gradient in its input's placements.
    assert x_d.grad.placements == (Replicate(),) and w_d.grad.placements == (Shard(0),)
    x64, w64 = x.double().requires_grad_(), w.double().requires_grad_()
    (x64 @ w64.T).tanh().sum().backward()
    torch.testing.assert_close(x_d.grad.full_tensor().double(), x64.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(w_d.grad.full_tensor().double(), w64.grad, rtol=1e-5, atol=1e-5)


def test_a_dtensor_that_does_not_fit_is_refused(mesh):
    call = column_parallel(1).as_dtensor_op()
    x, w = torch.ones(8, 16), torch.ones(32, 16)
    with pytest.raises(TypeError, match=r"@column_parallel: input #0 is a Tensor, not a DTensor"):
        call(x, distribute_tensor(w, mesh, [Shard(0)]))
    with pytest.raises(ValueError, match=r"input #1 has global shape \[32, 8\], the program takes \[32, 16\]"):
        call(distribute_tensor(x, mesh, [Shard(0)]), distribute_tensor(torch.ones(32, 8), mesh, [Shard(0)]))
    with pytest.raises(TypeError, match="takes 2 input DTensors, got 1"):
        call(distribute_tensor(x, mesh, [Shard(0)]))
    two = column_parallel(2).as_dtensor_op()
    with pytest.raises(ValueError, match=r"input #0 is on a DeviceMesh of ranks \[0\], the program's mesh holds \[0, 1\]"):
        two(distribute_tensor(x, mesh, [Shard(0)]), distribute_tensor(w, mesh, [Shard(0)]))


def test_host_ir_has_no_placements():
    program = hir.compile(HOST_NEG)
    assert program.distributions == [None, None]
    with pytest.raises(ValueError, match="@neg is host IR: its parameters have no distribution"):
        program.as_dtensor_op()
    with pytest.raises(ValueError, match="@neg returns nothing"):
        program.as_torch_op()
