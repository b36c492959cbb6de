/* The emulator's context switch between fibers (cuda_emu.cpp's launch engine): the
 * callee-saved registers pushed on the running stack, the stack pointer swapped, the
 * other fiber's registers popped. glibc's swapcontext also saves and restores the
 * signal mask, a system call each way, which had been 80% of an emulated ResNet-18's
 * time (every __syncthreads and warp collective switches fibers); nothing here touches
 * signals, which the kernels never do either.
 *
 * x86-64 and aarch64 have the switch in assembly (fiber_switch.cpp); other hosts take
 * ucontext (CUDA_EMU_FIBER_UCONTEXT). */
#pragma once

#include <stddef.h>

#if !defined(__x86_64__) && !defined(__aarch64__)
#define CUDA_EMU_FIBER_UCONTEXT 1
#include <ucontext.h>
#endif

namespace cuda_emu {

/* Where a switched-out fiber resumes. */
struct fiber_context {
#if CUDA_EMU_FIBER_UCONTEXT
    ucontext_t uc;
#else
    void* sp = nullptr; /* its stack pointer, the saved registers on top */
#endif
};

/* Makes `to` start `entry` (which never returns) on the stack [stack, stack + size). */
void fiber_context_init(fiber_context* to, char* stack, size_t size, void (*entry)());

/* Saves the running context in `from` and continues `to`; returns when something
 * switches back to `from`. */
void fiber_context_switch(fiber_context* from, fiber_context* to);

}  // namespace cuda_emu
