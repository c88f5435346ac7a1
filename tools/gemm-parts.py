# What splitting a GEMM into the row parts of a ring costs before any
# communication, in one process with PyTorch on GPU 0: the whole GEMM against
# the same GEMM as P row parts (`addmm_`, beta = 1, as the reduce-scatter
# chain's accumulating parts) run back to back on one stream, and the same
# parts with each on the next of 4 streams after an event wait on the
# previous one (the chain's stream per iteration), and the same parts over 4
# streams with no order between them. The configurations are
# interleaved and repeated, as the GPU's clocks drift over a run.
# Run on the device machine:
#   /opt/torch/.venv/bin/python tools/gemm-parts.py
# docs/benchmarks.md cites its rows for GEMM+RS at 8192x16384x8192 and
# AG+GEMM at 16384x8192x2048, D = 4.
import torch

torch.cuda.set_device(0)
streams = [torch.cuda.Stream() for _ in range(4)]


def median_us(fn, iters=50):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(200000)  # the host enqueues the GEMMs ahead of the GPU
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1000)
    times.sort()
    return times[len(times) // 2]


def case(name, m, k, n, parts):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.zeros(m, n, device="cuda", dtype=torch.bfloat16)
    rows = m // parts

    def whole():
        torch.matmul(a, b, out=c)

    def one_stream():
        for p in range(parts):
            s = slice(p * rows, (p + 1) * rows)
            c[s].addmm_(a[s], b)

    def stream_per_part():
        main = torch.cuda.current_stream()
        previous = main
        for p in range(parts):
            stream = streams[p % len(streams)]
            stream.wait_stream(previous)
            with torch.cuda.stream(stream):
                s = slice(p * rows, (p + 1) * rows)
                c[s].addmm_(a[s], b)
            previous = stream
        main.wait_stream(previous)

    def unordered():
        # Each part on the next stream with no order between them, so one
        # part's last wave may share the GPU with the next part's first.
        main = torch.cuda.current_stream()
        for stream in streams:
            stream.wait_stream(main)
        for p in range(parts):
            with torch.cuda.stream(streams[p % len(streams)]):
                s = slice(p * rows, (p + 1) * rows)
                c[s].addmm_(a[s], b)
        for stream in streams:
            main.wait_stream(stream)

    runs = {
        "whole": [],
        f"{parts} parts, one stream": [],
        f"{parts} parts, a stream each": [],
        f"{parts} parts, unordered": [],
    }
    for _ in range(5):
        for label, fn in zip(runs, (whole, one_stream, stream_per_part, unordered)):
            runs[label].append(median_us(fn))
    print(f"{name}: M={m} K={k} N={n}, {parts} parts of {rows} rows")
    whole_us = sorted(runs["whole"])[2]
    for label, values in runs.items():
        mid = sorted(values)[2]
        spread = " ".join(f"{value:.0f}" for value in values)
        print(f"  {label:28s} median of 5: {mid:7.1f} us  ({whole_us / mid:.3f} of whole)  runs: {spread}")


# GEMM+RS 8192x16384x8192 at D = 4: each rank's K slice is 4096; the chain's
# 4 blocks of 2048 rows go in 2 parts.
case("rs 8192x16384x8192, D=4", 8192, 4096, 8192, 8)
case("rs 8192x16384x8192, D=4, whole steps", 8192, 4096, 8192, 4)
# AG+GEMM 16384x8192x2048 at D = 4: 4 shards of 4096 rows in 2 parts.
case("ag 16384x8192x2048, D=4", 16384, 8192, 2048, 8)
