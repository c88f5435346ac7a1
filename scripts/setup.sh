#!/usr/bin/env bash
# Installs what HIR builds and tests with on Debian 12, as root (or with sudo):
# LLVM/MLIR 22 (libraries, mlir-tblgen, mlir-opt, lit, FileCheck), libclang
# for mlir-sys' bindings, CMake and Ninja, and the static libstdc++, zlib and
# zstd that the Python extension links (python/build.rs). Does nothing when
# all is there.
set -euo pipefail

packages=(
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools libpolly-22-dev libclang-22-dev
  libzstd-dev libz3-dev libxml2-dev zlib1g-dev libstdc++-12-dev cmake ninja-build
)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done
if ((${#missing[@]})); then
  sudo=""
  [[ "$(id -u)" -eq 0 ]] || sudo=sudo
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
