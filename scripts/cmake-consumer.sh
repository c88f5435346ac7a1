#!/usr/bin/env bash
# Tests HIR's installed CMake package from outside HIR's build: installs the
# C++ half that `cargo build --release` built (dialects/build.rs runs CMake on
# the root CMakeLists.txt) into target/cmake-consumer/prefix, then configures,
# builds and runs test/CMakeConsumer against that prefix with nothing but
# -DHIR_DIR and -DMLIR_DIR, and checks what the programs print: one linking
# the dialects (HIR::hir_dialects), one the runtime (HIR::hir_runtime).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$PWD/target/cmake-consumer

# The cmake crate configures and builds in <OUT_DIR>/build; cargo names the
# build script's OUT_DIR in its JSON messages (a no-op build when fresh).
out_dir=$(cargo build --release --locked --message-format=json | python3 -c '
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") == "build-script-executed" and "#hir-dialects@" in message["package_id"]:
        print(message["out_dir"])')
if [[ -z $out_dir ]]; then
  echo "cmake-consumer: cargo reported no build of hir-dialects" >&2
  exit 1
fi

rm -rf "$work"
cmake --install "$out_dir/build" --prefix "$work/prefix"
cmake -S test/CMakeConsumer -B "$work/build" -G Ninja \
  -DHIR_DIR="$work/prefix/lib/cmake/hir" -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir
cmake --build "$work/build"
output=$("$work/build/hir-consumer")
echo "$output"
grep -qxF 'verified: 2 fusion, 2 host, 2 comm ops; comm.allreduce gives !comm.request: yes' <<<"$output"
grep -qF "'comm.allgather' op team size 2 times input extent 1 along axis 0 is not the output extent 3" <<<"$output"
# libhir_runtime.so, installed from cargo's build, through HIR::hir_runtime.
output=$("$work/build/hir-runtime-consumer")
echo "$output"
grep -qxF 'rank 0 of 1: exp(0..3) = 1.0000 2.7183 7.3891 20.0855' <<<"$output"
echo "cmake-consumer: ok"
