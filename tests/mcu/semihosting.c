#include "semihosting.h"

#include <stdint.h>

enum {
    SYS_WRITE0 = 0x04,        /* write a NUL-terminated string */
    SYS_EXIT_EXTENDED = 0x20, /* exit with a status (the 32-bit SYS_EXIT cannot) */
    ADP_STOPPED_APPLICATION_EXIT = 0x20026,
};

static int semihost_call(int operation, const void* argument) {
    register int r0 __asm__("r0") = operation;
    register const void* r1 __asm__("r1") = argument;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void semihost_write(const char* text) {
    semihost_call(SYS_WRITE0, text);
}

void semihost_exit(int status) {
    uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)status};
    semihost_call(SYS_EXIT_EXTENDED, block);
    for (;;) {
    }
}
