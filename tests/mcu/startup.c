/* Reset and fault handling for the Cortex-M boards the harness runs on: the vector
 * table, the FPU switched on before any C code runs, .data copied from flash, .bss
 * zeroed, the stack painted (stack_high_water() reads it back), static constructors,
 * then main() and a semihosting exit with its status. */
#include <stdint.h>
#include <string.h>

#include "memory_stats.h"
#include "semihosting.h"

extern uint32_t __stack_limit[];
extern uint32_t __stack_top[];
extern uint8_t __data_start[];
extern uint8_t __data_end[];
extern const uint8_t __data_load[];
extern uint8_t __bss_start[];
extern uint8_t __bss_end[];
extern void (*__init_array_start[])(void);
extern void (*__init_array_end[])(void);

int main(void);
void Reset_Handler(void);
void SysTick_Handler(void); /* insn_count.c */
void reset_continue(void);

enum { STACK_PAINT = 0xa5a5a5a5u };

static void fault(const char* what) {
    semihost_write("mcu: ");
    semihost_write(what);
    semihost_write("\n");
    semihost_exit(70);
}

static void on_nmi(void) {
    fault("NMI");
}
static void on_hard_fault(void) {
    fault("HardFault (a bad access, or a stack overflow where the core checks MSPLIM)");
}
static void on_mem_manage(void) {
    fault("MemManage fault");
}
static void on_bus_fault(void) {
    fault("BusFault");
}
static void on_usage_fault(void) {
    fault("UsageFault");
}
static void on_unexpected(void) {
    fault("unexpected exception");
}

__attribute__((section(".vectors"), used)) static void (*const g_vectors[16])(void) = {
    (void (*)(void))(uintptr_t)__stack_top,
    Reset_Handler,
    on_nmi,
    on_hard_fault,
    on_mem_manage,
    on_bus_fault,
    on_usage_fault,
    on_unexpected, /* SecureFault (Armv8-M) */
    0,
    0,
    0,
    on_unexpected, /* SVCall */
    on_unexpected, /* DebugMonitor */
    0,
    on_unexpected, /* PendSV */
    SysTick_Handler,
};

/* Written in assembly because compiled C may use the FPU (or MVE) registers, which
 * fault until CPACR grants coprocessors 10 and 11. */
__attribute__((naked, noreturn)) void Reset_Handler(void) {
    __asm__ volatile(
        "ldr r0, =0xe000ed88\n" /* CPACR */
        "ldr r1, [r0]\n"
        "orr r1, r1, #(0xf << 20)\n"
        "str r1, [r0]\n"
        "dsb\n"
        "isb\n"
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
        "ldr r0, =__stack_limit\n" /* a stack overflow faults instead of corrupting .bss */
        "msr msplim, r0\n"
#endif
        "b reset_continue\n");
}

static void paint_stack(void) {
    uint32_t* sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    /* Leave the words this function and its caller use. */
    for (uint32_t* p = __stack_limit; p < sp - 16; ++p) *p = STACK_PAINT;
}

void reset_continue(void) {
    memcpy(__data_start, __data_load, (size_t)(__data_end - __data_start));
    memset(__bss_start, 0, (size_t)(__bss_end - __bss_start));
    paint_stack();
    for (void (**ctor)(void) = __init_array_start; ctor < __init_array_end; ++ctor) (*ctor)();
    semihost_exit(main());
}

size_t stack_high_water(void) {
    const uint32_t* p = __stack_limit;
    while (p < __stack_top && *p == STACK_PAINT) ++p;
    return (size_t)((const uint8_t*)__stack_top - (const uint8_t*)p);
}

size_t static_ram_bytes(void) {
    return (size_t)(__data_end - __data_start) + (size_t)(__bss_end - __bss_start);
}
