/* The fiber switch (fiber_switch.h). cuda_emu_fiber_swap(save, to) pushes the
 * callee-saved registers of the host ABI, stores the stack pointer at *save, loads `to`
 * as the stack pointer and pops the registers found there; the return then continues
 * whatever fiber saved them. A new fiber's stack is laid out as if it had been switched
 * out just before calling its entry: its registers' slots, then the entry as the return
 * address. */
#include "fiber_switch.h"

#include <stdint.h>
#include <string.h>

#if !CUDA_EMU_FIBER_UCONTEXT
extern "C" void cuda_emu_fiber_swap(void** save, void* to);
#endif

#if defined(__x86_64__)
/* System V: rbx, rbp, r12-r15, and the SSE and x87 control words (the callee keeps
 * both): 7 slots under the return address. */
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".globl cuda_emu_fiber_swap\n"
    ".hidden cuda_emu_fiber_swap\n"
    ".type cuda_emu_fiber_swap, @function\n"
    "cuda_emu_fiber_swap:\n"
    "    pushq %rbp\n"
    "    pushq %rbx\n"
    "    pushq %r12\n"
    "    pushq %r13\n"
    "    pushq %r14\n"
    "    pushq %r15\n"
    "    subq $8, %rsp\n"
    "    stmxcsr (%rsp)\n"
    "    fnstcw 4(%rsp)\n"
    "    movq %rsp, (%rdi)\n"
    "    movq %rsi, %rsp\n"
    "    ldmxcsr (%rsp)\n"
    "    fldcw 4(%rsp)\n"
    "    addq $8, %rsp\n"
    "    popq %r15\n"
    "    popq %r14\n"
    "    popq %r13\n"
    "    popq %r12\n"
    "    popq %rbx\n"
    "    popq %rbp\n"
    "    ret\n"
    ".size cuda_emu_fiber_swap, .-cuda_emu_fiber_swap\n");

namespace {
constexpr size_t kSavedSlots = 7; /* control words, r15 .. rbp */
}

void cuda_emu::fiber_context_init(fiber_context* to, char* stack, size_t size, void (*entry)()) {
    // The entry starts as if called: its return address (none: it never returns) on a
    // 16-byte boundary, so the stack pointer is 8 past one.
    const uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + size) & ~uintptr_t{15};
    uint64_t* sp = reinterpret_cast<uint64_t*>(top - 8) - kSavedSlots - 1;
    memset(sp, 0, (kSavedSlots + 2) * sizeof(uint64_t));
    uint32_t mxcsr;
    uint16_t fpucw;
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fpucw));
    memcpy(reinterpret_cast<char*>(sp), &mxcsr, 4);
    memcpy(reinterpret_cast<char*>(sp) + 4, &fpucw, 2);
    sp[kSavedSlots] = reinterpret_cast<uint64_t>(entry);
    to->sp = sp;
}

#elif defined(__aarch64__)
/* AAPCS64: x19-x29, the link register and the low halves of v8-v15, in 160 bytes (a
 * multiple of 16, as sp must stay). */
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".globl cuda_emu_fiber_swap\n"
    ".hidden cuda_emu_fiber_swap\n"
    ".type cuda_emu_fiber_swap, %function\n"
    "cuda_emu_fiber_swap:\n"
    "    sub sp, sp, #160\n"
    "    stp x19, x20, [sp, #0]\n"
    "    stp x21, x22, [sp, #16]\n"
    "    stp x23, x24, [sp, #32]\n"
    "    stp x25, x26, [sp, #48]\n"
    "    stp x27, x28, [sp, #64]\n"
    "    stp x29, x30, [sp, #80]\n"
    "    stp d8, d9, [sp, #96]\n"
    "    stp d10, d11, [sp, #112]\n"
    "    stp d12, d13, [sp, #128]\n"
    "    stp d14, d15, [sp, #144]\n"
    "    mov x9, sp\n"
    "    str x9, [x0]\n"
    "    mov sp, x1\n"
    "    ldp x19, x20, [sp, #0]\n"
    "    ldp x21, x22, [sp, #16]\n"
    "    ldp x23, x24, [sp, #32]\n"
    "    ldp x25, x26, [sp, #48]\n"
    "    ldp x27, x28, [sp, #64]\n"
    "    ldp x29, x30, [sp, #80]\n"
    "    ldp d8, d9, [sp, #96]\n"
    "    ldp d10, d11, [sp, #112]\n"
    "    ldp d12, d13, [sp, #128]\n"
    "    ldp d14, d15, [sp, #144]\n"
    "    add sp, sp, #160\n"
    "    ret\n"
    ".size cuda_emu_fiber_swap, .-cuda_emu_fiber_swap\n");

namespace {
constexpr size_t kFrameBytes = 160;
constexpr size_t kLinkSlot = 11; /* x30's 8-byte slot in the frame */
}  // namespace

void cuda_emu::fiber_context_init(fiber_context* to, char* stack, size_t size, void (*entry)()) {
    const uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + size) & ~uintptr_t{15};
    uint64_t* sp = reinterpret_cast<uint64_t*>(top - kFrameBytes);
    memset(sp, 0, kFrameBytes);
    sp[kLinkSlot] = reinterpret_cast<uint64_t>(entry);
    to->sp = sp;
}

#else

void cuda_emu::fiber_context_init(fiber_context* to, char* stack, size_t size, void (*entry)()) {
    getcontext(&to->uc);
    to->uc.uc_stack.ss_sp = stack;
    to->uc.uc_stack.ss_size = size;
    to->uc.uc_link = nullptr;
    makecontext(&to->uc, entry, 0);
}

#endif

void cuda_emu::fiber_context_switch(fiber_context* from, fiber_context* to) {
#if CUDA_EMU_FIBER_UCONTEXT
    swapcontext(&from->uc, &to->uc);
#else
    cuda_emu_fiber_swap(&from->sp, to->sp);
#endif
}
