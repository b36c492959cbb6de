/* Instructions executed, counted with qemu's -icount shift=0 (one instruction per
 * nanosecond of virtual time) and SysTick on the core clock (docs/cpu.md,
 * "Cortex-M levels"). The harness brackets the run with insn_count_now(). */
#pragma once

#include <stdint.h>

/* Starts SysTick on the core clock and measures how many instructions one tick is
 * worth with a loop of known length. Returns 0 when SysTick does not advance (qemu run
 * without -icount, or a board whose SysTick has no clock): then nothing is counted. */
int insn_count_start(void);
/* Instructions since insn_count_start() (0 when it returned 0). */
uint64_t insn_count_now(void);
