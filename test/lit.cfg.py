# lit configuration for HIR: hir-opt and the dialect plugin from the cargo
# build, FileCheck and stock mlir-opt from LLVM 22.
import os
import re
import shutil

import lit.formats
import lit.llvm

lit.llvm.initialize(lit_config, config)
from lit.llvm import llvm_config  # noqa: E402 (set by initialize)

config.name = "HIR"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.excludes = ["lit.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)

repo_root = os.path.dirname(config.test_source_root)
hir_bin_dir = os.environ.get("HIR_BIN_DIR", os.path.join(repo_root, "target", "release"))
llvm_bin_dir = os.environ.get("LLVM_BIN_DIR", "/usr/lib/llvm-22/bin")

llvm_config.with_environment("PATH", hir_bin_dir, append_path=False)
llvm_config.with_environment("PATH", llvm_bin_dir, append_path=True)
config.llvm_tools_dir = llvm_bin_dir
llvm_config.use_default_substitutions()

config.substitutions.append(("%hir_plugin", os.path.join(hir_bin_dir, "libHIRDialects.so")))
config.substitutions.append(("%mlir_opt", os.path.join(llvm_bin_dir, "mlir-opt")))
config.substitutions.append(("%examples", os.path.join(repo_root, "examples")))

# Native programs (test/Runtime): the pipeline from host IR to the LLVM dialect,
# read from the Rust constant that hir-run runs (LLVM_PIPELINE), so that the
# tests follow it; libhir_runtime.so from the cargo build; the system's C
# compiler driver as linker (lit's PATH has no /usr/bin); MLIR's runner utils.
with open(os.path.join(repo_root, "passes", "src", "conversion", "mod.rs")) as f:
    match = re.search(r'pub const LLVM_PIPELINE: &str = "((?:[^"\\]|\\\n)*)";', f.read())
if not match:
    lit_config.fatal("passes/src/conversion/mod.rs: no LLVM_PIPELINE constant")
config.substitutions.append(
    ("%hir_llvm_pipeline", re.sub(r"\\\n\s*", "", match.group(1))))
config.substitutions.append(("%hir_lib_dir", hir_bin_dir))
# By path: /usr/bin/llc may be another LLVM's (Debian's default, 14), whose
# IR reader rejects LLVM 22's.
config.substitutions.append(("%llc", os.path.join(llvm_bin_dir, "llc")))
config.substitutions.append(("%hir_runtime", os.path.join(hir_bin_dir, "libhir_runtime.so")))
# -B: where the driver finds ld, which is not on lit's PATH either.
cc = shutil.which("cc") or "/usr/bin/cc"
ld = shutil.which("ld") or "/usr/bin/ld"
config.substitutions.append(("%cc", f"{cc} -B{os.path.dirname(ld)}/"))
mlir_lib_dir = os.path.join(os.path.dirname(llvm_bin_dir), "lib")
config.substitutions.append(("%mlir_lib_dir", mlir_lib_dir))
config.substitutions.append(
    ("%mlir_runner_utils", os.path.join(mlir_lib_dir, "libmlir_runner_utils.so")))

# A machine with the CUDA driver: tests of what hir-run says without one skip.
if any(os.path.exists(os.path.join(d, "libcuda.so.1"))
       for d in ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/nvidia/lib64"]
       + os.environ.get("LD_LIBRARY_PATH", "").split(":") if d):
    config.available_features.add("cuda-driver")

# hir-run's compile cache (hir::cache) stays off, so that tests see what the
# lowering does and leave the user's cache alone; a test of the cache turns
# it on in a directory of its own (HIR_CACHE=1 HIR_CACHE_DIR=%t/...).
config.environment["HIR_CACHE"] = "0"
