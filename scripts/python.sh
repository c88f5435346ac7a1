#!/usr/bin/env bash
# Builds the `hir` Python package (python/, a PyO3 extension, abi3 wheel for
# manylinux_2_28) with maturin in a virtual environment under target/, checks
# its platform tag with auditwheel, installs it there with numpy, pytest and
# torch (from PyPI), then runs its tests on the cpu backend and
# examples/python/tp_mlp.py. The wheel is left in target/wheels/.
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
"${pip[@]}" install "maturin>=1.9,<2" numpy pytest "torch>=2.4,<3" "auditwheel>=6.1,<7"
rm -f target/wheels/hir-*.whl
# manylinux_2_28 (pyproject.toml): python/build.rs links libstdc++, zlib and
# zstd statically and sends glibc symbols newer than 2.28 to old versions;
# --auditwheel check fails the build if the extension still needs more.
"$venv/bin/maturin" build --release --locked --auditwheel check --manifest-path python/Cargo.toml --out target/wheels
wheel=$(echo target/wheels/hir-*.whl)
# A second opinion, pypa's auditwheel: the tag the .so's symbol versions and
# libraries allow must be manylinux_2_28 or older, with nothing to bundle.
"$venv/bin/auditwheel" show "$wheel"
"$venv/bin/auditwheel" show --json "$wheel" | "$venv/bin/python" -c '
import json, re, sys
audit = json.load(sys.stdin)
wheel, tag, libs = audit["wheel"], audit["overall_tag"], audit["external_libs"]
tags = [tag] + wheel.removesuffix(".whl").split("-")[-1].split(".")
glibc = [re.fullmatch(r"manylinux_2_(\d+)_x86_64", t) for t in tags]
if libs or not all(g and int(g[1]) <= 28 for g in glibc):
    sys.exit(f"auditwheel: {wheel} allows {tag}, external libraries {libs}: want manylinux_2_28 or older")
print(f"auditwheel: {wheel} allows {tag}")
'
"${pip[@]}" install --force-reinstall --no-deps "$wheel"
if [[ ${1:-} == build ]]; then
  exit 0
fi
# From outside the source tree, so that the installed wheel is what is tested.
# HIR_TEST_REQUIRE_TORCH: the torch tests fail here, rather than skip, if
# torch does not import.
(cd python/tests && HIR_TEST_REQUIRE_TORCH=1 "../../$venv/bin/python" -m pytest -q -p no:cacheprovider .)
"$venv/bin/python" examples/python/tp_mlp.py --ranks 2
"$venv/bin/python" examples/python/tp_mlp.py --ranks 4 --streams 2
