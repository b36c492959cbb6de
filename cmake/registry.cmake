# Tables generated from the source folders, instead of static constructors that a static
# link may drop. One generator serves every table: the operators and their aliases, the
# CPU kernels and the CUDA kernels (const tables of descriptors, in flash on a
# microcontroller), and the serializers and devices (registered at run time, since
# plugins add devices).
#
#   cvml_registry_discover(<var> DIR <dir> SYMBOL <pattern> [ONLY <names...>] [RECURSE])
#       Finds the C/C++/CUDA files of <dir> and reads them. A file NAME.ext registers iff
#       a line of it matches the regular expression <pattern> with @NAME@ replaced by
#       NAME (its descriptor or register symbol being defined, for example
#       `^extern const op_def op_def_@NAME@ =`); every other file is a shared helper. With ONLY,
#       registering files whose NAME is not listed are left out of the build, and so
#       are their helpers: a helper NAME_*.ext belongs to NAME (the longest such). Sets
#         <var>_NAMES     registering names kept, sorted
#         <var>_SOURCES   their files
#         <var>_SUPPORT   the helpers (RECURSE: also those of subfolders)
#         <var>_LEFT_OUT  registering names that ONLY dropped
#       Adding an operator is adding its file: the folder is globbed with
#       CONFIGURE_DEPENDS, so a new file re-runs the configure step.
#   cvml_registry_aliases(<var> <sources...>)
#       Sets <var> to the rows ("NAME SYMBOL") of the operator aliases the sources
#       define, one per line `CVML_OP_ALIAS(SYMBOL, "NAME", ...)` (operator/op_def.h).
#   cvml_registry_write_sorted(<output.cpp> INCLUDE <header> TYPE <type> TABLE <name>
#                              ROWS <"NAME SYMBOL"...> [LEFT_OUT <names...>])
#       writes a const table `const <type>* const <name>[]` of the descriptors SYMBOL,
#       sorted by NAME in strcmp order (looked up by binary search), and its length
#       `<name>_count`; stops on a NAME given twice. With LEFT_OUT (the operators), also
#       the names of the operators a CVML_OPERATORS build left out, so that loading a
#       model that needs one says so.
#   cvml_registry_add(KIND <kind> PREFIX <prefix> NAMES <names...>)
#       adds a group to the core's run-time registrations: every NAME defines
#       `int register_<prefix>_NAME(void)` and `int unregister_<prefix>_NAME(void)`.
#   cvml_registry_write(<output.cpp>)
#       writes the declarations and the table of run-time registrations, in the order
#       the groups were added (sorted within each group, so the order never depends on
#       the file system).
#   cvml_registry_write_table(<output> INCLUDE <header> DECL <pattern> ROW <pattern>
#                             TABLE <declaration> NAMES <names...>)
#       writes a NULL-terminated table of another shape (the CUDA kernels): DECL (a
#       declaration, without its semicolon: CMake would split the argument) and ROW
#       are lines with @NAME@ replaced by each name.

set_property(GLOBAL PROPERTY CVML_REGISTRY_ENTRIES "")

# Writes `text` to `path` only when it differs, so that a re-configure rebuilds nothing.
function(cvml_registry_write_if_changed path text)
  if(EXISTS "${path}")
    file(READ "${path}" old)
  else()
    set(old "")
  endif()
  if(NOT old STREQUAL text)
    file(WRITE "${path}" "${text}")
  endif()
endfunction()

function(cvml_registry_discover var)
  cmake_parse_arguments(ARG "RECURSE" "DIR;SYMBOL" "ONLY" ${ARGN})
  file(GLOB files CONFIGURE_DEPENDS "${ARG_DIR}/*.c" "${ARG_DIR}/*.cc" "${ARG_DIR}/*.cpp"
       "${ARG_DIR}/*.cu")
  list(SORT files)
  set(names "")
  set(sources "")
  set(support "")
  set(left_out "")
  foreach(src IN LISTS files)
    get_filename_component(name "${src}" NAME_WE)
    string(REPLACE "@NAME@" "${name}" symbol_re "${ARG_SYMBOL}")
    file(STRINGS "${src}" hits REGEX "${symbol_re}" LIMIT_COUNT 1)
    if(NOT hits)
      list(APPEND support "${src}")
      continue()
    endif()
    if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
      message(FATAL_ERROR "registry: '${src}' is not a valid registration name")
    endif()
    if(DEFINED ARG_ONLY AND NOT name IN_LIST ARG_ONLY)
      list(APPEND left_out "${name}")
      continue()
    endif()
    list(APPEND names "${name}")
    list(APPEND sources "${src}")
  endforeach()
  # A helper named OWNER_*.cpp belongs to the registering file OWNER (the longest such
  # name): it is left out with it (conv2d_gemm.cpp goes when conv2d.cpp does).
  set(kept_support "")
  foreach(src IN LISTS support)
    get_filename_component(helper "${src}" NAME_WE)
    set(owner "")
    foreach(name IN LISTS names left_out)
      string(LENGTH "${name}_" prefix_length)
      string(LENGTH "${owner}" owner_length)
      string(SUBSTRING "${helper}" 0 ${prefix_length} head)
      if(head STREQUAL "${name}_" AND prefix_length GREATER owner_length)
        set(owner "${name}")
      endif()
    endforeach()
    if(NOT owner OR owner IN_LIST names)
      list(APPEND kept_support "${src}")
    endif()
  endforeach()
  set(support ${kept_support})
  if(ARG_RECURSE)
    file(GLOB_RECURSE nested CONFIGURE_DEPENDS "${ARG_DIR}/*/*.c" "${ARG_DIR}/*/*.cc"
         "${ARG_DIR}/*/*.cpp")
    list(SORT nested)
    list(APPEND support ${nested})
  endif()
  set(${var}_NAMES "${names}" PARENT_SCOPE)
  set(${var}_SOURCES "${sources}" PARENT_SCOPE)
  set(${var}_SUPPORT "${support}" PARENT_SCOPE)
  set(${var}_LEFT_OUT "${left_out}" PARENT_SCOPE)
