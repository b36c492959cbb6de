# Installation: headers in include/cvml, the shared and static libraries, the plugin
# directory, the cvml tool, a CMake package (find_package(cvml) -> cvml::cvml,
# cvml::cvml_static) and a pkg-config file (cvml.pc).
include(CMakePackageConfigHelpers)

set(CVML_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/cvml)
if(WIN32)
  # Beside cvml.dll, where the library looks (bin\cvml\plugins).
  set(CVML_INSTALL_PLUGINDIR ${CMAKE_INSTALL_BINDIR}/cvml/plugins)
else()
  set(CVML_INSTALL_PLUGINDIR ${CMAKE_INSTALL_LIBDIR}/cvml/plugins)
endif()

file(GLOB cvml_public_headers ${PROJECT_SOURCE_DIR}/api/*.h)
install(FILES ${cvml_public_headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cvml)

install(TARGETS ${CVML_LIBRARY_TARGETS} EXPORT cvmlTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT cvmlTargets NAMESPACE cvml:: DESTINATION ${CVML_INSTALL_CMAKEDIR})

# Plugins are found here by default (CVML_PLUGIN_INSTALL_DIR in the library).
install(DIRECTORY DESTINATION ${CVML_INSTALL_PLUGINDIR})
if(TARGET cvml_cuda)
  install(TARGETS cvml_cuda LIBRARY DESTINATION ${CVML_INSTALL_PLUGINDIR})
endif()
if(TARGET cvml_tool)
  install(TARGETS cvml_tool RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/cvmlConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cvmlConfig.cmake
  INSTALL_DESTINATION ${CVML_INSTALL_CMAKEDIR}
  PATH_VARS CVML_INSTALL_PLUGINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cvmlConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cvmlConfig.cmake ${PROJECT_BINARY_DIR}/cvmlConfigVersion.cmake
  DESTINATION ${CVML_INSTALL_CMAKEDIR})

# pkg-config: the static link needs the system libraries the core uses.
set(CVML_PC_LIBS_PRIVATE "-lm")
if(CVML_WITH_THREADS)
  string(APPEND CVML_PC_LIBS_PRIVATE " -lpthread")
endif()
if(CVML_WITH_PLUGINS)
  string(APPEND CVML_PC_LIBS_PRIVATE " -ldl")
endif()
# Relocatable: the prefix is found from the .pc file's own place, so
# `cmake --install --prefix DIR` gives a working file.
file(RELATIVE_PATH CVML_PC_PREFIX_FROM_PCDIR "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" CVML_PC_PREFIX_FROM_PCDIR "${CVML_PC_PREFIX_FROM_PCDIR}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/cvml.pc.in ${PROJECT_BINARY_DIR}/cvml.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cvml.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The Python binding: PREFIX/lib/python/cvml, used with PYTHONPATH=PREFIX/lib/python.
# _install.py records where libcvml.so is relative to the package, so an installed
# copy loads the library it was installed with, whatever the prefix.
set(CVML_INSTALL_PYTHONDIR ${CMAKE_INSTALL_LIBDIR}/python)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/cvml DESTINATION ${CVML_INSTALL_PYTHONDIR}
  FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
file(RELATIVE_PATH cvml_python_to_library "/${CVML_INSTALL_PYTHONDIR}/cvml"
  "/${CMAKE_INSTALL_LIBDIR}/${CMAKE_SHARED_LIBRARY_PREFIX}cvml${CMAKE_SHARED_LIBRARY_SUFFIX}")
file(WRITE ${PROJECT_BINARY_DIR}/python/_install.py
  "# Written by cmake --install: libcvml relative to this package's directory.\n"
  "LIBRARY = \"${cvml_python_to_library}\"\n")
install(FILES ${PROJECT_BINARY_DIR}/python/_install.py DESTINATION ${CVML_INSTALL_PYTHONDIR}/cvml)

# cvml-convert, the ONNX converter's command, beside cvml: it runs the package above.
file(RELATIVE_PATH cvml_bin_to_python "/${CMAKE_INSTALL_BINDIR}" "/${CVML_INSTALL_PYTHONDIR}")
configure_file(${PROJECT_SOURCE_DIR}/tools/cvml-convert.in ${PROJECT_BINARY_DIR}/cvml-convert @ONLY)
install(PROGRAMS ${PROJECT_BINARY_DIR}/cvml-convert DESTINATION ${CMAKE_INSTALL_BINDIR})

install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/README.md
  DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/cvml)
