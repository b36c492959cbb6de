#!/bin/sh
# Compiles a C example with the C compiler alone and links it against the static
# library with only -lm -lpthread -ldl (no libstdc++), then runs it.
#
# usage: c_static_link.sh CC ARCHIVE INCLUDE_DIR SOURCE WORKDIR [ARGS...]
set -eu
cc=$1 archive=$2 include=$3 source=$4 work=$5
shift 5
mkdir -p "$work"
exe="$work/$(basename "$source" .c)_static"
"$cc" -std=c99 -Wall -Wextra -Werror -pedantic -I"$include" "$source" "$archive" \
    -lm -lpthread -ldl -o "$exe"
"$exe" "$@"
