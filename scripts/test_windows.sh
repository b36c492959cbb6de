#!/usr/bin/env bash
# Cross-builds cvm-lite for 64-bit Windows with MinGW-w64 and tests it under Wine:
#   1. cvml.dll exports the C API and the CVMAPI* functions, and nothing else;
#   2. the public headers compile as C and C++ in MSVC mode (clang, when present);
#      the unit tests, the conformance runner at every SIMD level the CPU has, and the C
#      examples through cvml.dll (ctest, tests/windows/windows_tests.cmake);
#   3. cvml.exe on the Cortex model from ../shared at every level (skipped with a message
#      where ../shared is absent);
#   4. the Go example (cgo) loading cvml.dll with LoadLibrary, where Go is installed;
#   5. cvml.exe finding and loading the test plugin DLL through CVML_PLUGIN_PATH and
#      from the cvml\plugins folder beside the library, and refusing one built for
#      another ABI version without running its DllMain.
# Needs g++-mingw-w64-x86-64-posix and wine (scripts/install_deps.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${JOBS:-$(nproc)}
build=$(realpath -m "${CVML_WINDOWS_BUILD:-build/windows}")
step() { printf '\n==== windows: %s\n' "$*"; }
fail() { echo "test_windows: FAIL: $*" >&2; exit 1; }

step "cross build (MinGW-w64)"
cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain/mingw-w64-x86_64.cmake \
  -DCMAKE_BUILD_TYPE=Release -DCVML_WITH_CUDA=OFF >/dev/null
cmake --build "$build" -j"$jobs"

