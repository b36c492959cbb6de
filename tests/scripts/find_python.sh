# Sourced by the Python test runners: find_python MODULE... sets $py to the first
# python3 (Debian's /usr/bin/python3 first) that imports every MODULE, or to "".
find_python() {
    py=
    for candidate in /usr/bin/python3 python3; do
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c "import $(echo "$@" | tr ' ' ',')" 2>/dev/null; then
            py=$candidate
            return 0
        fi
    done
    return 1
}

# install_into BUILD_DIR WORK_DIR: a fresh `cmake --install` of the build into
# WORK_DIR/prefix (its log in WORK_DIR/install.log); sets $prefix.
install_into() {
    rm -rf "$2" && mkdir -p "$2"
    prefix="$2/prefix"
    cmake --install "$1" --prefix "$prefix" >"$2/install.log"
}
