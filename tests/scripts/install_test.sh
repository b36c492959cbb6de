#!/bin/sh
# Installs the build into a temporary prefix and builds a program against the
# installed tree twice: with the CMake package (shared and static targets) and with
# pkg-config; then runs each.
# usage: install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR CC
set -eu
build=$1 src=$2 work=$3 cc=$4 with_plugins=${5:-1}
prefix="$work/prefix"
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"

fail() { echo "install_test: $*" >&2; exit 1; }
[ -f "$prefix/include/cvml/cvml.h" ] || fail "no include/cvml/cvml.h"
libdir=$(dirname "$(find "$prefix" -name libcvml.a | head -1)")
[ -n "$libdir" ] && [ -f "$libdir/libcvml.a" ] || fail "no libcvml.a"
ls "$libdir"/libcvml.so* > /dev/null 2>&1 || fail "no libcvml.so"
[ -d "$libdir/cvml/plugins" ] || fail "no plugin directory lib/cvml/plugins"
[ -f "$libdir/cmake/cvml/cvmlConfig.cmake" ] || fail "no CMake package"
[ -f "$libdir/pkgconfig/cvml.pc" ] || fail "no cvml.pc"
if [ -f "$build/tools/cvml" ]; then
    [ -x "$prefix/bin/cvml" ] || fail "no bin/cvml"
    "$prefix/bin/cvml" version
fi

echo "== CMake package"
cmake -S "$src/tests/install" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_C_COMPILER="$cc" > "$work/cmake.log" || { cat "$work/cmake.log"; fail "configure failed"; }
cmake --build "$work/cmake" > "$work/cmake-build.log" || { cat "$work/cmake-build.log"; fail "build failed"; }
"$work/cmake/consumer_shared"
"$work/cmake/consumer_static"

echo "== C99 plugin built against the installed package"
# The installed header alone, strict C99, with nothing but the include directory.
"$cc" -std=c99 -pedantic -Wall -Wextra -Werror -c "$src/tests/install/plugin_header.c" \
    -I"$prefix/include/cvml" -o "$work/plugin_header.o"
# A library built without the plugin loader (CVML_WITH_PLUGINS=OFF, the embedded
# profile) compiles the plugin but cannot load it.
if [ -x "$prefix/bin/cvml" ] && [ "$with_plugins" = 1 ]; then
    sh "$src/tests/scripts/c_plugin_test.sh" "$prefix/bin/cvml" "$work/cmake/plugins" \
        "$src/tests/conformance/cases" "$work/c_plugin" || fail "the C plugin's cases failed"
fi

echo "== pkg-config"
command -v pkg-config > /dev/null || fail "pkg-config not found"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
pkg-config --exists cvml || fail "pkg-config cannot find cvml"
"$cc" -std=c99 -Wall -Werror "$src/tests/install/consumer.c" $(pkg-config --cflags --libs cvml) \
    -o "$work/consumer_pc"
LD_LIBRARY_PATH="$libdir" "$work/consumer_pc"
# Static through pkg-config: the archive plus Libs.private.
"$cc" -std=c99 -Wall -Werror "$src/tests/install/consumer.c" $(pkg-config --cflags cvml) \
    "$libdir/libcvml.a" $(pkg-config --static --libs-only-l cvml | sed 's/-lcvml//') \
    -o "$work/consumer_pc_static"
"$work/consumer_pc_static"
# The C99 plugin with pkg-config's flags alone: it links nothing of libcvml.
mkdir -p "$work/pc_plugin"
"$cc" -std=c99 -pedantic -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden \
    "$src/tests/plugins/c_plugin.c" $(pkg-config --cflags cvml) -Wl,--no-undefined \
    -o "$work/pc_plugin/libcvml_cplugin.so"
if [ -x "$prefix/bin/cvml" ] && [ "$with_plugins" = 1 ]; then
    relu="$src/tests/conformance/cases/009_relu"
    "$prefix/bin/cvml" run "$relu" --input "$relu/input.bin" --expect "$relu/output.bin" \
        --plugin "$work/pc_plugin/libcvml_cplugin.so" --device cplugin ||
        fail "the pkg-config build of the C plugin did not run"
fi
echo "install_test: passed"
