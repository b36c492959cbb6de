#!/bin/sh
# Runs every command the user documentation shows, as written: each ```sh block of
# README.md, docs/cli.md, docs/convert.md, examples/*/README.md, python/README.md and
# tools/bench/README.md, statement by statement in order, in a fresh copy of the tree (the files git tracks,
# plus new ones not ignored), with HOME a scratch directory and no CVML_* variables.
#
# The copy uses the build under test as its build/release. Commands that would
# rebuild it (scripts/run_example.sh, `cmake -S . -B build/release`, `cmake --build`)
# run only with CVML_DOCS_TEST_FULL=1, which builds the copy from scratch (minutes);
# ./scripts/test.sh never runs (this test is one of its steps). Commands that need what
# the machine lacks (Go, numpy, ../shared) are skipped with the reason.
# usage: docs_test.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -eu
src=$(cd "$1" && pwd) build=$(cd "$2" && pwd) work=$3
full=${CVML_DOCS_TEST_FULL:-0}
rm -rf "$work" && mkdir -p "$work/home"
work=$(cd "$work" && pwd)
fresh="$work/fresh/cvm-lite"
mkdir -p "$fresh"

# ---- the fresh copy: tracked and new files, a sibling ../shared, the build
if git -C "$src" rev-parse --git-dir > /dev/null 2>&1; then
    git -C "$src" ls-files -z -co --exclude-standard | (cd "$src" && xargs -0 tar cf -) |
        (cd "$fresh" && tar xf -)
else
    (cd "$src" && tar cf - --exclude=./build .) | (cd "$fresh" && tar xf -)
fi
[ -d "$src/../shared" ] && ln -s "$(cd "$src/../shared" && pwd)" "$work/fresh/shared"
mkdir -p "$fresh/build"
[ "$full" = 1 ] || ln -s "$build" "$fresh/build/release"

# CMake (3.17+) takes its compiler launchers from the environment, so the README's
# build commands, unchanged, can use the caller's ccache in a full run; with
# CCACHE_BASEDIR above both trees, the copy's relative paths hit the same entries.
cache_env=
if [ "$full" = 1 ] && [ -n "${CCACHE_DIR:-}" ] && command -v ccache > /dev/null 2>&1; then
    cache_env="CCACHE_DIR=$CCACHE_DIR CCACHE_BASEDIR=${CCACHE_BASEDIR:-/} \
CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache"
fi

# ---- what this machine cannot run
have_go=0 have_numpy=0 have_shared=0 have_convert=0
command -v go > /dev/null 2>&1 && have_go=1
/usr/bin/python3 -c 'import numpy' 2> /dev/null && have_numpy=1
[ -d "$work/fresh/shared/models" ] && have_shared=1
# The converter's examples need onnx and the Fashion-MNIST data set.
/usr/bin/python3 -c 'import numpy, onnx' 2> /dev/null &&
    [ -f /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz ] && have_convert=1

# skip_reason STATEMENT: why the statement is not run here ("" to run it).
skip_reason() {
    case "$1" in
    *scripts/test.sh*) echo "the whole suite (this test is one of its steps)"; return ;;
    *"git worktree add"* | *" /tmp/prev"* | *vs_build.sh*)
        echo "builds another commit's tree to time against (a measurement, not a check)"
        return
        ;;
    *scripts/run_example.sh* | "cmake -S . -B build/release"* | "cmake --build build/release"*)
        [ "$full" = 1 ] || echo "rebuilds the tree (CVML_DOCS_TEST_FULL=1 runs it)"
        return
        ;;
    esac
    case "$1" in *"go build"* | *cvmlrun*)
        [ "$have_go" = 1 ] || echo "no Go toolchain (Debian: golang-go)"
        return
        ;;
    esac
    case "$1" in *make_data.py* | *cvml.convert* | *cvml-convert* | */tmp/fmnist* | */tmp/convert_*)
        [ "$have_convert" = 1 ] ||
            echo "no onnx or Fashion-MNIST data for /usr/bin/python3 (scripts/install_deps.sh)"
        return
        ;;
    esac
    case "$1" in *python3*)
        [ "$have_numpy" = 1 ] || echo "no numpy for /usr/bin/python3 (scripts/install_deps.sh)"
        return
        ;;
    esac
    case "$1" in *make_tiny_convnet* | */tmp/tiny_convnet.params* | *shared/models*)
        [ "$have_shared" = 1 ] && [ "$have_numpy" = 1 ] || echo "needs ../shared and numpy"
        return
        ;;
    esac
}

