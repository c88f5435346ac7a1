#!/usr/bin/env bash
# Runs every HIR test: formatting and lints, the Rust unit tests, the installed
# CMake package (an external C program built against it), an external Rust
# crate depending on `hir` as the README says, the Python package (built as
# a manylinux_2_28 wheel with maturin, its tag checked by auditwheel, its
# pytest tests and the tp_mlp example on the cpu backend, then the wheel run
# on glibc 2.31 in a Debian 11 chroot), a bounded mutation
# fuzz of hir-opt and hir-run (no panic, crash or hang; under two minutes) and
# of the Python API (one minute), then the lit suite (which drives hir-opt,
# the examples and the mlir-opt plugin). The last line is lit's count as
# `N passed, M failed`; the exit code is non-zero if anything failed.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
cargo fmt --all -- --check
cargo build --release --locked
cargo clippy --release --locked --all-targets -- -D warnings
cargo clippy --release --locked -p hir-python -- -D warnings
cargo test --release --locked
scripts/cmake-consumer.sh
scripts/rust-consumer.sh
scripts/python.sh
scripts/older-glibc.sh
python3 scripts/fuzz.py --mutants 2500 --seconds 100
# The Python API's fuzz, then its self-check: a wrong meaning must be found.
target/python-venv/bin/python scripts/fuzz_python.py --seconds 60
if target/python-venv/bin/python scripts/fuzz_python.py --seed 1 --calls 100 --wrong >/dev/null; then
  echo "fuzz_python.py --wrong found nothing: its checker compares nothing" >&2
  exit 1
fi

log=$(mktemp)
status=0
/usr/lib/llvm-22/bin/lit -v test | tee "$log" || status=$?
passed=$(grep -cE '^(PASS|XFAIL): ' "$log" || true)
failed=$(grep -cE '^(FAIL|XPASS|UNRESOLVED|TIMEOUT): ' "$log" || true)
rm -f "$log"
echo "lit: $passed passed, $failed failed"
if ((status != 0 || failed != 0 || passed == 0)); then
  exit 1
fi
