#!/bin/sh
# Fails when a static archive needs anything from the C++ runtime: operator new/delete,
# the exception ABI (__cxa_*, __gxx_personality*), or any std:: symbol. The core must
# link with a C compiler and -lm -lpthread -ldl alone (docs/architecture.md, "The C++ dialect of the core").
#
# usage: check_no_cxx_runtime.sh ARCHIVE [NM]
set -eu
archive=${1:?usage: check_no_cxx_runtime.sh ARCHIVE [NM]}
nm_tool=${2:-nm}
[ -f "$archive" ] || { echo "check_no_cxx_runtime: no archive '$archive'" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Symbols one member uses and another defines are internal to the archive.
"$nm_tool" -u "$archive" | awk 'NF == 2 && $1 == "U" {print $2} NF == 1 && $1 !~ /:$/ {print $1}' \
    | sort -u > "$tmp/undefined"
"$nm_tool" --defined-only "$archive" | awk 'NF >= 3 {print $3}' | sort -u > "$tmp/defined"
comm -23 "$tmp/undefined" "$tmp/defined" > "$tmp/external"

# Itanium mangling: _Znw/_Zna = operator new/new[], _Zdl/_Zda = delete/delete[];
# St = ::std::, and Sa/Sb/Ss/Si/So/Sd abbreviate std::allocator, basic_string,
# string, istream, ostream, iostream. Any other C++ name left unresolved would need a
# C++ library too, so every external _Z symbol fails.
grep -E '^(_Znw|_Zna|_Zdl|_Zda|__cxa_|__gxx_personality|_Z)' "$tmp/external" > "$tmp/bad" || true
if [ -s "$tmp/bad" ]; then
    count=$(wc -l < "$tmp/bad")
    std=$(grep -cE '^_Z.*(St|S[absiod])' "$tmp/bad" || true)
    echo "check_no_cxx_runtime: $archive needs $count C++ runtime symbol(s) ($std std::):" >&2
    if command -v c++filt >/dev/null 2>&1; then
        sed 's/^/  /' "$tmp/bad" | head -20 | while read -r s; do
            echo "  $s  ($(echo "$s" | c++filt))" >&2
        done
    else
        sed 's/^/  /' "$tmp/bad" | head -20 >&2
    fi
    exit 1
fi
echo "check_no_cxx_runtime: $archive needs no C++ runtime ($(wc -l < "$tmp/external") external C symbols)"
