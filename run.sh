#!/usr/bin/env bash
# HIR's main job: set up, build, then for every example print the host program
# hir-lower makes of it; then run AG+matmul end to end on the default backend
# (cpu: one thread per rank) as a collective pipeline and as NCCL and CUDA-IPC
# rings, each checked against a reference evaluation of the fusion program and
# timed.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
cargo build --release --locked
# convert-shard-to-fusion imports the example written with upstream shard and
# leaves the fusion ones as they are.
for example in examples/*.mlir; do
  echo "== hir-lower $example"
  target/release/hir-opt --convert-shard-to-fusion --hir-lower "$example"
done
echo "== hir-run: AG+matmul, collective pipeline (allgather per stream iteration)"
target/release/hir-run -n 4 --check --iters 3 examples/ag_matmul.mlir
for p2p in nccl cuda; do
  echo "== hir-run: AG+matmul as a P2P ring over $p2p"
  target/release/hir-run -n 4 --p2p "$p2p" --check --iters 3 examples/ag_matmul_p2p.mlir
done
