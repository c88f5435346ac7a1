#!/usr/bin/env bash
# Builds the `hir` Python package (python/, a PyO3 extension, abi3 wheel) with
# maturin in a virtual environment under target/, installs it there with
# numpy and pytest (from PyPI), then runs its tests on the cpu backend and
# examples/python/tp_mlp.py. The wheel is left in target/wheels/.
#   scripts/python.sh          build, install, test
#   scripts/python.sh build    build and install only
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/python-venv
if [[ ! -x $venv/bin/python ]]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --disable-pip-version-check "maturin>=1.9,<2" numpy pytest
rm -f target/wheels/hir-*.whl
# --auditwheel skip: the wheel links the system libzstd (a build dependency),
# which it does not bundle.
"$venv/bin/maturin" build --release --locked --auditwheel skip --manifest-path python/Cargo.toml --out target/wheels
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps target/wheels/hir-*.whl
if [[ ${1:-} == build ]]; then
  exit 0
fi
# From outside the source tree, so that the installed wheel is what is tested.
(cd python/tests && "../../$venv/bin/python" -m pytest -q -p no:cacheprovider .)
"$venv/bin/python" examples/python/tp_mlp.py --ranks 2
"$venv/bin/python" examples/python/tp_mlp.py --ranks 4 --streams 2
