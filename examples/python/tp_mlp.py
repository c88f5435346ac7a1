"""A tensor-parallel MLP forward, Y = relu(X @ W1) @ W2, with HIR doing its
two communicating GEMMs, checked against the same MLP computed whole.

Megatron-style over D ranks with sequence parallelism: every rank holds a
slice of X's rows (tokens), a column block W1[:, c] and the matching row
block W2[c, :]. HIR runs

- AG+GEMM: gathers X's rows from every rank, slice by slice on a pool of
  streams, while multiplying the slices that arrived by W1's block:
  H[c] = X @ W1[:, c];
- GEMM+RS: multiplies relu(H[c]) by W2's block and reduce-scatters the sum
  over the ranks, so each rank ends with its rows of Y, again slice by
  slice so that the communication overlaps the GEMMs.

The activation in between runs in the host framework (numpy or torch).
Runs with numpy on the cpu backend, the D ranks as threads of this process:

    python examples/python/tp_mlp.py --ranks 2

or with torch tensors on GPUs, zero-copy on torch's current stream, one rank
in this process, or one rank per process under torchrun (ranks = WORLD_SIZE):

    python examples/python/tp_mlp.py --torch
    torchrun --nproc-per-node 4 examples/python/tp_mlp.py --torch
"""

import argparse
import os
import sys

import hir

# The token axis T is laid out [S, D, t]: S stream slices of D ranks' t rows.
AG_GEMM = """
fusion.mesh @tp = [{mesh}]
// H[s, c, r] = X[s, r] @ W1[c]: X's row blocks r are gathered (didx -> serial),
// slice s on stream s, and multiplied by this rank's column block c of W1.
func.func @ag_gemm(%x: tensor<{S}x{D}x{t}x{H}x{dt}, #fusion.dist<@tp, [serial, didx, serial, serial]>>,
                   %w1: tensor<{D}x{H}x{Fl}x{dt}, #fusion.dist<@tp, [didx, serial, serial]>>)
    -> tensor<{S}x{D}x{D}x{t}x{Fl}x{dt}, #fusion.dist<@tp, [stream, didx, serial, serial, serial]>> {{
  %xb = fusion.broadcast %x [1] : tensor<{S}x{D}x{t}x{H}x{dt}, #fusion.dist<@tp, [serial, didx, serial, serial]>>
      -> tensor<{S}x{D}x{D}x{t}x{H}x{dt}, #fusion.dist<@tp, [stream, didx, serial, serial, serial]>>
  %wb = fusion.broadcast %w1 [0, 2] : tensor<{D}x{H}x{Fl}x{dt}, #fusion.dist<@tp, [didx, serial, serial]>>
      -> tensor<{S}x{D}x{D}x{H}x{Fl}x{dt}, #fusion.dist<@tp, [serial, didx, serial, serial, serial]>>
  %h = fusion.matmul %xb, %wb : tensor<{S}x{D}x{D}x{t}x{H}x{dt}, #fusion.dist<@tp, [stream, didx, serial, serial, serial]>>,
                                tensor<{S}x{D}x{D}x{H}x{Fl}x{dt}, #fusion.dist<@tp, [serial, didx, serial, serial, serial]>>
      -> tensor<{S}x{D}x{D}x{t}x{Fl}x{dt}, #fusion.dist<@tp, [stream, didx, serial, serial, serial]>>
  return %h : tensor<{S}x{D}x{D}x{t}x{Fl}x{dt}, #fusion.dist<@tp, [stream, didx, serial, serial, serial]>>
}}
"""

GEMM_RS = """
fusion.mesh @tp = [{mesh}]
// Y[s, r] = sum_c A[s, c, r] @ W2[c]: each rank multiplies by its row block c
// of W2, and the sum over c is a reduce-scatter of the row blocks r, slice s
// on stream s.
func.func @gemm_rs(%a: tensor<{S}x{D}x{D}x{t}x{Fl}x{dt}, #fusion.dist<@tp, [serial, didx, serial, serial, serial]>>,
                   %w2: tensor<{D}x{Fl}x{H}x{dt}, #fusion.dist<@tp, [didx, serial, serial]>>)
    -> tensor<{S}x{D}x{t}x{H}x{dt}, #fusion.dist<@tp, [stream, didx, serial, serial]>> {{
  %wb = fusion.broadcast %w2 [0, 2] : tensor<{D}x{Fl}x{H}x{dt}, #fusion.dist<@tp, [didx, serial, serial]>>
      -> tensor<{S}x{D}x{D}x{Fl}x{H}x{dt}, #fusion.dist<@tp, [serial, didx, serial, serial, serial]>>
  %p = fusion.matmul %a, %wb : tensor<{S}x{D}x{D}x{t}x{Fl}x{dt}, #fusion.dist<@tp, [serial, didx, serial, serial, serial]>>,
                               tensor<{S}x{D}x{D}x{Fl}x{H}x{dt}, #fusion.dist<@tp, [serial, didx, serial, serial, serial]>>
      -> tensor<{S}x{D}x{D}x{t}x{H}x{dt}, #fusion.dist<@tp, [stream, didx, serial, serial, serial]>>
  %y = fusion.sum %p [1] : tensor<{S}x{D}x{D}x{t}x{H}x{dt}, #fusion.dist<@tp, [stream, didx, serial, serial, serial]>>
      -> tensor<{S}x{D}x{t}x{H}x{dt}, #fusion.dist<@tp, [stream, didx, serial, serial]>>
  return %y : tensor<{S}x{D}x{t}x{H}x{dt}, #fusion.dist<@tp, [stream, didx, serial, serial]>>
}}
"""


