#!/usr/bin/env bash
# Cross-builds the bare-metal harness (tests/mcu) for three emulated Cortex-M boards and
# runs every model in it under qemu-system-arm (docs/embedded.md):
#   mps3-an547  Cortex-M55 (cmake/toolchain/cortex-m55.cmake)
#   mps2-an500  Cortex-M7  (cmake/toolchain/cortex-m7.cmake)
#   mps2-an386  Cortex-M4F (cmake/toolchain/cortex-m4f.cmake)
# Models: the bundled resnet_block_chain (tests/mcu/models), and cifar_resnet20 from
# ../shared/models when present (skipped with a message otherwise).
#
# Each image runs twice where the library can load with options: first with the
# library's own arena (params read in place from flash), which reports the arena size
# the model needs; then rebuilt with a static arena of exactly that size handed to the
# load, where any allocation after load fails the run. Fails on any wrong output byte or
# gas figure (the image checks both and exits non-zero; this script checks the printed
# values again), a crash or a timeout. Prints one line per board and model, from the
# last run:
#   mcu BOARD MODEL: output V1 V2 ... gas G ram_peak R text T instructions I simd L
# and for the compiled plan of each model (docs/compiled-plan.md), which the first image
# writes for the board's target (cortex-m55, cortex-m7, cortex-m4f; scalar without the
# Cortex-M kernels) and a third build embeds, with a static arena of the size a probe
# run reported:
#   mcu BOARD MODEL compiled: output V1 V2 ... gas G ram_peak R text T
# R: bytes of heap high-water + stack high-water + data/bss (a caller's arena is in
# data/bss, the library's in the heap); T: bytes of libcvml's code the image links
# (.text kept by --gc-sections, from the link map); I: instructions the run executed
# (qemu -icount shift=0 and SysTick, tests/mcu/insn_count.c); L: the CPU kernels'
# level (scalar, dsp or mve: chosen at compile time). A detail line follows each.
# CVML_MCU_BOARDS="mps3-an547 ..." runs only those boards; CVML_MCU_TRACE_ALLOC=BYTES
# also lists, per function, the heap blocks of at least BYTES still held after the run;
# CVML_MCU_WITH_SIMD=OFF builds without the Cortex-M kernels (the scalar level only:
# the smallest code); CVML_MCU_TEXT_BUDGET=BYTES fails a model whose libcvml code (T)
# exceeds BYTES, CVML_MCU_COMPILED_TEXT_BUDGET and CVML_MCU_COMPILED_RAM_BUDGET a
# compiled plan's image whose code or ram_peak does. The build directories are build/mcu-BOARD (build/mcu-BOARD-scalar).
# Needs gcc-arm-none-eabi, libnewlib-arm-none-eabi and qemu-system-arm
# (scripts/install_deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${JOBS:-$(nproc)}
build_type=${CVML_MCU_BUILD_TYPE:-MinSizeRel}
timeout_s=${CVML_MCU_TIMEOUT:-600}
trace_alloc=${CVML_MCU_TRACE_ALLOC:-0}
with_simd=${CVML_MCU_WITH_SIMD:-ON}
text_budget=${CVML_MCU_TEXT_BUDGET:-0}
compiled_text_budget=${CVML_MCU_COMPILED_TEXT_BUDGET:-0}
compiled_ram_budget=${CVML_MCU_COMPILED_RAM_BUDGET:-0}

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

model_dir() {
  if [[ $1 == cifar_resnet20 ]]; then
    echo ../shared/models/cifar_resnet20_2019/case
  else
    echo "tests/mcu/models/$1"
  fi
}

# field NAME LINE: the value after NAME in a `mcu-run` line.
field() { sed -nE "s/.* $1 ([^ ]+).*/\1/p" <<<"$2"; }

# configure_and_build DIR BOARD CORE [CMAKE ARGS...]
configure_and_build() {
  local dir=$1 board=$2 core=$3
  shift 3
  cmake -S tests/mcu -B "$dir" -DMCU_BOARD="$board" -DCMAKE_BUILD_TYPE="$build_type" \
    -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchain/$core.cmake" -DMCU_TRACE_ALLOC_MIN="$trace_alloc" \
    -DCVML_WITH_SIMD="$with_simd" \
    "${launcher[@]}" "$@" \
    >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; return 1; }
  cmake --build "$dir" -j"$jobs" >"$dir.build.log" 2>&1 || { cat "$dir.build.log"; return 1; }
}

# The bare-metal profile links no thread-local storage, atomics or POSIX threads and
# clocks (the image would not link with newlib alone; this names the culprit).
check_symbols() {
  local bad
  bad=$(arm-none-eabi-nm "$1" | grep -E ' (__tls_get_addr|__aeabi_read_tp|__atomic_[a-z_0-9]+|__sync_[a-z_0-9]+|pthread_[a-z_]+|clock_gettime)$' || true)
  [[ -z $bad ]] || { echo "test_mcu: FAIL $1 links $bad" >&2; return 1; }
}

