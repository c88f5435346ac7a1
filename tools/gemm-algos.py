# Does cuBLASLt's first heuristic answer give the fastest GEMM at the shapes
# HIR's ring and chain pipelines run (the whole GEMM and its row parts)?
# For each shape this asks the heuristic for up to 16 algorithms, as HIR's
# runtime asks for one (bf16 in and out, f32 compute, 32 MiB workspace, the
# operands as the runtime lays them out: D^T = B^T A^T column-major), and
# times every algorithm over all the parts back to back on one stream
# (median of 10 after warm-up, the host ahead of the GPU; the median of 5
# rounds over all the algorithms in turn). The rows say what the first
# answer costs against the best one; whole and parts run one after the
# other, not interleaved, so compare algorithms within a row only.
# Run on the device machine:
#   /opt/torch/.venv/bin/python tools/gemm-algos.py
import ctypes
import glob
import site
from ctypes import byref, c_float, c_int32, c_int64, c_size_t, c_uint64, c_void_p

import torch

LIB = glob.glob(site.getsitepackages()[0] + "/nvidia/cu*/lib/libcublasLt.so.*")[0]
lt = ctypes.CDLL(LIB)
BF16, R32F, COMPUTE_32F = 14, 0, 68
TRANSA, TRANSB, PREF_WORKSPACE = 3, 4, 1
WORKSPACE = 32 << 20
ROUNDS = 5


class Heuristic(ctypes.Structure):
    _fields_ = [
        ("algo", c_uint64 * 8),
        ("workspace", c_size_t),
        ("state", c_int32),
        ("waves", c_float),
        ("reserved", c_int32 * 4),
    ]


def check(status, what):
    if status != 0:
        raise RuntimeError(f"{what}: cuBLASLt status {status}")


torch.cuda.set_device(0)
handle = c_void_p()
check(lt.cublasLtCreate(byref(handle)), "create")
workspace = torch.empty(WORKSPACE, dtype=torch.uint8, device="cuda")


def candidates(m, k, n):
    """Descriptors, layouts and up to 16 algorithms for row-major [m,k] x [k,n]."""
    desc = c_void_p()
    check(lt.cublasLtMatmulDescCreate(byref(desc), COMPUTE_32F, R32F), "desc")
    no = c_int32(0)
    check(lt.cublasLtMatmulDescSetAttribute(desc, TRANSA, byref(no), 4), "transa")
    check(lt.cublasLtMatmulDescSetAttribute(desc, TRANSB, byref(no), 4), "transb")
    layouts = []
    for rows, cols, ld in ((n, k, n), (k, m, k), (n, m, n)):
        layout = c_void_p()
        check(lt.cublasLtMatrixLayoutCreate(byref(layout), BF16, c_uint64(rows), c_uint64(cols), c_int64(ld)), "layout")
        layouts.append(layout)
    pref = c_void_p()
    check(lt.cublasLtMatmulPreferenceCreate(byref(pref)), "preference")
    size = c_uint64(WORKSPACE)
    check(lt.cublasLtMatmulPreferenceSetAttribute(pref, PREF_WORKSPACE, byref(size), 8), "workspace")
    found = (Heuristic * 16)()
    count = c_int32(0)
    check(lt.cublasLtMatmulAlgoGetHeuristic(handle, desc, layouts[0], layouts[1], layouts[2], layouts[2], pref, 16, found, byref(count)), "heuristic")
    return desc, layouts, [found[i] for i in range(count.value)]


def matmul(plan, algo, a, b, c, beta):
    desc, layouts, _ = plan
    one, beta = c_float(1.0), c_float(beta)
    stream = c_void_p(torch.cuda.current_stream().cuda_stream)
    check(lt.cublasLtMatmul(handle, desc, byref(one), c_void_p(b.data_ptr()), layouts[0], c_void_p(a.data_ptr()), layouts[1], byref(beta),
                            c_void_p(c.data_ptr()), layouts[2], c_void_p(c.data_ptr()), layouts[2], byref(algo.algo),
                            c_void_p(workspace.data_ptr()), c_size_t(WORKSPACE), stream), "matmul")


def median_us(fn, iters=10):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(200000)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1000)
    return sorted(times)[len(times) // 2]


def case(name, m, k, n, parts, beta):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    c = torch.zeros(m, n, device="cuda", dtype=torch.bfloat16)
    rows = m // parts
    print(f"{name}: M={m} K={k} N={n}", flush=True)
    for label, count in (("whole", 1), (f"{parts} parts of {rows} rows", parts)):
        r = m // count
        plan = candidates(r, k, n)

        def run(algo):
            for p in range(count):
                s = slice(p * r, (p + 1) * r)
                matmul(plan, algo, a[s], b, c[s], beta)

        # Rounds over all the algorithms in turn, as the clocks drift.
        rounds = [[median_us(lambda: run(algo)) for algo in plan[2]] for _ in range(ROUNDS)]
        times = [sorted(column)[ROUNDS // 2] for column in zip(*rounds)]
        best = min(range(len(times)), key=times.__getitem__)
        listed = " ".join(f"{t:.0f}" for t in times)
        print(f"  {label:24s} {len(times)} algos; first {times[0]:7.1f} us, best #{best} {times[best]:7.1f} us ({times[0] / times[best]:.3f}x); all: {listed}", flush=True)
    del a, b, c
    torch.cuda.empty_cache()


# AG+GEMM 16384x8192x2048, D = 4: 4 shards of 4096 rows in 2 parts.
case("ag 16384x8192x2048, D=4", 16384, 8192, 2048, 8, 0.0)
# GEMM+RS 8192x16384x8192, D = 4: K slice 4096, 4 blocks of 2048 rows in 2 parts, accumulating.
case("rs 8192x16384x8192, D=4", 8192, 4096, 8192, 8, 1.0)
# GEMM+RS 16384x8192x2048, D = 4: K slice 2048, 4 blocks of 4096 rows in 2 parts.
case("rs 16384x8192x2048, D=4", 16384, 2048, 2048, 8, 1.0)
# AG+GEMM 8192x16384x8192 and 32768x16384x8192, D = 4, in 2 parts a step.
case("ag 8192x16384x8192, D=4", 8192, 16384, 8192, 8, 0.0)
case("ag 32768x16384x8192, D=4", 32768, 16384, 8192, 8, 0.0)
