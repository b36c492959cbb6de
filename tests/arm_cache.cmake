# scripts/test_arm.sh configures a stale aarch64 build tree afresh (scripts/lib/arm_cache.sh);
# its check runs here on faked trees, so it needs neither the cross toolchain nor qemu.
find_program(CVML_BASH bash)
if(CVML_BASH)
  add_test(NAME scripts.arm_cache
    COMMAND ${CVML_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/scripts/arm_cache_test.sh
            ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/arm_cache_test)
endif()