# run_model DIR BOARD MODEL [compiled]: runs the image (the compiled plan's with
# `compiled`), checks it, and prints its `mcu-run` line.
run_model() {
  local dir=$1 board=$2 model=$3 form=${4:-}
  local image=mcu_$model${form:+_$form} label=$model${form:+ $form}
  check_symbols "$dir/$image.elf" || return 1
  local out rc=0 want_values want_gas
  # -icount shift=0: one instruction per virtual nanosecond, which the image's SysTick
  # counts (tests/mcu/insn_count.c); it changes nothing else about the run.
  out=$(timeout "$timeout_s" qemu-system-arm -M "$board" -icount shift=0 -nographic -monitor none -serial none \
    -semihosting-config enable=on,target=native -kernel "$dir/$image.elf" 2>&1) || rc=$?
  printf '%s\n' "$out" >"$dir/$image.log"
  read -r want_values want_gas < <(expected_values "$(model_dir "$model")")
  local line got_values
  line=$(grep "^mcu-run $board $label: output" <<<"$out" || true)
  got_values=$(sed -E 's/.*: output (.*) gas .*/\1/' <<<"$line" | tr ' ' ',')
  if [[ $rc -ne 0 || -z $line || $got_values != "$want_values" || $(field gas "$line") != "$want_gas" ]]; then
    echo "test_mcu: FAIL $board $label (exit $rc): expected output ${want_values//,/ } gas $want_gas" >&2
    echo "$out" >&2
    return 1
  fi
  echo "$line"
}

