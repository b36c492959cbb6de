/* The system calls newlib needs on this bare-metal target: the heap (_sbrk, with its
 * high-water mark), the process's end, and console output through semihosting. There is
 * no file system: the library's file functions are linked (cvml_graph_load_file) but
 * fail here, and the harness loads its model from memory. No clock either (_times
 * fails, so profiling times read 0). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/times.h>

#include "memory_stats.h"
#include "semihosting.h"

extern char __heap_start[];
extern char __heap_end[];

static char* g_break = __heap_start;
static char* g_break_high = __heap_start;

void* _sbrk(ptrdiff_t increment) {
    char* old = g_break;
    if (increment > __heap_end - g_break || increment < __heap_start - g_break) {
        errno = ENOMEM;
        return (void*)-1;
    }
    g_break += increment;
    if (g_break > g_break_high) g_break_high = g_break;
    return old;
}

size_t heap_high_water(void) {
    return (size_t)(g_break_high - __heap_start);
}

void _exit(int status) {
    semihost_exit(status);
}

int _kill(int pid, int sig) {
    (void)pid;
    (void)sig;
    errno = EINVAL;
    return -1;
}

int _getpid(void) {
    return 1;
}

int _write(int fd, const char* data, int length) {
    if (fd != 1 && fd != 2) {
        errno = EBADF;
        return -1;
    }
    char chunk[65];
    for (int done = 0; done < length;) {
        int n = length - done < 64 ? length - done : 64;
        for (int i = 0; i < n; ++i) chunk[i] = data[done + i] ? data[done + i] : ' ';
        chunk[n] = 0;
        semihost_write(chunk);
        done += n;
    }
    return length;
}

int _read(int fd, char* data, int length) {
    (void)fd;
    (void)data;
    (void)length;
    errno = EBADF;
    return -1;
}

int _open(const char* path, int flags, ...) {
    (void)path;
    (void)flags;
    errno = ENOSYS;
    return -1;
}

int _close(int fd) {
    (void)fd;
    errno = EBADF;
    return -1;
}

int _lseek(int fd, int offset, int whence) {
    (void)fd;
    (void)offset;
    (void)whence;
    errno = ESPIPE;
    return -1;
}

int _fstat(int fd, struct stat* st) {
    (void)fd;
    st->st_mode = S_IFCHR;
    return 0;
}

int _isatty(int fd) {
    return fd <= 2;
}

clock_t _times(struct tms* t) {
    (void)t;
    errno = ENOSYS;
    return (clock_t)-1;
}
