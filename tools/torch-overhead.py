# PyTorch eager's host cost per iteration of the loop `hir-bench overhead`
# times: out[i] = a[i] + b[i] over S slices of [S, E] f32, slice i on pool
# stream i mod P: a loop forks slice i's stream from the current stream, a
# second adds slice i on it and joins it back (one wait_stream each way per
# slice, as HIR's host program does). Timed as hir-bench overhead times: wall time of a call
# until its work is done (torch.cuda.synchronize), median of K calls after K
# untimed ones; the output is checked against a + b bit for bit.
# Run on the device machine:
#   /opt/torch/.venv/bin/python tools/torch-overhead.py [S,...] [E] [P] [K]
import sys
import time

import torch


def call(a, b, out, pool, main):
    slices = a.shape[0]
    for i in range(slices):
        pool[i % len(pool)].wait_stream(main)
    for i in range(slices):
        stream = pool[i % len(pool)]
        with torch.cuda.stream(stream):
            torch.add(a[i], b[i], out=out[i])
        main.wait_stream(stream)


def main():
    slices = [int(s) for s in (sys.argv[1] if len(sys.argv) > 1 else "256,1024,4096").split(",")]
    elements = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    streams = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    iters = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    torch.manual_seed(0)
    pool = [torch.cuda.Stream() for _ in range(streams)]
    main_stream = torch.cuda.current_stream()
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}: "
          f"out[i] = a[i] + b[i], {elements} f32 per slice, {streams} pool streams, "
          f"{iters} timed calls (median)")
    print("| S | torch eager µs/iter |")
    print("|---|---|")
    for s in slices:
        a = torch.rand(s, elements, device="cuda") * 2 - 1
        b = torch.rand(s, elements, device="cuda") * 2 - 1
        out = torch.full_like(a, float("nan"))
        call(a, b, out, pool, main_stream)
        torch.cuda.synchronize()
        assert torch.equal(out, a + b), "torch's output differs from a + b"
        for _ in range(iters):
            call(a, b, out, pool, main_stream)
        torch.cuda.synchronize()
        times = []
        for _ in range(iters):
            start = time.perf_counter()
            call(a, b, out, pool, main_stream)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - start) * 1e6)
        times.sort()
        median = times[len(times) // 2] if iters % 2 else (times[iters // 2 - 1] + times[iters // 2]) / 2
        print(f"| {s} | {median / s:.3f} |")


if __name__ == "__main__":
    main()
