#!/usr/bin/env bash
# Installs the Debian packages mabd needs, if any are missing. Needs root (or sudo).
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libeigen3-dev libsuitesparse-dev libopenblas0-serial nlohmann-json3-dev libcli11-dev libtinygltf-dev libbullet-dev
  libtinyxml2-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  chromium
  clang libclang-rt-dev
  python3-dev pybind11-dev python3-numpy python3-pytest
  openmpi-bin python3-mpi4py
)
# openmpi-bin and python3-mpi4py run the batch sharded over MPI ranks (mabd.mpi; its test
# starts 2 ranks on this machine).
# python3-dev, pybind11-dev, python3-numpy and python3-pytest build and test the Python package
# (run with /usr/bin/python3, the interpreter that sees them).
# clang and its compiler runtime (libclang_rt.fuzzer, .asan, .ubsan; only recommended by clang,
# so named here) build the fuzz targets of tests/fuzz (`make fuzz`).
# Node.js and npm build the web viewer bundle of `mabd view` (Chromium runs its browser test).
# A Node.js that brings its own npm (e.g. NodeSource's nodejs) is used as it is: Debian's npm
# package would conflict with it.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "bootstrap: installing missing Debian packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "bootstrap: need root or sudo to install: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
