# Can cuBLASLt run one GEMM that waits, chunk by chunk of its output, for
# counters in device memory (the "atomic GEMM" Transformer Engine used to
# overlap an allgather with an unsplit GEMM on CUDA 12)? This sets the
# ATOMIC_SYNC matmul attributes on a bf16 GEMM's descriptor with the
# cuBLASLt that PyTorch's wheels bring, and prints what cuBLASLt answers.
# Run on the device machine:
#   /opt/torch/.venv/bin/python tools/cublaslt-atomic-sync.py
import ctypes
import glob
import site
from ctypes import byref, c_int32, c_void_p

LIB = glob.glob(site.getsitepackages()[0] + "/nvidia/cu*/lib/libcublasLt.so.*")[0]
lt = ctypes.CDLL(LIB)
print(f"{LIB}: cublasLtGetVersion() = {lt.cublasLtGetVersion()}")
COMPUTE_32F, R32F = 68, 0
# cublasLtMatmulDescAttributes_t values of the CUDA 12 headers.
ATTRIBUTES = {
    "ATOMIC_SYNC_NUM_CHUNKS_D_ROWS": 27,
    "ATOMIC_SYNC_NUM_CHUNKS_D_COLS": 28,
    "ATOMIC_SYNC_IN_COUNTERS_POINTER": 29,
    "ATOMIC_SYNC_OUT_COUNTERS_POINTER": 30,
}
desc = c_void_p()
assert lt.cublasLtMatmulDescCreate(byref(desc), COMPUTE_32F, R32F) == 0
for name, attribute in ATTRIBUTES.items():
    if "POINTER" in name:
        value, size = c_void_p(0), 8
    else:
        value, size = c_int32(4), 4
    status = lt.cublasLtMatmulDescSetAttribute(desc, attribute, byref(value), size)
    meaning = {0: "accepted", 7: "CUBLAS_STATUS_INVALID_VALUE"}.get(status, "")
    print(f"CUBLASLT_MATMUL_DESC_{name} ({attribute}): status {status} {meaning}")
