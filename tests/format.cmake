# Formatting is part of the suite: a file that clang-format would change fails `format`.
# Skipped (with a message) where clang-format is absent; scripts/install_deps.sh installs it.
find_program(CVML_CLANG_FORMAT NAMES clang-format clang-format-14)
if(CVML_CLANG_FORMAT)
  add_test(NAME format COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/check_format.sh
           ${CVML_CLANG_FORMAT} ${PROJECT_SOURCE_DIR})
else()
  message(STATUS "format check: skipped, clang-format not found")
endif()
