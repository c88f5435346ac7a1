#!/usr/bin/env bash
# Builds test/RustConsumer, a crate that depends on `hir` exactly as the
# README's "From Rust" section says (a path dependency, and its
# .cargo/config.toml environment), from a copy outside this repository so
# that none of HIR's own cargo configuration applies, and runs it on an
# example. It shares HIR's target directory, so it compiles only itself.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r test/RustConsumer/. "$work/"
sed -i "s|HIR_PATH|$root|" "$work/Cargo.toml"
cp Cargo.lock "$work/Cargo.lock"
out=$(cd "$work" && CARGO_TARGET_DIR="$root/target" cargo run --quiet --release -- "$root/examples/allgather_p2p.mlir")
echo "$out"
grep -q "comm.send, 0 comm.allgather" <<<"$out" || { echo "rust-consumer: unexpected output" >&2; exit 1; }
echo "rust-consumer: ok"
