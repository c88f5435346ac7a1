#!/usr/bin/env bash
# Builds the `hir` Python package (python/, a PyO3 extension, abi3 wheel) with
# maturin in a virtual environment under target/, installs it there with
# numpy, pytest and torch (from PyPI), then runs its tests on the cpu backend
# and examples/python/tp_mlp.py. The wheel is left in target/wheels/.
#   scripts/python.sh          build, install, test
#   scripts/python.sh build    build and install only
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/python-venv
if [[ ! -x $venv/bin/python ]]; then
  python3 -m venv "$venv"
fi
# `python -m pip`, not bin/pip: a venv copied from another checkout keeps
# that checkout's path in bin/pip's first line, and would install there.
pip=("$venv/bin/python" -m pip --quiet --disable-pip-version-check)
# torch is PyPI's wheel (its CUDA build, which runs on the cpu too: the
# CPU-only index is not reachable from CI); a first install takes about
# 3 minutes and 5 GiB, later runs find it installed.
"${pip[@]}" install "maturin>=1.9,<2" numpy pytest "torch>=2.4,<3"
rm -f target/wheels/hir-*.whl
# --auditwheel skip: the wheel links the system libzstd (a build dependency),
# which it does not bundle.
"$venv/bin/maturin" build --release --locked --auditwheel skip --manifest-path python/Cargo.toml --out target/wheels
"${pip[@]}" install --force-reinstall --no-deps target/wheels/hir-*.whl
if [[ ${1:-} == build ]]; then
  exit 0
fi
# From outside the source tree, so that the installed wheel is what is tested.
# HIR_TEST_REQUIRE_TORCH: the torch tests fail here, rather than skip, if
# torch does not import.
(cd python/tests && HIR_TEST_REQUIRE_TORCH=1 "../../$venv/bin/python" -m pytest -q -p no:cacheprovider .)
"$venv/bin/python" examples/python/tp_mlp.py --ranks 2
"$venv/bin/python" examples/python/tp_mlp.py --ranks 4 --streams 2
