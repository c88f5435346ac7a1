#!/usr/bin/env bash
# HIR's main job: set up, build, then parse, verify and check the sharding of
# every example program with hir-opt, printing each.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
cargo build --release --locked
for example in examples/*.mlir; do
  echo "== $example"
  target/release/hir-opt --fusion-verify-sharding "$example"
done