# report DIR BOARD MODEL LINE [FIRST RUN'S LINE]: the `mcu` line and its detail.
report() {
  local dir=$1 board=$2 model=$3 line=$4 first=${5:-}
  local ram sizes text
  ram=$(field ram_peak "$line")
  sizes=$(python3 tests/mcu/code_size.py "$dir/mcu_$model.map")
  text=$(awk '{print $2}' <<<"$sizes")
  local insn
  insn=$(field instructions "$line")
  echo "mcu $board $model: output $(sed -E 's/.*: output (.*) gas .*/\1/' <<<"$line") gas $(field gas "$line") ram_peak $ram text $text instructions ${insn:-n/a} simd $(field simd "$line")"
  local detail=${line#*ram_peak $ram }
  # Name the function behind an allocation made after load (a return address, Thumb bit set).
  local caller
  caller=$(field last_alloc_from "$line")
  if [[ -n $caller ]] && command -v arm-none-eabi-addr2line >/dev/null 2>&1; then
    detail+=" in $(arm-none-eabi-addr2line -f -C -e "$dir/mcu_$model.elf" "$(printf '0x%x' $((caller & ~1)))" | head -1)"
  fi
  echo "    detail: $detail, libcvml ${sizes#text * }"
  [[ -z $first ]] || echo "    with the library's arena: ram_peak $(field ram_peak "$first") heap $(field heap "$first")"
  if [[ $trace_alloc -gt 0 ]]; then
    echo "    heap blocks of >= $trace_alloc bytes held after the run:"
    python3 tests/mcu/heap_holders.py "$dir/mcu_$model.log" "$dir/mcu_$model.elf"
  fi
  if [[ $text_budget -gt 0 && $text -gt $text_budget ]]; then
    echo "test_mcu: FAIL $board $model: libcvml code $text bytes, over the budget of $text_budget" >&2
    return 1
  fi
}

# compare_host_plans DIR TARGET MODELS...: the host plans for the board's target too
# (simd/arm/cortexm/conv2d_plan.h holds the Cortex-M kernels' figures); its plan must be
# the one the core's own build wrote, byte for byte. Needs the host's cvml tool
# (CVML_MCU_HOST_CVML, default build/release/tools/cvml), skipped with a message without.
compare_host_plans() {
  local dir=$1 target=$2
  shift 2
  local host=${CVML_MCU_HOST_CVML:-build/release/tools/cvml} model
  if [[ ! -x $host ]]; then
    echo "test_mcu: no host cvml tool at $host: host plans not compared"
    return 0
  fi
  for model in "$@"; do
    [[ -f $dir/$model.cvmc ]] || continue
    "$host" save "$(model_dir "$model")" --compiled "$dir/$model.host.cvmc" --target "$target" \
      --no-check >/dev/null || { failures=$((failures + 1)); continue; }
    if ! cmp -s "$dir/$model.cvmc" "$dir/$model.host.cvmc"; then
      echo "test_mcu: FAIL $model: the host's plan for $target differs from the board's ($dir/$model.host.cvmc)" >&2
      failures=$((failures + 1))
    fi
  done
}

# report_compiled DIR BOARD MODEL LINE: the `mcu ... compiled` line and its detail.
report_compiled() {
  local dir=$1 board=$2 model=$3 line=$4
  local sizes text
  sizes=$(python3 tests/mcu/code_size.py "$dir/mcu_${model}_compiled.map")
  text=$(awk '{print $2}' <<<"$sizes")
  echo "mcu $board $model compiled: output $(sed -E 's/.*: output (.*) gas .*/\1/' <<<"$line") gas $(field gas "$line") ram_peak $(field ram_peak "$line") text $text"
  echo "    detail: ${line#*ram_peak $(field ram_peak "$line") }, libcvml ${sizes#text * }"
  if [[ $compiled_text_budget -gt 0 && $text -gt $compiled_text_budget ]]; then
    echo "test_mcu: FAIL $board $model compiled: libcvml code $text bytes, over the budget of $compiled_text_budget" >&2
    return 1
  fi
  if [[ $compiled_ram_budget -gt 0 && $(field ram_peak "$line") -gt $compiled_ram_budget ]]; then
    echo "test_mcu: FAIL $board $model compiled: ram_peak $(field ram_peak "$line"), over the budget of $compiled_ram_budget" >&2
    return 1
  fi
}

# run_compiled DIR BOARD CORE MODELS...: the compiled plans the first images wrote, run
# once with a probe arena that reports the size they need, then with exactly that.
run_compiled() {
  local dir=$1 board=$2 core=$3
  shift 3
  local model probe arenas=() ran=()
  for model in "$@"; do
    [[ -f $dir/mcu_${model}_compiled.elf ]] || { echo "test_mcu: FAIL $board $model: no compiled plan was written" >&2; failures=$((failures + 1)); continue; }
    probe=$(run_model "$dir" "$board" "$model" compiled) || { failures=$((failures + 1)); continue; }
    arenas+=("-DMCU_COMPILED_ARENA_BYTES_$model=$(field arena_need "$probe")")
    ran+=("$model")
  done
  [[ ${#ran[@]} -gt 0 ]] || return 0
  configure_and_build "$dir" "$board" "$core" "${arenas[@]}" || return 1
  local line
  for model in "${ran[@]}"; do
    line=$(run_model "$dir" "$board" "$model" compiled) || { failures=$((failures + 1)); continue; }
    report_compiled "$dir" "$board" "$model" "$line" || failures=$((failures + 1))
  done
}

failures=0
run_board() {
  local board=$1 core=$2
  local dir=build/mcu-$board plan_target=$core
  [[ $with_simd == ON ]] || { dir+=-scalar; plan_target=scalar; }
  # First run: the library's arena (MCU_ARENA_BYTES_* 0); the images write the models'
  # compiled plans (stale ones are removed first, so a failed write cannot hide).
  rm -f "$dir"/*.cvmc
  configure_and_build "$dir" "$board" "$core" -DMCU_ARENA_BYTES_resnet_block_chain=0 \
    -DMCU_ARENA_BYTES_cifar_resnet20=0 -DMCU_PLAN_TARGET="$plan_target" \
    -DMCU_COMPILED_ARENA_BYTES_resnet_block_chain=0 -DMCU_COMPILED_ARENA_BYTES_cifar_resnet20=0 ||
    return 1
  grep "cifar_resnet20 skipped" "$dir.configure.log" | sed 's/^-- /test_mcu: /' || true
  local models=(resnet_block_chain)
  [[ -f $dir/mcu_cifar_resnet20.elf ]] && models+=(cifar_resnet20)
  local -A first=()
  local arenas=() model
  for model in "${models[@]}"; do
    first[$model]=$(run_model "$dir" "$board" "$model") || { failures=$((failures + 1)); continue; }
    arenas+=("-DMCU_ARENA_BYTES_$model=$(field arena "${first[$model]}")")
  done
  if ! grep -q "params in_place" <<<"${first[*]}"; then
    # A library without cvml_graph_load_memory_ex(): the first run is the measurement.
    for model in "${!first[@]}"; do
      report "$dir" "$board" "$model" "${first[$model]}" || failures=$((failures + 1))
    done
    return 0
  fi
  # Second run: a static arena of the size the first run reported, handed to the load.
  configure_and_build "$dir" "$board" "$core" "${arenas[@]}" || return 1
  local line
  for model in "${!first[@]}"; do
    line=$(run_model "$dir" "$board" "$model") || { failures=$((failures + 1)); continue; }
    report "$dir" "$board" "$model" "$line" "${first[$model]}" || failures=$((failures + 1))
  done
  compare_host_plans "$dir" "$plan_target" "${!first[@]}"
  run_compiled "$dir" "$board" "$core" "${!first[@]}"
}

# CVML_MCU_BOARDS="mps3-an547 ..." runs only those boards.
boards=${CVML_MCU_BOARDS:-mps3-an547 mps2-an500 mps2-an386}
for board in $boards; do
  case $board in
    mps3-an547) core=cortex-m55 ;;
    mps2-an500) core=cortex-m7 ;;
    mps2-an386) core=cortex-m4f ;;
    *) echo "test_mcu: unknown board '$board'" >&2; exit 1 ;;
  esac
  run_board "$board" "$core" || failures=$((failures + 1))
done

if [[ $failures -ne 0 ]]; then
  echo "test_mcu: $failures failure(s)" >&2
  exit 1
fi
echo "test_mcu: all passed"
