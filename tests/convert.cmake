# The ONNX converter (python/cvml/convert): its own tests on small models built in
# the test, and the accuracy acceptance on the reference Fashion-MNIST models
# (tests/convert/models). Both run the converted models through the built library.
# A sanitized library cannot be loaded by a plain python3, so the sanitized builds
# leave them out (label convert).
if(NOT CVML_SANITIZE AND TARGET cvml)
  set(cvml_convert_runner ${CMAKE_CURRENT_SOURCE_DIR}/scripts/run_convert_tests.sh)
  add_test(NAME convert.pytest
    COMMAND sh ${cvml_convert_runner} $<TARGET_FILE:cvml> ${PROJECT_SOURCE_DIR} test_convert.py)
  add_test(NAME convert.levels
    COMMAND sh ${cvml_convert_runner} $<TARGET_FILE:cvml> ${PROJECT_SOURCE_DIR} test_levels.py)
  set_tests_properties(convert.pytest convert.levels PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS convert)
  # One test a reference model, so that CTest runs them side by side.
  foreach(model coverage mobilenet_v1 mobilenet_v2 plain_cnn resnet)
    add_test(NAME convert.accuracy.${model}
      COMMAND sh ${cvml_convert_runner} $<TARGET_FILE:cvml> ${PROJECT_SOURCE_DIR}
              test_accuracy.py needs-dataset -k ${model})
    set_tests_properties(convert.accuracy.${model} PROPERTIES
      SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS convert)
  endforeach()
  # cvml-convert as `cmake --install` puts it beside cvml, run from the prefix.
  add_test(NAME convert.installed
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/run_convert_installed.sh ${PROJECT_BINARY_DIR}
            ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/convert_installed)
  set_tests_properties(convert.installed PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
    LABELS convert)
endif()
