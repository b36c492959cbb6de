# Plain C tests of the ABI: cvml.h must compile as strict C99 and work from C.
add_executable(cvml_c_api_test ${CMAKE_CURRENT_SOURCE_DIR}/c/api_test.c)
set_target_properties(cvml_c_api_test PROPERTIES C_STANDARD 99 C_EXTENSIONS OFF)
target_compile_options(cvml_c_api_test PRIVATE -Wall -Wextra -pedantic -Werror)
target_link_libraries(cvml_c_api_test PRIVATE cvml)
add_test(NAME c_api COMMAND cvml_c_api_test)

# The header alone, as C99 and as C++ (-pedantic, warnings are errors).
add_library(cvml_header_c99 OBJECT ${CMAKE_CURRENT_SOURCE_DIR}/c/header_only.c)
set_target_properties(cvml_header_c99 PROPERTIES C_STANDARD 99 C_EXTENSIONS OFF)
target_compile_options(cvml_header_c99 PRIVATE -Wall -Wextra -pedantic -Werror)
target_include_directories(cvml_header_c99 PRIVATE ${PROJECT_SOURCE_DIR}/api)
add_library(cvml_header_cxx OBJECT ${CMAKE_CURRENT_SOURCE_DIR}/c/header_only.cpp)
target_compile_options(cvml_header_cxx PRIVATE -Wall -Wextra -pedantic -Werror)
target_include_directories(cvml_header_cxx PRIVATE ${PROJECT_SOURCE_DIR}/api)

# init → release → init leaks nothing.
find_program(VALGRIND valgrind)
if(VALGRIND)
  add_test(NAME c_api_valgrind COMMAND ${VALGRIND} --error-exitcode=9 --leak-check=full
           --errors-for-leak-kinds=definite,indirect $<TARGET_FILE:cvml_c_api_test>)
  set_tests_properties(c_api_valgrind PROPERTIES LABELS valgrind)
endif()
