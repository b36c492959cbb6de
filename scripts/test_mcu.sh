#!/usr/bin/env bash
# Cross-builds the bare-metal harness (tests/mcu) for three emulated Cortex-M boards and
# runs every model in it under qemu-system-arm (docs/embedded.md):
#   mps3-an547  Cortex-M55 (cmake/toolchain/cortex-m55.cmake)
#   mps2-an500  Cortex-M7  (cmake/toolchain/cortex-m7.cmake)
#   mps2-an386  Cortex-M4F (cmake/toolchain/cortex-m4f.cmake)
# Models: the bundled resnet_block_chain (tests/mcu/models), and cifar_resnet20 from
# ../shared/models when present (skipped with a message otherwise).
# Fails on any wrong output byte or gas figure (the image checks both against the
# model's expected ones and exits non-zero; this script checks the printed values
# again), a crash or a timeout. Prints one line per board and model:
#   mcu BOARD MODEL: output V1 V2 ... gas G ram_peak R text T
# R: bytes of heap high-water + stack high-water + data/bss (the arena is counted in
# the heap, where the library allocates it); T: bytes of libcvml's code the image links
# (.text kept by --gc-sections, from the link map). A detail line follows each.
# Needs gcc-arm-none-eabi, libnewlib-arm-none-eabi and qemu-system-arm
# (scripts/install_deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${JOBS:-$(nproc)}
build_type=${CVML_MCU_BUILD_TYPE:-MinSizeRel}
timeout_s=${CVML_MCU_TIMEOUT:-600}

for tool in arm-none-eabi-gcc qemu-system-arm python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "test_mcu: $tool not found (scripts/install_deps.sh)" >&2; exit 1; }
done

launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

# The expected output values of a model directory, comma-separated, and its gas.
expected_values() {
  python3 - "$1" <<'PY'
import json, struct, sys
d = sys.argv[1]
raw = open(d + "/output.bin", "rb").read()
meta = json.load(open(d + "/meta.json"))
size = meta.get("upstream", {}).get("output_type_size", 1)
fmt = "<%d%s" % (len(raw) // size, "b" if size == 1 else "i")
print(",".join(str(v) for v in struct.unpack(fmt, raw)), meta["expect"]["gas"])
PY
}

failures=0
run_board() {
  local board=$1 core=$2
  local dir=build/mcu-$board
  cmake -S tests/mcu -B "$dir" -DMCU_BOARD="$board" -DCMAKE_BUILD_TYPE="$build_type" \
    -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchain/$core.cmake" "${launcher[@]}" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; return 1; }
  grep "cifar_resnet20 skipped" "$dir.configure.log" | sed 's/^-- /test_mcu: /' || true
  cmake --build "$dir" -j"$jobs" >"$dir.build.log" 2>&1 || { cat "$dir.build.log"; return 1; }

  local models=(resnet_block_chain)
  [[ -f $dir/mcu_cifar_resnet20.elf ]] && models+=(cifar_resnet20)
  for model in "${models[@]}"; do
    local model_dir=tests/mcu/models/$model
    [[ $model == cifar_resnet20 ]] && model_dir=../shared/models/cifar_resnet20_2019/case
    local out rc=0
    out=$(timeout "$timeout_s" qemu-system-arm -M "$board" -nographic -monitor none -serial none \
      -semihosting-config enable=on,target=native -kernel "$dir/mcu_$model.elf" 2>&1) || rc=$?
    local line
    line=$(grep "^mcu-run $board $model: output" <<<"$out" || true)
    local want_values want_gas
    read -r want_values want_gas < <(expected_values "$model_dir")
    local got_values got_gas
    got_values=$(sed -E 's/.*: output (.*) gas .*/\1/' <<<"$line" | tr ' ' ',')
    got_gas=$(sed -E 's/.* gas ([0-9]+) .*/\1/' <<<"$line")
    if [[ $rc -ne 0 || -z $line || $got_values != "$want_values" || $got_gas != "$want_gas" ]]; then
      echo "test_mcu: FAIL $board $model (exit $rc): expected output ${want_values//,/ } gas $want_gas" >&2
      echo "$out" >&2
      failures=$((failures + 1))
      continue
    fi
    local ram text
    ram=$(sed -E 's/.* ram_peak ([0-9]+) .*/\1/' <<<"$line")
    text=$(python3 tests/mcu/code_size.py "$dir/mcu_$model.map" | awk '{print $2}')
    echo "mcu $board $model: output ${got_values//,/ } gas $got_gas ram_peak $ram text $text"
    local detail=${line#*ram_peak $ram }
    # Name the function behind an allocation made after load (a return address, Thumb bit set).
    local caller
    caller=$(grep -o 'last_alloc_from 0x[0-9a-f]*' <<<"$line" | awk '{print $2}' || true)
    if [[ -n $caller ]] && command -v arm-none-eabi-addr2line >/dev/null 2>&1; then
      detail+=" in $(arm-none-eabi-addr2line -f -C -e "$dir/mcu_$model.elf" "$(printf '0x%x' $((caller & ~1)))" | head -1)"
    fi
    echo "    detail: $detail, $(python3 tests/mcu/code_size.py "$dir/mcu_$model.map" | sed 's/text [0-9]* //')"
  done
}

run_board mps3-an547 cortex-m55 || failures=$((failures + 1))
run_board mps2-an500 cortex-m7 || failures=$((failures + 1))
run_board mps2-an386 cortex-m4f || failures=$((failures + 1))

if [[ $failures -ne 0 ]]; then
  echo "test_mcu: $failures failure(s)" >&2
  exit 1
fi
echo "test_mcu: all passed"
