#!/bin/sh
# Compiles a C example with the C compiler alone and links it against the static
# library with only -lm -lpthread -ldl (no libstdc++), then runs it.
#
# With EXPECTED_JSON (the bundled model's expected.json, when present), the program's
# "output ..." line must carry the expected values.
# usage: c_static_link.sh CC ARCHIVE INCLUDE_DIR SOURCE WORKDIR [EXPECTED_JSON]
# CVML_LINK_EXTRA adds flags (a sanitized archive needs -fsanitize=...).
set -eu
cc=$1 archive=$2 include=$3 source=$4 work=$5 expected=${6:-}
mkdir -p "$work"
exe="$work/$(basename "$source" .c)_static"
# shellcheck disable=SC2086
"$cc" -std=c99 -Wall -Wextra -Werror -pedantic -I"$include" "$source" "$archive" \
    -lm -lpthread -ldl ${CVML_LINK_EXTRA:-} -o "$exe"
"$exe" > "$work/out"
cat "$work/out"
if [ -n "$expected" ] && [ -f "$expected" ]; then
    want=$(sed -n 's/.*"output": *\[\(.*\)\].*/\1/p' "$expected" | tr -d ',')
    grep -qx -- "output $want" "$work/out" || { echo "FAIL: want 'output $want'" >&2; exit 1; }
fi
