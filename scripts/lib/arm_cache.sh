# shellcheck shell=bash
# Sourced by scripts/test_arm.sh (and tests/scripts/arm_cache_test.sh): whether an
# existing aarch64 build tree can be built in again.
#
# A tree whose first configure ran before the cross compiler was installed keeps what
# that configure cached: empty CMAKE_*_FLAGS_RELEASE among them, and the next configure
# does not fill them in, so every later build is at -O0 (ten times the instructions) and
# nothing says so. CMake keeps what it cached, so such a tree must be configured afresh.

# arm_cache_value CACHE NAME: the value of NAME in a CMakeCache.txt (empty if absent).
arm_cache_value() {
  sed -n "s/^$2:[A-Z]*=//p" "$1" | head -1
}

# arm_compiler FILE: the compiler CMake detected, from CMakeFiles/VERSION/CMake*Compiler.cmake.
arm_compiler() {
  sed -n 's/^set(CMAKE_[A-Z]*_COMPILER "\(.*\)")$/\1/p' "$1" | head -1
}

# arm_cache_stale BUILD: prints why BUILD cannot be built in again and succeeds, or fails
# (prints nothing) where BUILD has no cache yet or was configured as scripts/test_arm.sh
# configures it: the aarch64 toolchain file, a Release build with its flags, and an
# aarch64-linux-gnu C and C++ compiler that is there.
arm_cache_stale() {
  local build=$1 cache=$1/CMakeCache.txt lang file compiler value name
  [[ -f $cache ]] || return 1
  value=$(arm_cache_value "$cache" CMAKE_TOOLCHAIN_FILE)
  # Absolute after the first configure, as given on the command line after a later one.
  if [[ $value != *cmake/toolchain/aarch64-linux-gnu.cmake ]]; then
    echo "without the aarch64 toolchain file (CMAKE_TOOLCHAIN_FILE '$value')"
    return 0
  fi
  value=$(arm_cache_value "$cache" CMAKE_BUILD_TYPE)
  if [[ $value != Release ]]; then
    echo "with CMAKE_BUILD_TYPE '$value', not Release"
    return 0
  fi
  for name in CMAKE_C_FLAGS_RELEASE CMAKE_CXX_FLAGS_RELEASE; do
    value=$(arm_cache_value "$cache" "$name")
    if [[ -z ${value// /} ]]; then
      echo "with an empty $name (it would build at -O0)"
      return 0
    fi
  done
  for lang in C CXX; do
    compiler=""
    for file in "$build"/CMakeFiles/*/CMake"${lang}"Compiler.cmake; do
      [[ -f $file ]] && compiler=$(arm_compiler "$file")
    done
    if [[ $compiler != *aarch64-linux-gnu-* || ! -x $compiler ]]; then
      echo "without an aarch64-linux-gnu $lang compiler (found '$compiler')"
      return 0
    fi
  done
  return 1
}
