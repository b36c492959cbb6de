#!/usr/bin/env python3
"""Reports the C, C++ and CUDA functions over 150 lines and the files over 800 lines under
the given paths (issue 33's size rule). Exit status 1 when it finds any, else 0.

  check_sizes.py [--function-lines N] [--file-lines N] [--exempt-file FILE]... PATH...

A function is a brace block at file, namespace, class or struct level whose header ends in
a parameter list (with qualifiers such as const, noexcept, override or a trailing return
type); its length runs from the first line of its header to its closing brace. Comments,
string and character literals and preprocessor lines are skipped when matching braces.
An --exempt-file is held to the function limit only (the CUDA emulator, one file by
design: tests/sizes.cmake). Registered as the test `sizes`."""
import argparse
import os
import re
import sys

SUFFIXES = (".c", ".h", ".cpp", ".hpp", ".cc", ".cu", ".cuh")
CONTROL = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignof"}
SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b[^;(){}]*$")


def blank_code(text):
    """The text with comments, literals and preprocessor lines turned into spaces (newlines
    kept), so braces and parentheses can be matched and lines still counted."""
    out, i, n = [], 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            j = i
            while j < n and (text[j] != "\n" or text[j - 1] == "\\"):
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c in " \t":
            out.append(c)
            i += 1
            continue
        line_start = c == "\n"
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            # A digit separator (1'000) is not a character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and j < n and text[j] != c:
                out.append(" ")
                i += 1
                continue
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(code):
    """(name, first line, last line) of every function body in blanked code."""
    found = []

    def scan(start, end):
        i, head_start = start, start
        while i < end:
            c = code[i]
            if c in ";}":
                head_start = i + 1
            elif c == "{":
                close = match_brace(i)
                head = code[head_start:i]
                flat = " ".join(head.split())
                if SCOPE.search(flat) and "(" not in flat.split("{")[-1].rsplit(")", 1)[-1]:
                    scan(i + 1, close)  # namespace, class or struct: look inside
                else:
                    name = function_name(flat)
                    if name:
                        first = head_start + len(head) - len(head.lstrip())
                        found.append((name, code.count("\n", 0, first) + 1,
                                      code.count("\n", 0, close) + 1))
                i, head_start = close + 1, close + 1
                continue
            i += 1

    def match_brace(i):
        depth = 0
        for j in range(i, len(code)):
            if code[j] == "{":
                depth += 1
            elif code[j] == "}":
                depth -= 1
                if depth == 0:
                    return j
        return len(code) - 1

    scan(0, len(code))
    return found


def function_name(head):
    """The function's name when `head` (the text before a '{') ends a function header."""
    head = re.sub(r"\s*(->\s*[\w:<>,\s*&]+)$", "", head)  # trailing return type
    head = re.sub(r"(\s*\b(const|noexcept|override|final|volatile|mutable)\b|\s*&&?)*$", "", head)
    # A constructor's initializer list: cut it at the ':' that follows the parameters.
    m = re.search(r"\)\s*:\s*[\w:]+\s*[({]", head)
    if m:
        head = head[: m.start() + 1]
    if not head.endswith(")"):
        return None
    depth, k = 0, len(head) - 1
    while k >= 0:
        depth += {")": 1, "(": -1}.get(head[k], 0)
        if depth == 0:
            break
        k -= 1
    m = re.search(r"([~\w:]+|operator\s*\S+)\s*$", head[:k])
    if not m or m.group(1).split("::")[-1] in CONTROL or "=" in head[:k].split("(")[0][-3:]:
        return None
    return m.group(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--function-lines", type=int, default=150)
    ap.add_argument("--file-lines", type=int, default=800)
    ap.add_argument("--exempt-file", action="append", default=[],
                    help="a file held to the function limit only")
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    files = []
    for p in args.paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files += [os.path.join(root, f) for f in names if f.endswith(SUFFIXES)]
        else:
            files.append(p)
    exempt = {os.path.realpath(p) for p in args.exempt_file}
    over = 0
    for path in sorted(files):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if lines > args.file_lines and os.path.realpath(path) not in exempt:
            print(f"{path}: {lines} lines (file limit {args.file_lines})")
            over += 1
        for name, first, last in functions(blank_code(text)):
            if last - first + 1 > args.function_lines:
                print(f"{path}:{first}: {name}: {last - first + 1} lines "
                      f"(function limit {args.function_lines})")
                over += 1
    print(f"check_sizes: {len(files)} files, {over} over the limits")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
