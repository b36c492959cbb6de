/* SysTick as an instruction counter under qemu -icount shift=0: virtual time advances
 * 1 ns per instruction and SysTick counts core-clock periods of that time, so a tick is
 * worth a fixed number of instructions (40 on a 25 MHz board). The worth is measured,
 * not assumed, with a loop whose instruction count is known, so a board's clock need
 * not be written here. SysTick is 24 bits: the exception counts its wraps. */
#include "insn_count.h"

#define SYST_CSR (*(volatile uint32_t*)0xe000e010u)
#define SYST_RVR (*(volatile uint32_t*)0xe000e014u)
#define SYST_CVR (*(volatile uint32_t*)0xe000e018u)

enum {
    CSR_ENABLE = 1u << 0,
    CSR_TICKINT = 1u << 1,
    CSR_CLKSOURCE_CORE = 1u << 2,
    RELOAD = 0xffffffu,
    CALIBRATION_LOOPS = 1u << 20, /* 2 instructions each: subs, bne */
};

static volatile uint32_t g_wraps;
static uint64_t g_start_ticks;
/* Instructions per tick as a 32.32 fixed-point number (0: not counting). */
static uint64_t g_per_tick_q32;

void SysTick_Handler(void);
void SysTick_Handler(void) {
    g_wraps = g_wraps + 1;
}

static uint64_t ticks(void) {
    uint32_t wraps, value;
    do {
        wraps = g_wraps;
        value = SYST_CVR;
    } while (wraps != g_wraps); /* a wrap between the two reads: read again */
    return (uint64_t)wraps * (RELOAD + 1u) + (RELOAD - value);
}

static void known_loop(uint32_t n) {
    __asm__ volatile(
        "1: subs %0, %0, #1\n"
        "   bne 1b\n"
        : "+r"(n)
        :
        : "cc");
}

uint64_t g_dbg_spent, g_dbg_t;
int insn_count_start(void) {
    SYST_RVR = RELOAD;
    SYST_CVR = 0;
    SYST_CSR = CSR_ENABLE | CSR_TICKINT | CSR_CLKSOURCE_CORE;
    /* Counting starts once the counter has loaded RELOAD (it reads 0 until then). */
    for (uint32_t spins = 0; SYST_CVR == 0; ++spins)
        if (spins > CALIBRATION_LOOPS) return 0;
    g_wraps = 0;
    const uint64_t t0 = ticks();
    known_loop(CALIBRATION_LOOPS);
    const uint64_t spent = ticks() - t0;
    if (spent == 0 || spent > 2u * CALIBRATION_LOOPS) return 0;
    g_per_tick_q32 = ((uint64_t)2u * CALIBRATION_LOOPS << 32) / spent;
    g_start_ticks = ticks();
    return 1;
}

uint64_t insn_count_now(void) {
    if (!g_per_tick_q32) return 0;
    const uint64_t t = ticks() - g_start_ticks;
    g_dbg_t = t;
    /* t * per_tick without overflowing 64 bits for any realistic run. */
    return (t >> 16) * (g_per_tick_q32 >> 16) + (((t & 0xffffu) * g_per_tick_q32) >> 32);
}
