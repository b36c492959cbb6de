/* Arm semihosting (the debugger's, here qemu's, services through `bkpt 0xab`): the
 * harness's only output and its exit status. qemu needs
 * -semihosting-config enable=on,target=native. */
#pragma once

/* Writes a NUL-terminated string to the host's console. */
void semihost_write(const char* text);

/* Writes `size` bytes to the host file `path` (created or truncated). 0 on success. */
int semihost_write_file(const char* path, const void* data, unsigned long size);

/* Ends the emulation; qemu exits with `status`. */
void semihost_exit(int status) __attribute__((noreturn));
