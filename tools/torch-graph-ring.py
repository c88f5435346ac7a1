# HIR's TP MLP (examples/python/tp_mlp.py: AG+GEMM, then GEMM+RS) lowered
# with CUDA-IPC rings (p2p=cuda), captured in a torch.cuda.graph on every
# rank and replayed with new inputs each time: each replay's output is
# checked on every rank against the whole MLP computed by torch. A replay
# that signalled stale transfer flags would read a peer's previous chunk.
# Run on a machine with D GPUs:
#   PYTHONPATH=<the wheel's site-packages>:examples/python \
#     torchrun --nproc-per-node D tools/torch-graph-ring.py [REPLAYS]
import os
import sys

import torch
import torch.distributed as dist

import hir
from tp_mlp import AG_GEMM, GEMM_RS, relu, shards

S, T_SLICE, H, F = 2, 4, 32, 64


def main():
    replays = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    D, rank = int(os.environ["WORLD_SIZE"]), int(os.environ["RANK"])
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl")
    hir.init_from_torch(num_streams=S)
    shapes = dict(mesh=", ".join(map(str, range(D))), D=D, S=S, t=T_SLICE, H=H, Fl=F // D, dt="f32")
    options = dict(num_streams=S, p2p="cuda", overlap="auto")
    ag_gemm = hir.compile(AG_GEMM.format(**shapes), **options)
    gemm_rs = hir.compile(GEMM_RS.format(**shapes), **options)
    T = S * D * T_SLICE

    def weights_and_input(step):
        generator = torch.Generator().manual_seed(step)
        return (
            torch.randn(T, H, generator=generator),
            torch.randn(H, F, generator=torch.Generator().manual_seed(-1)) / H**0.5,
            torch.randn(F, H, generator=torch.Generator().manual_seed(-2)) / F**0.5,
        )

    x, w1, w2 = weights_and_input(0)
    x_r, w1_r, w2_r = (array.to(device) for array in shards(x, w1, w2, D, S, T_SLICE, rank))

    def layer():
        return gemm_rs(relu(ag_gemm(x_r, w1_r)), w2_r)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            layer()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y_r = layer()
    worst = 0.0
    for step in range(1, replays + 1):
        x, _, _ = weights_and_input(step)
        x_r.copy_(shards(x, w1, w2, D, S, T_SLICE, rank)[0])
        graph.replay()
        expected = (relu(x @ w1) @ w2).reshape(S, D, T_SLICE, H)[:, rank : rank + 1].to(device)
        error = ((y_r - expected).abs().max() / expected.abs().max()).item()
        worst = max(worst, error)
        if error > 1e-4:
            print(f"rank {rank}: replay {step}: max relative error {error:.2e}: MISMATCH")
            return 1
    print(f"rank {rank} of {D}: {replays} checked replays of a torch.cuda.graph holding HIR's "
          f"AG+GEMM and GEMM+RS over CUDA-IPC rings: worst relative error {worst:.2e}: ok")
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
