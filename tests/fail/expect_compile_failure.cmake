# Builds TARGET in BUILD_DIR and passes only if the build fails AND its output matches
# the regular expression EXPECTED (the library's `ctpipe:` message).
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --target "${TARGET}" --config "${CONFIG}"
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(result EQUAL 0)
  message(FATAL_ERROR "${TARGET} compiled, but it must be rejected with: ${EXPECTED}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECTED}")
  message(FATAL_ERROR "${TARGET} failed to compile without the expected message '${EXPECTED}':\n${out}${err}")
endif()
message(STATUS "${TARGET} rejected as expected: ${EXPECTED}")
