#!/bin/sh
# Proves check_no_cxx_runtime.sh can fail: an archive holding a C++ object that uses
# std::string must be refused (naming a std:: symbol), and one holding only a C object
# must pass.
#
# usage: check_scanner_selftest.sh CXX CC AR NM WORKDIR
set -eu
cxx=$1 cc=$2 ar=$3 nm_tool=$4 work=$5
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
cat > "$work/planted.cpp" <<'CPP'
#include <string>
int planted_length(const char* s) { std::string copy(s); return static_cast<int>(copy.size()); }
CPP
cat > "$work/clean.c" <<'C'
#include <string.h>
int clean_length(const char* s) { return (int)strlen(s); }
C
"$cxx" -c "$work/planted.cpp" -o "$work/planted.o"
"$cc" -c "$work/clean.c" -o "$work/clean.o"
"$ar" rcs "$work/planted.a" "$work/planted.o" "$work/clean.o"
"$ar" rcs "$work/clean.a" "$work/clean.o"

if "$here/check_no_cxx_runtime.sh" "$work/planted.a" "$nm_tool" 2> "$work/planted.err"; then
    echo "FAIL: the scanner accepted an archive that uses std::string" >&2
    exit 1
fi
grep -q 'std::' "$work/planted.err" || { echo "FAIL: the scanner did not name a std:: symbol" >&2; cat "$work/planted.err" >&2; exit 1; }
"$here/check_no_cxx_runtime.sh" "$work/clean.a" "$nm_tool" || { echo "FAIL: the scanner refused a C-only archive" >&2; exit 1; }
echo "scanner self-test passed: planted std:: symbol caught, C archive accepted"