def programs(D, S, t, H, F, dtype="f32", num_streams=None):
    """The two HIR programs for D ranks and S stream slices of t tokens."""
    shapes = dict(mesh=", ".join(map(str, range(D))), D=D, S=S, t=t, H=H, Fl=F // D, dt=dtype)
    options = dict(num_streams=num_streams or S)
    return hir.compile(AG_GEMM.format(**shapes), **options), hir.compile(GEMM_RS.format(**shapes), **options)


def shards(x, w1, w2, D, S, t, rank):
    """Rank `rank`'s local shards of the global X [T, H], W1 [H, F], W2 [F, H]."""
    H, F = w1.shape
    Fl = F // D
    x_r = x.reshape(S, D, t, H)[:, rank : rank + 1]
    w1_r = w1[:, rank * Fl : (rank + 1) * Fl].reshape(1, H, Fl)
    w2_r = w2[rank * Fl : (rank + 1) * Fl].reshape(1, Fl, H)
    return contiguous(x_r), contiguous(w1_r), contiguous(w2_r)


def contiguous(array):
    return array.contiguous() if hasattr(array, "contiguous") else array.copy()


def relu(array):
    return array.clamp(min=0) if hasattr(array, "clamp") else array.clip(min=0)


def tp_mlp_threads(ag_gemm, gemm_rs, x, w1, w2, D, S, t):
    """Every rank in this process (hir.init(world_size=D)): Y's row blocks
    of every rank, as the global Y [T, H]."""
    local = [shards(x, w1, w2, D, S, t, rank) for rank in range(D)]
    h = ag_gemm.run_ranks([[x_r, w1_r] for x_r, w1_r, _ in local])
    y = gemm_rs.run_ranks([[relu(h_r), w2_r] for (h_r,), (_, _, w2_r) in zip(h, local)])
    import numpy

    return numpy.concatenate([y_r for (y_r,) in y], axis=1).reshape(x.shape)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranks", type=int, default=2, help="ranks as threads (numpy, cpu backend)")
    parser.add_argument("--torch", action="store_true", help="torch tensors on GPUs (cuda backend)")
    parser.add_argument("--streams", type=int, default=2, help="stream slices S of the token axis")
    parser.add_argument("--tokens-per-slice", type=int, default=4, help="t: tokens of one rank's slice")
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--ffn", type=int, default=64)
    args = parser.parse_args()
    S, t, H, F = args.streams, args.tokens_per_slice, args.hidden, args.ffn
    if args.torch:
        return run_torch(S, t, H, F)
    D = args.ranks
    import numpy

    rng = numpy.random.default_rng(0)
    T = S * D * t
    x = rng.standard_normal((T, H), dtype=numpy.float32)
    w1 = (rng.standard_normal((H, F)) / numpy.sqrt(H)).astype(numpy.float32)
    w2 = (rng.standard_normal((F, H)) / numpy.sqrt(F)).astype(numpy.float32)
    hir.init(world_size=D, backend="cpu", num_streams=S)
    ag_gemm, gemm_rs = programs(D, S, t, H, F)
    y = tp_mlp_threads(ag_gemm, gemm_rs, x, w1, w2, D, S, t)
    expected = relu(x @ w1) @ w2
    return report(D, float(abs(y - expected).max() / abs(expected).max()))


def run_torch(S, t, H, F):
    """One rank in this process on GPU LOCAL_RANK; under torchrun, WORLD_SIZE
    ranks through torch.distributed's rendezvous."""
    import torch

    D = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    torch.cuda.set_device(device)
    if D > 1:
        import torch.distributed as dist

        dist.init_process_group("nccl")
        hir.init_from_torch(num_streams=S)
    generator = torch.Generator().manual_seed(0)
    T = S * D * t
    x = torch.randn(T, H, generator=generator)
    w1 = torch.randn(H, F, generator=generator) / H**0.5
    w2 = torch.randn(F, H, generator=generator) / F**0.5
    ag_gemm, gemm_rs = programs(D, S, t, H, F)
    x_r, w1_r, w2_r = (array.to(device) for array in shards(x, w1, w2, D, S, t, rank))
    h = ag_gemm(x_r, w1_r)
    y_r = gemm_rs(relu(h), w2_r)
    expected = (relu(x @ w1) @ w2).reshape(S, D, t, H)[:, rank : rank + 1].to(device)
    error = ((y_r - expected).abs().max() / expected.abs().max()).item()
    return report(D, error, rank)


def report(D, error, rank=0):
    ok = error <= 1e-4
    print(f"tp_mlp: {D} rank{'s' if D > 1 else ''}, rank {rank}: max relative error {error:.2e}: {'ok' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
