# Builds the ctpipe tool as `./scripts/ctpipe.sh` does (the `tool` preset: Release, so
# -O3, warnings as errors, no tests or examples) into WORK_DIR with CXX, and runs
# `ctpipe --version`. The test builds run at -O2, and some warnings (GCC 12's -Wrestrict)
# only appear at -O3: this keeps the README's first command building.
file(REMOVE_RECURSE "${WORK_DIR}")
include("${CMAKE_CURRENT_LIST_DIR}/../step.cmake")
step("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}" -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release
     -DCTPIPE_WARNINGS_AS_ERRORS=ON -DCTPIPE_BUILD_TESTS=OFF -DCTPIPE_BUILD_EXAMPLES=OFF)
step("${CMAKE_COMMAND}" --build "${WORK_DIR}" --target ctpipe_tool)
step("${WORK_DIR}/ctpipe" --version)
message(STATUS "the tool built at Release with warnings as errors and ran")
