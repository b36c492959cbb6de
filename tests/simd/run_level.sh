#!/bin/sh
# run_level.sh PROBE LEVEL COMMAND...: runs COMMAND unless the CPU lacks LEVEL (exit 77).
# CVML_TEST_EMULATOR (Wine, for the Windows build) runs both programs when set.
probe=$1 level=$2
shift 2
emu=${CVML_TEST_EMULATOR:-}
best=$($emu "$probe" | tr -d '\r')
rank() { case $1 in scalar) echo 0 ;; avx2) echo 1 ;; avx512) echo 2 ;; *) echo 9 ;; esac; }
if [ "$(rank "$level")" -gt "$(rank "$best")" ]; then
  echo "this CPU has no $level (best: $best): skipped"
  exit 77
fi
exec $emu "$@"
