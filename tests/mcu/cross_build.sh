#!/usr/bin/env sh
# Cross-compiles libcvml for a Cortex-M55 (cmake/toolchain/cortex-m55.cmake) with
# warnings as errors, so that a change which breaks the microcontroller build fails the
# host's test suite too: typically a printf format that is right on x86 only (int32_t is
# long on arm-none-eabi: use PRId32), or a POSIX call the bare-metal profile lacks
# (docs/embedded.md). Incremental: a second run recompiles only what changed. Running
# the images under qemu is scripts/test_mcu.sh.
#   cross_build.sh SOURCE_DIR BUILD_DIR      (exit 77: skipped, no arm-none-eabi-g++)
set -eu
src=$1
build=$2
if ! command -v arm-none-eabi-g++ >/dev/null 2>&1; then
  echo "cross_build: arm-none-eabi-g++ not found (scripts/install_deps.sh): skipped"
  exit 77
fi
launcher=""
if command -v ccache >/dev/null 2>&1; then
  launcher="-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
fi
# shellcheck disable=SC2086
cmake -S "$src" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$src/cmake/toolchain/cortex-m55.cmake" \
  -DCMAKE_BUILD_TYPE=MinSizeRel $launcher >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j"${JOBS:-2}" >"$build.build.log" 2>&1 ||
  { grep -E -A8 "error|warning" "$build.build.log" | head -60; exit 1; }
echo "cross_build: libcvml.a for Cortex-M55 built with -Werror ($build)"
