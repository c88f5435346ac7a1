#!/usr/bin/env bash
# Source this before running the cuda backend on a machine whose CUDA libraries
# come from Python wheels (PyTorch's nvidia-* packages) rather than a CUDA
# install. cudarc opens libraries by plain names (libnccl.so, libnvrtc.so,
# libcublasLt.so, then .so.<major>...), never NCCL's soname libnccl.so.2, so
# this links each library found under site-packages or /usr/local/cuda under
# the name cudarc tries, in a private folder put first on LD_LIBRARY_PATH.
# Each library's own folder goes on LD_LIBRARY_PATH too: libcudnn.so.9 opens
# its sub-libraries (libcudnn_graph.so.9, libcudnn_engines_*.so.9,
# libcudnn_heuristic.so.9, ...) by name from there. Without cuDNN, attention
# runs HIR's own kernels.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0) on shared machines.
export NCCL_NVLS_ENABLE=0
hir_libs=${HIR_CUDA_LIBS:-/tmp/hir-cuda-libs}
mkdir -p "$hir_libs"
hir_roots=$(python3 -c 'import site, sys; print(" ".join(site.getsitepackages() + [sys.prefix]))' 2>/dev/null)
for hir_lib in nccl:libnccl.so.2 nvrtc:libnvrtc.so.13 cublasLt:libcublasLt.so.13 cudnn:libcudnn.so.9; do
  hir_name=${hir_lib%%:*}
  hir_found=$(find $hir_roots /usr/local/cuda/lib64 /usr/local/cuda/targets -name "${hir_lib#*:}" 2>/dev/null | head -n 1)
  if [ -n "$hir_found" ]; then
    ln -sf "$hir_found" "$hir_libs/lib$hir_name.so"
    export LD_LIBRARY_PATH="$(dirname "$hir_found")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "cuda-env: lib$hir_name.so -> $hir_found"
  else
    echo "cuda-env: ${hir_lib#*:} not found" >&2
  fi
done
export LD_LIBRARY_PATH="$hir_libs:$LD_LIBRARY_PATH"
