#!/usr/bin/env sh
# libcvml.so never links a CUDA library, and the CUDA plugin links the CUDA runtime
# statically (only the driver, libcuda, is needed where it runs).
#   check_cuda_linkage.sh READELF LIBCVML [PLUGIN]
set -eu
readelf=$1
core=$2
plugin=${3:-}
if "$readelf" -d "$core" | grep -iE 'NEEDED.*\[lib(cu|nv)'; then
  echo "check_cuda_linkage: $core needs a CUDA library" >&2
  exit 1
fi
echo "check_cuda_linkage: $core needs no CUDA library"
if [ -n "$plugin" ]; then
  if "$readelf" -d "$plugin" | grep -i 'NEEDED.*cudart'; then
    echo "check_cuda_linkage: $plugin links the CUDA runtime dynamically" >&2
    exit 1
  fi
  echo "check_cuda_linkage: $plugin links the CUDA runtime statically"
fi
