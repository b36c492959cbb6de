#!/usr/bin/env python3
"""Bytes of one library's code in a linked image, from the GNU ld map file.

    code_size.py IMAGE.map [LIBRARY]     (LIBRARY: libcvml.a by default)

Prints `text T rodata R`: the sizes of the .text* and .rodata* input sections that the
link kept from LIBRARY's members (sections dropped by --gc-sections are not counted).
"""
import re
import sys


def kept_sections(lines):
    """Yields (section name, size, input file) for the input sections the link kept."""
    in_memory_map = False
    pending = None
    for line in lines:
        if line.startswith("Linker script and memory map"):
            in_memory_map = True
            continue
        if not in_memory_map:
            continue
        # An input section is " .name  0xADDR  0xSIZE file", or " .name" alone with the
        # address, size and file on the next line when the name is long.
        m = re.match(r"^ (\.\S+)\s*$", line)
        if m:
            pending = m.group(1)
            continue
        m = re.match(r"^ (\.\S+)?\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
        name = (m.group(1) if m and m.group(1) else pending) if m else None
        pending = None
        if m and name:
            yield name, int(m.group(3), 16), m.group(4).strip()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    library = sys.argv[2] if len(sys.argv) > 2 else "libcvml.a"
    text = rodata = 0
    with open(sys.argv[1]) as f:
        for name, size, source in kept_sections(f):
            if "%s(" % library not in source:
                continue
            if name == ".text" or name.startswith(".text."):
                text += size
            elif name == ".rodata" or name.startswith(".rodata."):
                rodata += size
    print("text %d rodata %d" % (text, rodata))


if __name__ == "__main__":
    main()
