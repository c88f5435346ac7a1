"""One rank of the torch.distributed jobs of `test_distributed.py`: joins
HIR's world through the job's c10d store, runs the tensor-parallel MLP of
`examples/python/tp_mlp.py` on torch CPU tensors (cpu backend), and checks
its rows of Y against the MLP computed whole by torch.

usage: distributed_worker.py gloo|torchrun|gloo-bad-rank|gloo-grad|gloo-train

- gloo: `init_process_group("gloo")` first (RANK, WORLD_SIZE, MASTER_ADDR,
  MASTER_PORT from the environment), then `hir.init_from_torch()`: HIR meets
  at the process group's store, and the group still works after it;
- torchrun: no process group: `hir.init_from_torch()` meets at torchrun's
  agent store through its rendezvous;
- gloo-bad-rank: as gloo, but rank 1 passes X's shard in the wrong shape:
  it must get a ValueError, and rank 0 a RunError naming rank 1 long before
  its 60 s timeout;
- gloo-grad: as gloo, but the MLP of `test_autograd.py` compiled with
  differentiable=True: each rank's gradients of its shards through torch
  autograd, then the same through DTensors on a DeviceMesh of the two
  ranks, checked against torch's gradients of the whole MLP in float64;
- gloo-train: as gloo, but SGD steps of the transformer block of
  `test_train_block.py` (heads, tokens and the MLP split over the ranks,
  fused attention and its math) on each rank's shards, checked against
  torch's training of the whole block in float64.

Prints `rank R: ok (...)` and exits 0, or says what differs and exits 1.
"""

import os
import pathlib
import sys
import time

import torch
import torch.distributed as dist

import hir

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "python"))
from tp_mlp import programs, relu, shards  # noqa: E402

# Stream slices, tokens per slice, hidden and FFN sizes: small, as in CI.
S, t, H, F = 2, 4, 16, 32


def main():
    mode = sys.argv[1]
    if mode.startswith("gloo"):
        dist.init_process_group("gloo")
    # Without a process group the default backend is cuda wherever a GPU is;
    # this job's tensors are torch CPU tensors.
    backend = "cpu" if mode == "torchrun" else None
    hir.init_from_torch(backend=backend, num_streams=S, timeout=60)
    world = hir.world()
    rank, D = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    expected_world = {"backend": "cpu", "world_size": D, "ranks": [rank], "num_streams": S}
    if world != expected_world:
        print(f"rank {rank}: world {world}, expected {expected_world}")
        return 1
    generator = torch.Generator().manual_seed(0)
    T = S * D * t
    x = torch.randn(T, H, generator=generator)
    w1 = torch.randn(H, F, generator=generator) / H**0.5
    w2 = torch.randn(F, H, generator=generator) / F**0.5
    ag_gemm, gemm_rs = programs(D, S, t, H, F)
    x_r, w1_r, w2_r = shards(x, w1, w2, D, S, t, rank)
    if mode == "gloo-bad-rank":
        return bad_rank(ag_gemm, x_r, w1_r, rank)
    if mode == "gloo-grad":
        return gradients(rank, D)
    if mode == "gloo-train":
        return train_block(rank, D)
    # Twice: the second call's exchanges must not meet the first's keys.
    for _ in range(2):
        h = ag_gemm(x_r, w1_r)
        y_r = gemm_rs(relu(h), w2_r)
    expected = (relu(x @ w1) @ w2).reshape(S, D, t, H)[:, rank : rank + 1]
    error = ((y_r - expected).abs().max() / expected.abs().max()).item()
    if not error <= 1e-4:
        print(f"rank {rank}: max relative error {error:.2e}: MISMATCH")
        return 1
    if mode == "gloo":
        # The process group HIR shares its store with still works.
        total = torch.tensor([float(rank + 1)])
        dist.all_reduce(total)
        if total.item() != D * (D + 1) / 2:
            print(f"rank {rank}: gloo's all_reduce gave {total.item()} after HIR")
            return 1
        dist.destroy_process_group()
    print(f"rank {rank}: ok (max relative error {error:.2e})")
    return 0