step "cvml.dll exports"
exports=$(x86_64-w64-mingw32-objdump -p "$build/cvml.dll" |
  sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/p' | sed -n 's/^[[:space:]]*\[ *[0-9]*\] //p')
count=$(echo "$exports" | grep -c .)
stray=$(echo "$exports" | grep -Ev '^(cvml_|CVMAPI)' || true)
[[ -z $stray ]] || fail "cvml.dll exports more than the API: $stray"
[[ $count -gt 0 ]] || fail "cvml.dll exports nothing"
echo "cvml.dll: $count exports, all cvml_* or CVMAPI*"

step "public headers in MSVC mode (clang --target x86_64-pc-windows-msvc)"
if command -v clang >/dev/null 2>&1; then
  for lang in c c++; do
    clang --target=x86_64-pc-windows-msvc -ffreestanding -fms-compatibility -fsyntax-only \
      -Werror -Wall -Wextra -x "$lang" -Iapi tests/windows/msvc_headers.c ||
      fail "the public headers do not compile as $lang for MSVC"
  done
  echo "api/*.h compile as C and C++ for x86_64-pc-windows-msvc"
else
  echo "skipped: no clang"
fi

export WINEPREFIX="$build/wineprefix" WINEDEBUG=-all
wine=$(command -v wine || echo /usr/lib/wine/wine64)

step "tests under Wine"
# The first Wine process creates the prefix; one start here does it alone, so that the
# tests can then run side by side.
"$wine" "$build/tests/cvml_simd_probe.exe" >/dev/null
ctest --test-dir "$build" --output-on-failure -j"$jobs"

model=../shared/models/cifar_resnet20_2019
step "cvml.exe on the Cortex model"
if [[ -f $model/symbol && -f $model/case/input.bin ]]; then
  want=$(tr -d '\r' <"$model/result_0.txt" | tail -1)
  probe=$("$wine" "$build/tests/cvml_simd_probe.exe" | tr -d '\r')
  for level in scalar avx2 avx512; do
    if [[ $level == avx512 && $probe != avx512 ]] || [[ $level == avx2 && $probe == scalar ]]; then
      echo "this CPU has no $level: skipped"
      continue
    fi
    got=$(CVML_SIMD=$level "$wine" "$build/tools/cvml.exe" run "$model" \
      --input "$model/case/input.bin" --input-format raw | tr -d '\r' | tail -1)
    [[ $got == "$want" ]] || fail "cvml.exe at $level printed '$got', want '$want'"
    echo "cvml.exe at $level: $got"
  done
  # The same with Windows paths: a drive letter and backslashes.
  win_model=$(winepath -w "$model")
  got=$("$wine" "$build/tools/cvml.exe" run "$win_model" --input "$win_model\case\input.bin" \
    --input-format raw | tr -d '\r' | tail -1)
  [[ $got == "$want" ]] || fail "cvml.exe on '$win_model' printed '$got', want '$want'"
  echo "cvml.exe on $win_model: $got"
else
  echo "skipped: $model is absent (the Cortex model lives in ../shared)"
fi

step "the Go example (cgo, LoadLibrary of cvml.dll)"
if command -v go >/dev/null 2>&1; then
  work="$build/go_example"
  mkdir -p "$work"
  (cd examples/go && GOCACHE="$work/gocache" GOPATH="$work/gopath" GOFLAGS=-mod=mod \
    CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=x86_64-w64-mingw32-gcc-posix \
    go build -o "$work/cvmlrun.exe" .)
  tiny=examples/models/tiny_convnet
  got=$("$wine" "$work/cvmlrun.exe" -lib "$build/cvml.dll" "$tiny.json" "$tiny.params" \
    "$tiny.input.bin" | tr -d '\r')
  want_out=$(sed -n 's/.*"output": *\[\(.*\)\].*/\1/p' "$tiny.expected.json" | tr -d ',')
  want_gas=$(sed -n 's/.*"gas": *\([0-9]*\).*/\1/p' "$tiny.expected.json")
  [[ $(sed -n 1p <<<"$got") == "gas $want_gas" && $(sed -n 2p <<<"$got") == "$want_out" ]] ||
    fail "the Go example printed '$got', want gas $want_gas and '$want_out'"
  echo "cvmlrun.exe (Go) through cvml.dll: gas $want_gas, output $want_out"
else
  echo "skipped: no Go toolchain (Debian's golang-go)"
fi

step "plugins through LoadLibrary"
plugin_dir="$build/tests/plugins/good"
if compgen -G "$plugin_dir/cvml_*.dll" >/dev/null; then
  got=$(CVML_PLUGIN_PATH="$plugin_dir" "$wine" "$build/tools/cvml.exe" devices | tr -d '\r')
  echo "$got"
  grep -Eq "^ +[a-z_0-9]+ +loaded " <<<"$got" || fail "cvml.exe did not load the test plugin from CVML_PLUGIN_PATH"
  # Beside the library: <dir of cvml.exe, which holds the static library>\cvml\plugins.
  mkdir -p "$build/tools/cvml/plugins"
  cp "$plugin_dir"/cvml_*.dll "$build/tools/cvml/plugins/"
  got=$("$wine" "$build/tools/cvml.exe" devices | tr -d '\r')
  rm -rf "$build/tools/cvml"
  grep -Eq "^ +[a-z_0-9]+ +loaded " <<<"$got" || fail "cvml.exe did not load the test plugin from cvml\\plugins"
  echo "cvml.exe loads the test plugin from CVML_PLUGIN_PATH and from cvml\\plugins"
else
  fail "no test plugin DLL was built in $plugin_dir"
fi
step "a plugin for another ABI is refused before any of its code runs"
bad="$build/tests/plugins/bad/cvml_cplugin_next.dll"
[[ -f $bad ]] || fail "$bad was not built"
# Its DllMain ends the process with 42 when it does run (rundll32 runs it):
set +e
"$wine" rundll32 "$(winepath -w "$bad")",cvml_plugin_entry >/dev/null 2>&1
rc=$?
set -e
[[ $rc -eq 42 ]] || fail "the bad plugin's DllMain did not run under rundll32 (exit $rc)"
got=$(CVML_PLUGIN_PATH="$(dirname "$bad")" "$wine" "$build/tools/cvml.exe" devices | tr -d '\r') ||
  fail "cvml.exe died loading a plugin built for another ABI (its DllMain ran)"
grep -q "ABI version.*refused" <<<"$got" || fail "no ABI refusal in: $got"
echo "refused unrun: $(grep -o 'built for plugin ABI version [0-9]*' <<<"$got")"

echo "test_windows: all passed"
