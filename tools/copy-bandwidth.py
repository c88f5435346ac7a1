# Copy-engine bandwidth between GPU peers, in one process with PyTorch: a
# 64 MB copy on one stream or split over several, pushed (issued on the
# source's stream) or pulled (on the destination's), two peers into one GPU
# at once, and ring patterns with every GPU at once, alone and beside GEMMs.
# Run on the device machine:
#   NCCL_NVLS_ENABLE=0 /opt/torch/.venv/bin/python tools/copy-bandwidth.py
# docs/benchmarks.md cites the single-pair and two-peer rows. The ring rows
# go through PyTorch's cross-device copy, which orders the copy with the
# current streams of both devices, so they measure that ordering as well.
import torch, sys
n = torch.cuda.device_count()
MB = 1 << 20
def t_ms(fn, iters=10):
    for _ in range(3): fn()
    for d in range(n): torch.cuda.synchronize(d)
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    with torch.cuda.device(0):
        s.record()
        for _ in range(iters): fn()
        for d in range(n): torch.cuda.synchronize(d)
        e.record(); e.synchronize()
    return s.elapsed_time(e) / iters
size = 64 * MB
bufs = [torch.empty(size, dtype=torch.uint8, device=f"cuda:{d}") for d in range(n)]
dsts = [[torch.empty(size, dtype=torch.uint8, device=f"cuda:{d}") for _ in range(2)] for d in range(n)]
streams = [[torch.cuda.Stream(device=d) for _ in range(4)] for d in range(n)]
def copy(dst, src, dev, parts, s_off=0):
    step = size // parts
    for p in range(parts):
        st = streams[dev][(p + s_off) % 4]
        with torch.cuda.device(dev), torch.cuda.stream(st):
            dst[p*step:(p+1)*step].copy_(src[p*step:(p+1)*step], non_blocking=True)
# GEMM load on each GPU (a 16384x8192x2048-ish slice GEMM)
A = [torch.randn(8192, 8192, dtype=torch.bfloat16, device=f"cuda:{d}") for d in range(n)]
B = [torch.randn(8192, 2048, dtype=torch.bfloat16, device=f"cuda:{d}") for d in range(n)]
gs = [torch.cuda.Stream(device=d) for d in range(n)]
def gemms(k):
    for d in range(n):
        with torch.cuda.device(d), torch.cuda.stream(gs[d]):
            for _ in range(k): torch.mm(A[d], B[d])
def report(name, ms, bytes_per_gpu):
    print(f"{name:60s} {ms*1000:8.1f} us  {bytes_per_gpu/ms/1e6:7.1f} GB/s per GPU", flush=True)
g = t_ms(lambda: gemms(4)); print(f"4 gemms 8192x8192x2048 alone: {g*1000:.1f} us", flush=True)
for parts in (1, 2, 4):
    report(f"1->0 push (src stream) parts={parts}", t_ms(lambda: copy(dsts[0][0], bufs[1], 1, parts)), size)
    report(f"1->0 pull (dst stream) parts={parts}", t_ms(lambda: copy(dsts[0][0], bufs[1], 0, parts)), size)
report("1->0 and 2->0 pull at once (two peers)", t_ms(lambda: (copy(dsts[0][0], bufs[1], 0, 1, 0), copy(dsts[0][1], bufs[2], 0, 1, 1))), 2*size)
report("1->0 and 2->0 push at once (two peers)", t_ms(lambda: (copy(dsts[0][0], bufs[1], 1, 1), copy(dsts[0][1], bufs[2], 2, 1))), 2*size)
for parts in (1, 2, 4):
    report(f"ring push d->d+1 all GPUs parts={parts}", t_ms(lambda: [copy(dsts[(d+1)%n][0], bufs[d], d, parts) for d in range(n)]), size)
    report(f"ring pull all GPUs parts={parts}", t_ms(lambda: [copy(dsts[(d+1)%n][0], bufs[d], (d+1)%n, parts) for d in range(n)]), size)
report("ring push, two peers each (d+1, d+2) parts=1", t_ms(lambda: [copy(dsts[(d+k)%n][k-1], bufs[d], d, 1, k) for d in range(n) for k in (1, 2)]), 2*size)
report("ring pull, two peers each parts=1", t_ms(lambda: [copy(dsts[(d+k)%n][k-1], bufs[d], (d+k)%n, 1, k) for d in range(n) for k in (1, 2)]), 2*size)
for parts in (1, 2):
    report(f"ring push + 4 gemms each GPU parts={parts}", t_ms(lambda: (gemms(4), [copy(dsts[(d+1)%n][0], bufs[d], d, parts) for d in range(n)])), size)
    report(f"ring push x3 serial + 4 gemms parts={parts}", t_ms(lambda: (gemms(4), [copy(dsts[(d+1)%n][0], bufs[d], d, parts) for _ in range(3) for d in range(n)])), 3*size)
