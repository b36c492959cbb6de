#include "semihosting.h"

#include <stdint.h>

#include <string.h>

enum {
    SYS_OPEN = 0x01,
    SYS_CLOSE = 0x02,
    SYS_WRITE = 0x05,         /* write bytes to a handle; returns the bytes not written */
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

int semihost_write_file(const char* path, const void* data, unsigned long size) {
    /* Mode 5 is "wb" in the semihosting specification's fopen mode table. */
    uint32_t open_args[3] = {(uint32_t)(uintptr_t)path, 5, (uint32_t)strlen(path)};
    const int handle = semihost_call(SYS_OPEN, open_args);
    if (handle == -1) return -1;
    uint32_t write_args[3] = {(uint32_t)handle, (uint32_t)(uintptr_t)data, (uint32_t)size};
    const int left = semihost_call(SYS_WRITE, write_args);
    uint32_t close_args[1] = {(uint32_t)handle};
    const int closed = semihost_call(SYS_CLOSE, close_args);
    return left == 0 && closed == 0 ? 0 : -1;
}

void semihost_exit(int status) {
    uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)status};
    semihost_call(SYS_EXIT_EXTENDED, block);
    for (;;) {
    }
}
