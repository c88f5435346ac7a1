# PyTorch's async-TP (SymmetricMemory's fused_all_gather_matmul and
# fused_matmul_reduce_scatter) on the shapes of hir-bench, as the baseline
# the issue names: per shape, the GEMM alone, the NCCL collective followed by
# (or following) the GEMM, and the fused op, each timed as hir-bench times
# (median of 20 iterations after 5, a barrier before each, CUDA events, the
# slowest rank's time); the fused op's output is checked as hir-bench's
# outputs are, against the GEMM alone's (for rs, NCCL's f32 reduce-scatter of
# the GEMM alone's partials).
# Run on the device machine, one process per GPU:
#   NCCL_NVLS_ENABLE=0 /opt/torch/.venv/bin/python tools/torch-async-tp.py [D]
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.distributed import _symmetric_memory as symm_mem

SHAPES = [(32768, 16384, 8192), (8192, 16384, 8192), (16384, 8192, 2048)]


def timed_ms(fn, group, iters=20, warmup=5):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        dist.barrier(group)
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        elapsed = torch.tensor([start.elapsed_time(end)], device="cuda")
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX, group=group)
        times.append(elapsed.item())
    times.sort()
    return times[len(times) // 2]


def worker(rank, size):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=size, device_id=torch.device("cuda", rank))
    group = dist.group.WORLD
    symm_mem.enable_symm_mem_for_group(group.group_name)
    torch.manual_seed(rank)
    if rank == 0:
        print(f"torch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, D={size}")
        print(f"{'family':6} {'MxKxN':18} {'variant':10} {'median_ms':>9} {'TFLOP/s':>8} {'vs_gemm':>7}  check (async-tp)")
    for m, k, n in SHAPES:
        # AG+GEMM: A [M, K] row-sharded, B [K, N] on every rank.
        shard = torch.randn(m // size, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        gathered = torch.empty(m, k, device="cuda", dtype=torch.bfloat16)
        dist.all_gather_into_tensor(gathered, shard, group=group)
        reference = (gathered @ b).float()
        _, (fused,) = torch.ops.symm_mem.fused_all_gather_matmul(shard, [b], 0, group.group_name)
        ag_check = close(fused, reference)

        def ag_nooverlap():
            dist.all_gather_into_tensor(gathered, shard, group=group)
            torch.mm(gathered, b)

        rows = [
            ("gemm", lambda: torch.mm(gathered, b), "-"),
            ("nooverlap", ag_nooverlap, "-"),
            ("async-tp", lambda: torch.ops.symm_mem.fused_all_gather_matmul(shard, [b], 0, group.group_name), ag_check),
        ]
        report("ag", (m, k, n), rows, group, 2 * m * n * k, rank)
        del shard, b, gathered, reference, fused

        # GEMM+RS: A [M, K/D] and B [K/D, N] on each rank, the sum scattered by rows.
        a = torch.randn(m, k // size, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k // size, n, device="cuda", dtype=torch.bfloat16)
        out = torch.empty(m // size, n, device="cuda", dtype=torch.bfloat16)
        partial = (a @ b).float()
        reference = torch.empty(m // size, n, device="cuda", dtype=torch.float32)
        dist.reduce_scatter_tensor(reference, partial, group=group)
        fused = torch.ops.symm_mem.fused_matmul_reduce_scatter(a, b, "sum", 0, group.group_name)
        rs_check = close(fused, reference)

        def rs_nooverlap():
            dist.reduce_scatter_tensor(out, torch.mm(a, b), group=group)

        rows = [
            ("gemm", lambda: torch.mm(a, b), "-"),
            ("nooverlap", rs_nooverlap, "-"),
            ("async-tp", lambda: torch.ops.symm_mem.fused_matmul_reduce_scatter(a, b, "sum", 0, group.group_name), rs_check),
        ]
        report("rs", (m, k, n), rows, group, 2 * m * n * k // size, rank)
        del a, b, out, partial, reference, fused
        torch.cuda.empty_cache()
    dist.destroy_process_group()


def close(result, reference):
    """hir-bench's check: the largest error against the reference, relative to its largest entry."""
    error = ((result.float() - reference).abs().max() / reference.abs().max()).item()
    return f"{error:.2e} {'ok' if error < 3e-2 else 'MISMATCH'}"


def report(family, shape, rows, group, flops, rank):
    gemm_ms = None
    for variant, fn, check in rows:
        ms = timed_ms(fn, group)
        gemm_ms = gemm_ms or ms
        if rank == 0:
            mkn = "x".join(map(str, shape))
            print(f"{family:6} {mkn:18} {variant:10} {ms:9.3f} {flops / ms / 1e9:8.1f} {gemm_ms / ms:7.3f}  {check}", flush=True)


if __name__ == "__main__":
    size = int(sys.argv[1]) if len(sys.argv) > 1 else torch.cuda.device_count()
    mp.spawn(worker, args=(size,), nprocs=size)
