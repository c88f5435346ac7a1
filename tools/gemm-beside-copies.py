# What a ring's copies cost the GEMMs beside them, with no dependency between
# the two: on every GPU at once, the ring's GEMM in parts (one stream) alone
# and beside the ring's copies (another stream, the copy engine), against the
# whole GEMM alone, and the whole GEMM beside the copies (what copies cost a
# GEMM that is not split).
# - ag: each GPU's GEMM is [M, K] x [K, N] in rows; each step it pushes its
#   [M/D, K] shard, in parts, to its pairwise partner rank ^ step.
# - rs: each GPU's GEMM is [M, K/D] x [K/D, N] in accumulating row parts
#   (beta = 1, as the chain's); each step it pushes a [M/D, N] partial, in
#   parts, to its partner.
# Run on the device machine (one process, all GPUs):
#   NCCL_NVLS_ENABLE=0 /opt/torch/.venv/bin/python tools/gemm-beside-copies.py [ag|rs M K N [parts]]
# Defaults: ag 16384 8192 2048, two parts per step (the ring's default).
import ctypes
import statistics
import sys

import torch

n = torch.cuda.device_count()
FAMILY = sys.argv[1] if len(sys.argv) >= 2 else "ag"
M, K, N = (int(x) for x in sys.argv[2:5]) if len(sys.argv) >= 5 else (16384, 8192, 2048)
PARTS = int(sys.argv[5]) if len(sys.argv) >= 6 else 2
ITERS, WARMUP = 20, 5
assert FAMILY in ("ag", "rs"), "the family is ag or rs"
assert n & (n - 1) == 0, "pairwise partners (rank ^ step) need a power-of-two GPU count"
shard, part = M // n, M // n // PARTS
# The GEMM's contraction on each GPU, and the columns of what a step sends.
k_local, sent_cols = (K, K) if FAMILY == "ag" else (K // n, N)

dev = [torch.device(f"cuda:{d}") for d in range(n)]
a = [torch.randn(M, k_local, dtype=torch.bfloat16, device=d) for d in dev]
b = [torch.randn(k_local, N, dtype=torch.bfloat16, device=d) for d in dev]
c = [torch.randn(M, N, dtype=torch.bfloat16, device=d) for d in dev]
# What a GPU sends, and where its peers' copies land: buffers of their own,
# so the GEMMs' operands are not the copies' (as in the ring's slots).
outgoing = [torch.randn(M, sent_cols, dtype=torch.bfloat16, device=d) for d in dev]
incoming = [torch.empty(M, sent_cols, dtype=torch.bfloat16, device=d) for d in dev]
gemm_stream = [torch.cuda.Stream(device=d) for d in dev]
copy_stream = [torch.cuda.Stream(device=d) for d in dev]
# PyTorch's cross-device copy orders each copy with the destination's current
# stream too, which chains the GPUs' copies; the ring's are plain
# cuMemcpyAsync calls on the sender's stream, and so are these. A first
# PyTorch copy per pair enables peer access.
libcuda = ctypes.CDLL("libcuda.so.1")
for d in range(n):
    for to in range(n):
        if to != d:
            incoming[to][:1].copy_(outgoing[d][:1])
torch.cuda.synchronize()


def push(dst, src, stream):
    result = libcuda.cuMemcpyAsync(
        ctypes.c_uint64(dst.data_ptr()),
        ctypes.c_uint64(src.data_ptr()),
        ctypes.c_size_t(src.numel() * src.element_size()),
        ctypes.c_void_p(stream.cuda_stream),
    )
    assert result == 0, f"cuMemcpyAsync failed: {result}"


def gemms(d, whole):
    with torch.cuda.device(d), torch.cuda.stream(gemm_stream[d]):
        if whole:
            torch.mm(a[d], b[d], out=c[d])
        else:
            for rows in range(0, M, part):
                out = c[d][rows : rows + part]
                if FAMILY == "ag":
                    torch.mm(a[d][rows : rows + part], b[d], out=out)
                else:
                    out.addmm_(a[d][rows : rows + part], b[d])


def copies(d):
    with torch.cuda.device(d):
        for step in range(1, n):
            to = d ^ step
            for p in range(PARTS):
                rows = slice(d * shard + p * part, d * shard + (p + 1) * part)
                push(incoming[to][rows], outgoing[d][rows], copy_stream[d])


# Each stream first sleeps this long on the GPU (about 15 ms), so that one
# host thread enqueues all the work of every GPU before any of it starts.
HOLD_CYCLES = 30_000_000


def timed(run_gemms, run_copies, whole=False):
    """Median over iterations of the slowest GPU's GEMM-stream and copy-stream spans (ms)."""
    spans = []
    for it in range(WARMUP + ITERS):
        for d in range(n):
            torch.cuda.synchronize(d)
        events = []
        for d in range(n):
            with torch.cuda.device(d):
                marks = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
                for stream, start in ((gemm_stream[d], marks[0]), (copy_stream[d], marks[2])):
                    with torch.cuda.stream(stream):
                        torch.cuda._sleep(HOLD_CYCLES)
                    start.record(stream)
                events.append(marks)
        for d in range(n):
            if run_gemms:
                gemms(d, whole)
        for d in range(n):
            if run_copies:
                copies(d)
        for d in range(n):
            with torch.cuda.device(d):
                events[d][1].record(gemm_stream[d])
                events[d][3].record(copy_stream[d])
        for d in range(n):
            torch.cuda.synchronize(d)
        if it >= WARMUP:
            spans.append(
                (
                    max(e[0].elapsed_time(e[1]) for e in events),
                    max(e[2].elapsed_time(e[3]) for e in events),
                )
            )
    return statistics.median(s[0] for s in spans), statistics.median(s[1] for s in spans)


print(f"{FAMILY}, {n} GPUs, {torch.cuda.get_device_name(0)}; GEMM per GPU {M}x{k_local}x{N} "
      f"bf16, {n * PARTS} parts of {part} rows; copies: {n - 1} steps of {PARTS} x "
      f"{part * sent_cols * 2 / 2**20:.0f} MiB per GPU; medians of {ITERS}", flush=True)
whole, _ = timed(True, False, whole=True)
parts, _ = timed(True, False)
_, alone = timed(False, True)
beside, copying = timed(True, True)
whole_beside, _ = timed(True, True, whole=True)
print(f"whole GEMM alone:              {whole * 1e3:8.1f} us")
print(f"GEMM in parts alone:           {parts * 1e3:8.1f} us  ({whole / parts:.3f} of the whole's speed)")
print(f"copies alone:                  {alone * 1e3:8.1f} us")
print(f"GEMM in parts beside copies:   {beside * 1e3:8.1f} us  ({whole / beside:.3f} of the whole's speed)")
print(f"copies beside the GEMM:        {copying * 1e3:8.1f} us")
print(f"whole GEMM beside copies:      {whole_beside * 1e3:8.1f} us  ({whole / whole_beside:.3f} of the whole's speed)")