endfunction()

function(cvml_registry_add)
  cmake_parse_arguments(ARG "" "KIND;PREFIX" "NAMES" ${ARGN})
  set(names ${ARG_NAMES})
  list(SORT names)
  list(REMOVE_DUPLICATES names)
  foreach(name IN LISTS names)
    set_property(GLOBAL APPEND PROPERTY CVML_REGISTRY_ENTRIES "${ARG_KIND}|${ARG_PREFIX}|${name}")
  endforeach()
endfunction()

function(cvml_registry_aliases var)
  set(rows "")
  foreach(src IN LISTS ARGN)
    file(STRINGS "${src}" lines REGEX "^CVML_OP_ALIAS\\(")
    foreach(line IN LISTS lines)
      if(NOT line MATCHES "^CVML_OP_ALIAS\\(([A-Za-z0-9_]+), \"([^\"]+)\"")
        message(FATAL_ERROR "registry: '${src}': cannot read '${line}'")
      endif()
      list(APPEND rows "${CMAKE_MATCH_2} op_alias_${CMAKE_MATCH_1}")
    endforeach()
  endforeach()
  set(${var} "${rows}" PARENT_SCOPE)
endfunction()

function(cvml_registry_write_sorted output)
  cmake_parse_arguments(ARG "" "INCLUDE;TYPE;TABLE" "ROWS;LEFT_OUT" ${ARGN})
  # A space sorts before every character of a name, so the rows sort by name.
  set(rows ${ARG_ROWS})
  list(SORT rows)
  set(decls "")
  set(entries "")
  set(previous "")
  list(LENGTH rows count)
  foreach(row IN LISTS rows)
    string(REPLACE " " ";" parts "${row}")
    list(GET parts 0 name)
    list(GET parts 1 symbol)
    if(name STREQUAL previous)
      message(FATAL_ERROR "registry: '${name}' is defined twice (${ARG_TABLE})")
    endif()
    set(previous "${name}")
    string(APPEND decls "extern const ${ARG_TYPE} ${symbol};\n")
    string(APPEND entries "    &${symbol},\n")
  endforeach()
  if(count EQUAL 0)
    set(entries "    nullptr,\n")
  endif()
  set(text "/* Generated by cmake/registry.cmake from the source folders. Do not edit. */\n#include \"${ARG_INCLUDE}\"\n\n${decls}\n/* Sorted by name (strcmp): looked up by binary search. */\nconst ${ARG_TYPE}* const ${ARG_TABLE}[] = {\n${entries}};\nconst int32_t ${ARG_TABLE}_count = ${count};\n")
  if(DEFINED ARG_LEFT_OUT OR "LEFT_OUT" IN_LIST ARGN)
    set(left_out ${ARG_LEFT_OUT})
    list(SORT left_out)
    list(LENGTH left_out left_count)
    set(left_rows "")
    foreach(name IN LISTS left_out)
      string(APPEND left_rows "    \"${name}\",\n")
    endforeach()
    string(APPEND text "\n/* Operators this build left out (CVML_OPERATORS). */\nconst char* const cvml_left_out_operators[] = {\n${left_rows}    nullptr,\n};\nconst int32_t cvml_left_out_operator_count = ${left_count};\n")
  endif()
  cvml_registry_write_if_changed("${output}" "${text}")
endfunction()

function(cvml_registry_write output)
  get_property(entries GLOBAL PROPERTY CVML_REGISTRY_ENTRIES)
  set(decls "")
  set(rows "")
  list(LENGTH entries count)
  foreach(entry IN LISTS entries)
    string(REPLACE "|" ";" parts "${entry}")
    list(GET parts 0 kind)
    list(GET parts 1 prefix)
    list(GET parts 2 name)
    string(APPEND decls "int register_${prefix}_${name}(void);\nint unregister_${prefix}_${name}(void);\n")
    string(APPEND rows "    {\"${kind}\", \"${name}\", register_${prefix}_${name}, unregister_${prefix}_${name}},\n")
  endforeach()
  if(count EQUAL 0)
    set(rows "    {\"none\", \"none\", nullptr, nullptr},\n")
  endif()
  set(text "/* Generated by cmake/registry.cmake from the source folders. Do not edit. */\n#include \"module/registry.h\"\n\n${decls}\nconst registry_entry cvml_generated_registry[] = {\n${rows}};\nconst int cvml_generated_registry_count = ${count};\n")
  cvml_registry_write_if_changed("${output}" "${text}")
endfunction()

function(cvml_registry_write_table output)
  cmake_parse_arguments(ARG "" "INCLUDE;DECL;ROW;TABLE" "NAMES" ${ARGN})
  set(decls "")
  set(rows "")
  foreach(name IN LISTS ARG_NAMES)
    string(REPLACE "@NAME@" "${name}" decl "${ARG_DECL}")
    string(REPLACE "@NAME@" "${name}" row "${ARG_ROW}")
    string(APPEND decls "${decl};\n")
    string(APPEND rows "    ${row}\n")
  endforeach()
  set(text "/* Generated by cmake/registry.cmake from the source folders. Do not edit. */\n#include \"${ARG_INCLUDE}\"\n\n${decls}\n${ARG_TABLE} = {\n${rows}    nullptr,\n};\n")
  cvml_registry_write_if_changed("${output}" "${text}")
endfunction()
