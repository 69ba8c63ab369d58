# Compiles SOURCE with COMPILER (C++20, -fsyntax-only: the library's errors are constant
# evaluations, which the front end runs; INCLUDE_DIR the library's headers) and passes
# only if the compile fails AND its output matches the regular expression EXPECTED (the
# library's `ctpipe:` message).
execute_process(COMMAND "${COMPILER}" -std=c++20 -fsyntax-only "-I${INCLUDE_DIR}" "${SOURCE}"
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(result EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it must be rejected with: ${EXPECTED}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECTED}")
  message(FATAL_ERROR "${SOURCE} failed to compile without the expected message '${EXPECTED}':\n${out}${err}")
endif()
message(STATUS "${SOURCE} rejected as expected: ${EXPECTED}")
