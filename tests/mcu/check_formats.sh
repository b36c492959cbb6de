#!/usr/bin/env sh
# The core's printf formats must print right on the microcontroller targets too
# (docs/embedded.md): the newlib of Debian's gcc-arm-none-eabi has no C99 formats, so a
# size_t is printed with "%" CVML_PRIuSIZE (utility/platform.h), not %zu, %zd or %zx.
# (int32_t needs PRId32: there the cross build's -Werror=format catches it.)
#   check_formats.sh SOURCE_DIR
set -eu
cd "$1"
# The CUDA plugin runs on a host only.
found=$(grep -rnE '%[-+ #0-9.]*z[diouxX]' api source --include='*.c' --include='*.cpp' \
          --include='*.h' | grep -v '^source/device/cuda/' | grep -v '^source/utility/platform.h:' || true)
if [ -n "$found" ]; then
  echo "check_formats: use \"%\" CVML_PRIuSIZE for size_t (newlib on Cortex-M prints %zu as 'zu'):"
  echo "$found"
  exit 1
fi
echo "check_formats: no C99 size_t formats in api/ and source/"