def gradients(rank, D):
    """The differentiable MLP's gradients on this rank's shards, by plain
    tensors and by DTensors, against the whole MLP's in float64."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor

    from test_autograd import mlp, mlp_tensors, reference_gradients, reference_mlp

    program = hir.compile(mlp(D), differentiable=True, num_streams=S)
    tensors = mlp_tensors(12)
    dy = torch.randn(8, 16, generator=torch.Generator().manual_seed(13))
    expected = reference_gradients(reference_mlp, tensors, dy)
    rows, ffn = 8 // D, 32 // D
    # Each input's and dy's shard: rows of x, y and w1, b1's block, w2's columns.
    cuts = [
        lambda t: t[rank * rows : (rank + 1) * rows],
        lambda t: t[rank * ffn : (rank + 1) * ffn],
        lambda t: t[rank * ffn : (rank + 1) * ffn],
        lambda t: t[:, rank * ffn : (rank + 1) * ffn],
    ]
    leaves = [cut(tensor).contiguous().requires_grad_() for cut, tensor in zip(cuts, tensors)]
    (program(*leaves) * cuts[0](dy)).sum().backward()
    worst = 0.0
    for leaf, cut, e in zip(leaves, cuts, expected):
        worst = max(worst, relative_error(leaf.grad, cut(e)))
    mesh = init_device_mesh("cpu", (D,))
    # x comes replicated (redistributed to the program's Shard(0)): its
    # gradient must come back replicated, whole.
    placements = [[Replicate()], [Shard(0)], [Shard(0)], [Shard(1)]]
    dtensors = [distribute_tensor(t, mesh, p).requires_grad_() for t, p in zip(tensors, placements)]
    (program.as_dtensor_op()(*dtensors).full_tensor() * dy).sum().backward()
    for dtensor, e in zip(dtensors, expected):
        worst = max(worst, relative_error(dtensor.grad.full_tensor(), e))
    if not worst <= 1e-5:
        print(f"rank {rank}: gradients off by {worst:.2e}: MISMATCH")
        return 1
    dist.destroy_process_group()
    print(f"rank {rank}: ok (gradients' max relative error {worst:.2e})")
    return 0


def train_block(rank, D):
    """The block trained on this rank's shards: each rank's loss is its
    rows' share of the whole MSE, so that the backward's gradients are the
    whole loss's; losses summed over the ranks and weight shards against
    torch's training of the whole block."""
    from test_train_block import FFN, H, LR, STEPS, TOLERANCE, block_program, block_tensors, reference_block, train
    from test_train_block import S as tokens

    x, weights, target = block_tensors(42)
    torch_losses, torch_trained = train(reference_block, x, weights, target, torch.float64)

    def shard(t, split):
        """This rank's block of `t` along the split's axis (None: whole)."""
        axis, size = split
        return t if axis is None else t.narrow(axis, rank * size, size)

    whole, head_rows, ffn = (None, 0), H // D, FFN // D
    # Megatron's splits, as the program's distributions: LayerNorms whole,
    # Wq, Wk, Wv by heads (rows), Wo by columns, W1 and c1 by rows, W2 by columns.
    splits = [whole, whole, (0, head_rows), (0, head_rows), (0, head_rows), (1, head_rows), whole, whole, (0, ffn), (0, ffn), (1, ffn)]
    rows = (0, tokens // D)
    worst = 0.0
    for attention in ("fused", "math"):
        program = hir.compile(block_program(attention, D), differentiable=True, wrt=list(range(1, 12)), num_streams=S)
        # Copies: a whole weight's shard is the tensor itself, which SGD updates.
        shards = [shard(w, split).clone(memory_format=torch.contiguous_format).requires_grad_() for w, split in zip(weights, splits)]
        optimizer = torch.optim.SGD(shards, lr=LR)
        x_r, target_r = shard(x, rows).contiguous(), shard(target, rows)
        losses = []
        for _ in range(STEPS):
            optimizer.zero_grad()
            loss = ((program(x_r, *shards) - target_r) ** 2).sum() / target.numel()
            loss.backward()
            optimizer.step()
            total = loss.detach().clone()
            dist.all_reduce(total)
            losses.append(total.item())
        for got, expected in zip(losses, torch_losses):
            worst = max(worst, abs(got - expected) / expected)
        for trained, split, expected in zip(shards, splits, torch_trained):
            worst = max(worst, relative_error(trained.detach(), shard(expected, split)))
        if not losses[-1] < 0.8 * losses[0]:
            print(f"rank {rank}: {attention} attention's loss did not decrease: {losses}")
            return 1
    if not worst <= TOLERANCE:
        print(f"rank {rank}: trained block off by {worst:.2e}: MISMATCH")
        return 1
    dist.destroy_process_group()
    print(f"rank {rank}: ok (trained block's max relative error {worst:.2e})")
    return 0


def relative_error(got, expected):
    return ((got.double() - expected).abs().max() / expected.abs().max()).item()


def bad_rank(ag_gemm, x_r, w1_r, rank):
    """Rank 1 calls with half of X's shard: a ValueError there, and, through
    the failure it posts to the store, a RunError naming it on rank 0."""
    start = time.monotonic()
    try:
        ag_gemm(x_r[:, :, : t // 2].contiguous() if rank == 1 else x_r, w1_r)
    except (ValueError, hir.RunError) as error:
        elapsed = time.monotonic() - start
        expected = ValueError if rank == 1 else hir.RunError
        if not isinstance(error, expected) or (rank == 0 and "gave up: rank 1 failed in call: ValueError" not in str(error)):
            print(f"rank {rank}: {type(error).__name__}: {error}")
            return 1
        if elapsed > 30:
            print(f"rank {rank}: the error took {elapsed:.0f}s, as if waiting for the timeout")
            return 1
        print(f"rank {rank}: ok ({type(error).__name__} after {elapsed:.1f}s: {error})")
        return 0
    print(f"rank {rank}: the call with a bad rank did not fail")
    return 1


if __name__ == "__main__":
    sys.exit(main())
