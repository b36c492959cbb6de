#!/usr/bin/env sh
# Every C, C++ and CUDA source of the repository is formatted with the repo's
# .clang-format: `clang-format --dry-run --Werror` over the files git tracks (or, outside
# a git checkout, every such file under api/ source/ tools/ tests/ examples/).
#   check_format.sh CLANG_FORMAT SOURCE_DIR
set -eu
clang_format=$1
cd "$2"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files '*.c' '*.h' '*.cpp' '*.cu' '*.cuh')
else
  files=$(find api source tools tests examples -name '*.c' -o -name '*.h' -o -name '*.cpp' \
          -o -name '*.cu' -o -name '*.cuh')
fi
# shellcheck disable=SC2086
"$clang_format" --dry-run --Werror $files
echo "check_format: $(echo "$files" | wc -l) files formatted"
