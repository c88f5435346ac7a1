#!/usr/bin/env bash
# The `hir` wheel is tagged manylinux_2_28 but built on Debian 12 (glibc 2.36);
# auditwheel only reads its symbol versions. This runs it on an older glibc for
# real: a Debian 11 root (glibc 2.31, Python 3.9) made by debootstrap and kept
# in target/bullseye-root, where pip installs the wheel and a check compiles
# programs on the cpu backend and compares them with numpy. Needs root; the
# Debian mirror and PyPI only to build the root, once. After scripts/python.sh:
#   scripts/older-glibc.sh [WHEEL]
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
die() { echo "older-glibc: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap, mount and chroot need it)"

wheels=("${1:-}")
[[ -n ${wheels[0]} ]] || wheels=(target/wheels/hir-*.whl)
[[ ${#wheels[@]} -eq 1 && -f ${wheels[0]} ]] ||
  die "want one wheel, found: ${wheels[*]} (build it with scripts/python.sh build)"
wheel=${wheels[0]}

root=$PWD/target/bullseye-root
mirror=${HIR_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# Depends only (debootstrap skips Recommends): pip without a compiler. Not
# python3-numpy: bullseye's 1.19 has no ndarray.__dlpack__ (numpy 1.22+),
# which hir reads arrays through; numpy comes from PyPI, as a user's would.
packages=python3,python3-pip
numpy='numpy>=1.22,<2.1'
# The stamp is written once numpy is in, so a root that a failed run left
# half-made is rebuilt rather than used, and so is one with other packages.
if [[ $(cat "$root/.hir-packages" 2>/dev/null) != "$packages $numpy" ]]; then
  if ! command -v debootstrap >/dev/null; then
    echo "older-glibc: installing debootstrap"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  fi
  # rm -rf must not walk into a /proc or /dev that a killed run left mounted.
  if grep -q " $root/" /proc/self/mounts; then
    die "something is still mounted under $root: umount -R it first"
  fi
  rm -rf "$root"
  echo "older-glibc: debootstrap bullseye into $root ($packages)"
  t=$SECONDS
  debootstrap --variant=minbase --include="$packages" bullseye "$root" "$mirror" >"$root.log" 2>&1 ||
    { tail -20 "$root.log" >&2; die "debootstrap failed: $root.log"; }
  # Package lists and downloaded .debs are not needed again.
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  # By the host's pip, which knows this machine's index and certificates;
  # installed offline below.
  python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.9 \
    --implementation cp --platform manylinux2014_x86_64 -d "$root/tmp/numpy" "$numpy"
  built=1
fi

mounted=()
unmount() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -R "${mounted[i]}" 2>/dev/null || umount -Rl "${mounted[i]}" ||
      echo "older-glibc: could not unmount ${mounted[i]}" >&2
  done
}
trap unmount EXIT
# bash runs the EXIT trap on `exit`, not when killed: make signals exit.
trap 'exit 130' INT TERM HUP
# A fresh proc, and the host's /dev (with /dev/shm and /dev/pts) as a slave,
# so that unmounting the copy can never unmount the host's.
mount -t proc proc "$root/proc" || die "cannot mount proc in $root (need CAP_SYS_ADMIN)"
mounted+=("$root/proc")
mount --rbind /dev "$root/dev" || die "cannot bind /dev into $root"
mounted+=("$root/dev")
mount --make-rslave "$root/dev"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
in_root /bin/true || die "cannot chroot into $root (need CAP_SYS_CHROOT)"
if [[ -n ${built:-} ]]; then
  in_root python3 -m pip install --quiet --disable-pip-version-check --no-index \
    --find-links /tmp/numpy "$numpy"
  rm -rf "$root/tmp/numpy"
  echo "$packages $numpy" >"$root/.hir-packages"
  echo "older-glibc: root built in $((SECONDS - t)) s"
fi

# A fresh directory each run: the wheel keeps its name (pip reads its tags
# from it) and is installed with bullseye's own pip, offline.
work=$root/tmp/hir-check
rm -rf "$work"
mkdir -p "$work"
cp "$wheel" examples/binary.mlir examples/matmul.mlir examples/python/tp_mlp.py "$work/"
in_root python3 -m pip install --quiet --disable-pip-version-check --no-deps --no-index \
  --target /tmp/hir-check/site "/tmp/hir-check/$(basename "$wheel")"
cat >"$work/check.py" <<'EOF'
import os, sys
import numpy as np

glibc = os.confstr("CS_GNU_LIBC_VERSION")  # answered by the libc this process runs on
print(f"chroot: {glibc}, Python {sys.version.split()[0]}, numpy {np.__version__}")
if tuple(map(int, glibc.split()[1].split(".")[:2])) >= (2, 36):
    sys.exit(f"older-glibc: {glibc} is not older than the build machine's 2.36")
import hir

print(f"hir {hir.__version__} from {os.path.dirname(hir.__file__)}")
rng = np.random.default_rng(0)
a, b = rng.standard_normal((4, 8), dtype=np.float32), rng.standard_normal((4, 8), dtype=np.float32)
x, w = rng.standard_normal((8, 16), dtype=np.float32), rng.standard_normal((16, 32), dtype=np.float32)
# The references are computed by numpy in float64, not by HIR.
cases = [
    ("binary.mlir", (a, b), a.astype(np.float64) + b),
    ("matmul.mlir", (x, w), x.astype(np.float64) @ w.astype(np.float64)),
]
failed = False
for name, args, expected in cases:
    got = hir.compile(f"/tmp/hir-check/{name}")(*args)
    error = float(np.abs(got - expected).max())
    ok = got.shape == expected.shape and error <= 1e-4
    failed |= not ok
    print(f"{name}: {got.shape} {got.dtype}, max abs error vs numpy {error:.2e}: {'ok' if ok else 'MISMATCH'}")
sys.exit(1 if failed else 0)
EOF
in_root env PYTHONPATH=/tmp/hir-check/site python3 /tmp/hir-check/check.py
# Two ranks as threads: an allgather and a reduce-scatter around the GEMMs.
in_root env PYTHONPATH=/tmp/hir-check/site python3 /tmp/hir-check/tp_mlp.py --ranks 2 --streams 2
echo "older-glibc: passed in $((SECONDS - start)) s"