# statements DOC: the doc's ```sh blocks, one shell statement at a time, each
# followed by a line "#--end--". A statement is a line with its continuations: lines
# ending in '\', the body of a here-document, the rest of an open "..." string.
statements() {
    awk '/^```(sh|bash)[ \t]*$/ {inside = 1; next} /^```/ {inside = 0; next} inside' "$1" |
        awk '
        function quotes(s,   t) { t = s; return gsub(/"/, "", t) }
        {
            print
            if (heredoc != "") { if ($0 == heredoc) { heredoc = ""; print "#--end--" } next }
            if (open_quote) { if (quotes($0) % 2) open_quote = 0; else next }
            else if (quotes($0) % 2) { open_quote = 1; next }
            if (match($0, /<<-?[ \t]*\047?[A-Za-z_]+\047?/)) {
                heredoc = substr($0, RSTART, RLENGTH); gsub(/<<-?[ \t]*|\047/, "", heredoc); next
            }
            if (/\\$/) next
            print "#--end--"
        }'
}

docs=$(cd "$fresh" && for doc in README.md docs/cli.md docs/convert.md examples/*/README.md python/README.md \
    tools/bench/README.md; do [ ! -f "$doc" ] || echo "$doc"; done)
failures=0 ran=0 skipped=0
for doc in $docs; do
    script="$work/$(echo "$doc" | tr / _).sh"
    echo "set -e" > "$script"
    statements "$fresh/$doc" > "$work/lines"
    stmt=
    while IFS= read -r line; do
        if [ "$line" != "#--end--" ]; then
            stmt="$stmt$line
"
            continue
        fi
        why=$(skip_reason "$stmt")
        if [ -n "$why" ]; then
            # awk, not sed: a reason may hold a path, whose '/' would end sed's pattern
            printf '%s' "$stmt" | awk -v prefix="# skipped ($why): " '{print prefix $0}' >> "$script"
            skipped=$((skipped + 1))
        else
            printf '%s' "$stmt" >> "$script"
            case "$stmt" in '' | '#'*) ;; *) ran=$((ran + 1)) ;; esac
        fi
        stmt=
    done < "$work/lines"
    echo "==== $doc"
    grep '^# skipped' "$script" || true
    # A user's shell: HOME scratch, the system's PATH, nothing of ours in the environment
    # (but the compiler cache, when the full run rebuilds and the caller has one).
    if ! (cd "$fresh" && env -i HOME="$work/home" PATH=/usr/local/bin:/usr/bin:/bin \
        TMPDIR="${TMPDIR:-/tmp}" $cache_env bash -x "$script") > "$script.out" 2>&1; then
        tail -25 "$script.out" >&2
        echo "FAIL: a command of $doc failed (script: $script)" >&2
        failures=$((failures + 1))
    fi
done
# Every "FORMAT.md §N" the tree cites names a section of docs/FORMAT.md.
cited=$(cd "$fresh" && grep -rhoE 'FORMAT\.md (§|)[0-9]+(\.[0-9]+)?' api source docs tools tests \
    2> /dev/null | sed 's/.* §*//' | sort -u)
for n in $cited; do
    grep -qE "^#+ $n\.? " "$fresh/docs/FORMAT.md" ||
        { echo "FAIL: FORMAT.md §$n is cited but docs/FORMAT.md has no section $n" >&2; failures=$((failures + 1)); }
done
echo "docs_test: FORMAT.md sections cited: $(echo $cited)"

echo "docs_test: $ran commands run, $skipped skipped, $failures document(s) failed"
[ "$failures" = 0 ]
