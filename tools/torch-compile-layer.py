# A model that calls HIR as a torch op, compiled with
# torch.compile(fullgraph=True), beside the same model in eager PyTorch
# (issue 40's "a compiled model calling HIR ops beside the same model in
# eager PyTorch"). The model is a pre-norm sequence-parallel MLP block,
# y = x + MLP(LayerNorm(x)), with Megatron's TP MLP over the job's D ranks:
#   hir-eager     the block in eager torch, its MLP one HIR op (allgather
#                 into FC1 + gelu, FC2 into a reduce-scatter, overlapped as
#                 HIR lowers them);
#   hir-compiled  the same module under torch.compile(fullgraph=True): the
#                 LayerNorm and the residual traced around the HIR op;
#   torch-eager   the block in PyTorch alone: all_gather_into_tensor, two
#                 F.linear, gelu, reduce_scatter_tensor;
#   torch-compiled  the same under torch.compile (its collectives as
#                 functional collectives in the graph).
# Every variant's output is checked against torch-eager first. Times: GPU
# events around one call on the current stream (cuda), wall time (cpu),
# the slowest rank, the median of the timed calls.
# Run under torchrun, one rank a process:
#   PYTHONPATH=<the wheel's site-packages> torchrun --nproc-per-node D \
#     tools/torch-compile-layer.py [--tokens T --hidden H --ffn F --dtype bf16 --iters N]
# With CUDA tensors on D GPUs (nccl), or on the cpu backend with gloo
# (--cpu, f32: a check that it runs, no meaningful time).
import argparse
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

import hir


class Block(torch.nn.Module):
    """y = x + MLP(LayerNorm(x)) on this rank's tokens; `mlp` is the TP MLP
    of this rank's shards (a HIR op, or PyTorch's)."""

    def __init__(self, hidden, w1, b1, w2, mlp):
        super().__init__()
        self.norm = torch.nn.LayerNorm(hidden, device=w1.device, dtype=w1.dtype)
        self.w1, self.b1, self.w2 = (torch.nn.Parameter(w, requires_grad=False) for w in (w1, b1, w2))
        self.mlp = mlp

    def forward(self, x):
        return x + self.mlp(self.norm(x), self.w1, self.b1, self.w2)


def torch_mlp(D):
    """PyTorch's TP MLP on this rank's shards: gather the tokens, the two
    linears with gelu, reduce-scatter the partial sums."""

    def mlp(x, w1, b1, w2):
        gathered = torch.empty((D * x.shape[0], x.shape[1]), dtype=x.dtype, device=x.device)
        dist.all_gather_into_tensor(gathered, x)
        partial = F.linear(F.gelu(F.linear(gathered, w1, b1), approximate="tanh"), w2)
        if dist.get_backend() == "gloo":
            # gloo has no reduce-scatter: the sum, then this rank's rows.
            dist.all_reduce(partial)
            return partial.chunk(D)[dist.get_rank()].contiguous()
        y = torch.empty_like(x)
        dist.reduce_scatter_tensor(y, partial)
        return y

    return mlp


def timed(call, iters, cuda):
    """Median time of one call in ms, after warm-up: GPU events on the
    current stream, or wall time."""
    for _ in range(3):
        call()
    samples = []
    for _ in range(iters):
        dist.barrier()
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            call()
            end.record()
            end.synchronize()
            samples.append(start.elapsed_time(end))
        else:
            begin = time.perf_counter()
            call()
            samples.append((time.perf_counter() - begin) * 1e3)
    return statistics.median(samples)


def slowest(value):
    """The largest `value` over the ranks (on the GPU under NCCL, which
    reduces no CPU tensor)."""
    device = torch.device("cuda") if dist.get_backend() == "nccl" else torch.device("cpu")
    found = torch.tensor([value], dtype=torch.float64, device=device)
    dist.all_reduce(found, op=dist.ReduceOp.MAX)
    return float(found)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tokens", type=int, default=8192)
    parser.add_argument("--hidden", type=int, default=4096)
    parser.add_argument("--ffn", type=int, default=16384)
    parser.add_argument("--dtype", choices=["bf16", "f32"], default="bf16")
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--cpu", action="store_true", help="gloo and the cpu backend")
    args = parser.parse_args()
    D, rank = int(os.environ["WORLD_SIZE"]), int(os.environ["RANK"])
    cuda = not args.cpu
    if cuda:
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    dist.init_process_group("nccl" if cuda else "gloo")
    hir.init_from_torch()
    dtype = {"bf16": torch.bfloat16, "f32": torch.float32}[args.dtype]
    T, H, Fh = args.tokens, args.hidden, args.ffn
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(T, H, generator=generator)
    w1 = torch.randn(Fh, H, generator=generator) / H**0.5
    b1 = torch.randn(Fh, generator=generator) / 4
    w2 = torch.randn(H, Fh, generator=generator) / Fh**0.5
    t, f = T // D, Fh // D
    local = [
        a.to(device=device, dtype=dtype).contiguous()
        for a in (x[rank * t : (rank + 1) * t], w1[rank * f : (rank + 1) * f], b1[rank * f : (rank + 1) * f], w2[:, rank * f : (rank + 1) * f])
    ]
    x_r, shards = local[0], local[1:]

    op = hir.compile(hir.models.tp_mlp(D, T, H, Fh, args.dtype)).as_torch_op()
    variants = {
        "hir-eager": Block(H, *shards, op),
        "torch-eager": Block(H, *shards, torch_mlp(D)),
    }
    variants["hir-compiled"] = torch.compile(variants["hir-eager"], fullgraph=True)
    variants["torch-compiled"] = torch.compile(variants["torch-eager"])
    with torch.no_grad():
        expected = variants["torch-eager"](x_r).float()
        scale = float(expected.abs().max())
        tolerance = 2e-2 if dtype == torch.bfloat16 else 1e-4
        times = {}
        for name, model in variants.items():
            error = slowest(float((model(x_r).float() - expected).abs().max()) / scale)
            if error > tolerance:
                raise SystemExit(f"{name}: relative error {error:.3g} against torch-eager (tolerance {tolerance})")
            times[name] = (slowest(timed(lambda: model(x_r), args.iters, cuda)), error)
    if rank == 0:
        where = torch.cuda.get_device_name() if cuda else "cpu (gloo, not meaningful as time)"
        print(f"block x + MLP(LayerNorm(x)), T {T} H {H} F {Fh} {args.dtype}, D = {D} on {where}, "
              f"hir {hir.__version__}, torch {torch.__version__}; median of {args.iters}, slowest rank")
        print("| variant | ms a call | max relative error against torch-eager |")
        print("|---|---|---|")
        for name, (ms, error) in times.items():
            print(f"| {name} | {ms:.3f} | {error:.2e} |")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
