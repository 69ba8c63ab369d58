# Builds and runs tests/install/consumer against ctpipe in MODE (find_package after an
# install into WORK_DIR/prefix, or add_subdirectory of SOURCE_DIR). Any failure fails.
file(REMOVE_RECURSE "${WORK_DIR}")
include("${CMAKE_CURRENT_LIST_DIR}/../step.cmake")
set(options -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release)
if(MODE STREQUAL "find_package")
  # Install the library alone (no tool, tests or examples) into a private prefix.
  step("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/lib" ${options} -DCTPIPE_BUILD_TESTS=OFF
       -DCTPIPE_BUILD_TOOL=OFF -DCTPIPE_BUILD_EXAMPLES=OFF "-DCMAKE_INSTALL_PREFIX=${WORK_DIR}/prefix")
  step("${CMAKE_COMMAND}" --install "${WORK_DIR}/lib")
  step("${CMAKE_COMMAND}" -S "${SOURCE_DIR}/tests/install/consumer" -B "${WORK_DIR}/consumer" ${options}
       -DCTPIPE_MODE=find_package "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix")
else()
  step("${CMAKE_COMMAND}" -S "${SOURCE_DIR}/tests/install/consumer" -B "${WORK_DIR}/consumer" ${options}
       -DCTPIPE_MODE=add_subdirectory "-DCTPIPE_SOURCE_DIR=${SOURCE_DIR}")
endif()
step("${CMAKE_COMMAND}" --build "${WORK_DIR}/consumer")
step("${WORK_DIR}/consumer/consumer")
message(STATUS "consumer (${MODE}) built and ran")
