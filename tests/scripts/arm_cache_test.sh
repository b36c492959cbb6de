#!/usr/bin/env bash
# scripts/lib/arm_cache.sh on faked build trees, without the cross toolchain: a tree
# configured as scripts/test_arm.sh configures it is kept, and one whose first configure
# ran before the cross compiler was installed (empty release flags, no compiler) or that
# was configured otherwise is found stale, with the reason.
#
# usage: arm_cache_test.sh SOURCE_DIR WORKDIR
set -euo pipefail
src=$1 work=$2
# shellcheck source=scripts/lib/arm_cache.sh
source "$src/scripts/lib/arm_cache.sh"
rm -rf "$work" && mkdir -p "$work"
failed=0

# A stand-in for the cross compilers: arm_cache_stale only checks that it is there.
mkdir -p "$work/bin"
for tool in gcc g++; do
  printf '#!/bin/sh\nexit 0\n' >"$work/bin/aarch64-linux-gnu-$tool"
  chmod +x "$work/bin/aarch64-linux-gnu-$tool"
done

# fake DIR TOOLCHAIN BUILD_TYPE C_FLAGS CXX_FLAGS C_COMPILER CXX_COMPILER: a build tree
# with the cache entries and compiler files CMake writes ("-" for a compiler: none).
fake() {
  local dir=$work/$1
  mkdir -p "$dir/CMakeFiles/3.25.1"
  cat >"$dir/CMakeCache.txt" <<EOF
CMAKE_BUILD_TYPE:STRING=$3
CMAKE_CXX_FLAGS_RELEASE:STRING=$5
CMAKE_C_FLAGS_RELEASE:STRING=$4
CMAKE_TOOLCHAIN_FILE:FILEPATH=$2
EOF
  [[ $6 == - ]] || echo "set(CMAKE_C_COMPILER \"$6\")" >"$dir/CMakeFiles/3.25.1/CMakeCCompiler.cmake"
  [[ $7 == - ]] || echo "set(CMAKE_CXX_COMPILER \"$7\")" >"$dir/CMakeFiles/3.25.1/CMakeCXXCompiler.cmake"
}
# expect NAME kept|stale [REASON]: what arm_cache_stale says of the tree NAME.
expect() {
  local why rc=0
  why=$(arm_cache_stale "$work/$1") || rc=$?
  if [[ $2 == kept && $rc -eq 0 ]]; then
    echo "FAIL: $1 found stale ($why), want kept" >&2
    failed=1
  elif [[ $2 == stale && ($rc -ne 0 || $why != *"$3"*) ]]; then
    echo "FAIL: $1: want stale for '$3', got rc $rc '$why'" >&2
    failed=1
  else
    echo "ok: $1 $2${why:+ ($why)}"
  fi
}

toolchain=$src/cmake/toolchain/aarch64-linux-gnu.cmake
cc=$work/bin/aarch64-linux-gnu-gcc cxx=$work/bin/aarch64-linux-gnu-g++
fake good "$toolchain" Release "-O3 -DNDEBUG" "-O3 -DNDEBUG" "$cc" "$cxx"
# A configure of an existing tree caches the toolchain file as the command line gave it.
fake reconfigured cmake/toolchain/aarch64-linux-gnu.cmake Release "-O3 -DNDEBUG" \
  "-O3 -DNDEBUG" "$cc" "$cxx"
fake before_compiler "$toolchain" Release "" "" - -
fake empty_cxx_flags "$toolchain" Release "-O3 -DNDEBUG" "" "$cc" "$cxx"
fake host "" Release "-O3 -DNDEBUG" "-O3 -DNDEBUG" /usr/bin/cc /usr/bin/c++
fake debug "$toolchain" Debug "-O3 -DNDEBUG" "-O3 -DNDEBUG" "$cc" "$cxx"
fake no_compiler "$toolchain" Release "-O3 -DNDEBUG" "-O3 -DNDEBUG" - -
fake gone_compiler "$toolchain" Release "-O3 -DNDEBUG" "-O3 -DNDEBUG" \
  "$work/bin/aarch64-linux-gnu-gcc-removed" "$cxx"
mkdir -p "$work/unconfigured"

expect good kept
expect reconfigured kept
expect unconfigured kept
expect before_compiler stale "empty CMAKE_C_FLAGS_RELEASE"
expect empty_cxx_flags stale "empty CMAKE_CXX_FLAGS_RELEASE"
expect host stale "without the aarch64 toolchain file"
expect debug stale "CMAKE_BUILD_TYPE 'Debug'"
expect no_compiler stale "without an aarch64-linux-gnu C compiler"
expect gone_compiler stale "without an aarch64-linux-gnu C compiler"
exit $failed
