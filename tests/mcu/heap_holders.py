#!/usr/bin/env python3
"""Which functions hold the heap at the end of a traced run of the MCU harness.

    heap_holders.py RUN.log IMAGE.elf [ADDR2LINE]

RUN.log is the image's semihosting output built with MCU_TRACE_ALLOC_MIN > 0
(scripts/test_mcu.sh: CVML_MCU_TRACE_ALLOC=BYTES): "mcu-alloc BYTES CALLER BLOCK" and
"mcu-free BYTES BLOCK" lines, up to the "mcu-run" line. Prints the traced blocks still
live when the run ended, bytes per calling function, largest first.
"""
import collections
import re
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    log, elf = sys.argv[1], sys.argv[2]
    addr2line = sys.argv[3] if len(sys.argv) > 3 else "arm-none-eabi-addr2line"
    live = {}
    with open(log) as f:
        for line in f:
            if line.startswith("mcu-run"):
                break
            m = re.match(r"mcu-alloc (\d+) (0x[0-9a-f]+) (0x[0-9a-f]+)", line)
            if m:
                live[m.group(3)] = (int(m.group(1)), int(m.group(2), 16) & ~1)
                continue
            m = re.match(r"mcu-free \d+ (0x[0-9a-f]+)", line)
            if m:
                live.pop(m.group(1), None)
    by_caller = collections.Counter()
    blocks = collections.Counter()
    for size, caller in live.values():
        by_caller[caller] += size
        blocks[caller] += 1
    for caller, size in by_caller.most_common():
        name = subprocess.run([addr2line, "-f", "-C", "-e", elf, hex(caller)],
                              capture_output=True, text=True).stdout.split("\n")[0]
        print("      %8d bytes in %3d blocks from %s" % (size, blocks[caller], name))


if __name__ == "__main__":
    main()
