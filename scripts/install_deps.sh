#!/usr/bin/env bash
# Installs the Debian packages the build and the test suite need, when missing.
# Idempotent and quiet; does nothing for packages already present. Needs root (or
# sudo) only when something is missing.
set -euo pipefail

# python3-onnx and dataset-fashion-mnist are for the ONNX converter and its accuracy
# tests; libopenblas0-pthread gives numpy an optimized BLAS for the converter's float
# evaluator (Debian's reference BLAS is some twenty times slower). python3-torch is
# needed only to retrain the reference models (tests/convert/train_models.py), never
# by the suite.
want=(cmake g++ gcc make libgtest-dev python3 python3-numpy python3-pytest python3-onnx
      dataset-fashion-mnist libopenblas0-pthread valgrind clang clang-format
      libclang-rt-14-dev gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
      g++-mingw-w64-x86-64-posix wine wine64 golang-go
      gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user)
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "install_deps: installing ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 || { echo "install_deps: need root to install ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# libclang-rt-14-dev is only for the fuzzers: its absence must not stop the suite.
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]/libclang-rt-14-dev}" >/dev/null
