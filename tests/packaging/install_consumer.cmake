# Installs the build tree into a fresh prefix, then configures, builds and runs
# tests/install_consumer as an outside project against it: once through
# find_package(dataecho), once through pkg-config (ctest: install_consumer).
# Only the consumer is compiled; the library is the one just built.
#
# Usage: cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=...
#   -DCXX_COMPILER=... -DBUILD_TYPE=... -DCXX_FLAGS=... -P install_consumer.cmake
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/run_command.cmake)

set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${prefix})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# The installed tree holds what a user needs.
foreach(expected
    include/dataecho/dataecho.h include/dataecho/version.h include/dataecho/export.h
    include/dataecho/internal/random.h
    bin/dataecho)
  if(NOT EXISTS ${prefix}/${expected})
    message(FATAL_ERROR "not installed: ${expected}")
  endif()
endforeach()
file(GLOB_RECURSE config_files ${prefix}/*/dataechoConfig.cmake ${prefix}/*/dataechoConfigVersion.cmake
  ${prefix}/*/dataecho.pc)
list(LENGTH config_files n)
if(NOT n EQUAL 3)
  message(FATAL_ERROR "expected dataechoConfig.cmake, dataechoConfigVersion.cmake, dataecho.pc; got: ${config_files}")
endif()
# The installed tool runs from the prefix (a shared library found through its RPATH).
run(${prefix}/bin/dataecho --version)
if(NOT last_output STREQUAL "dataecho ${EXPECTED_VERSION}\n")
  message(FATAL_ERROR "installed dataecho --version printed: ${last_output}")
endif()
list(FILTER config_files INCLUDE REGEX "dataecho\\.pc$")
get_filename_component(pc_dir ${config_files} DIRECTORY)

# A clean consumer build every time, so a stale cache cannot hide a broken package.
file(REMOVE_RECURSE ${consumer_build})
set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install_consumer -B ${consumer_build} -G ${GENERATOR}
  -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
  "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" -DDATAECHO_SOURCE_DIR=${SOURCE_DIR})
run(${CMAKE_COMMAND} --build ${consumer_build} -j2)

# find_package(dataecho): the quick start runs to the end and prints its summary.
run(${consumer_build}/quickstart)
if(NOT last_output MATCHES "batches")
  message(FATAL_ERROR "quickstart printed no summary:\n${last_output}")
endif()
# pkg-config: the version the program reports is the one configured.
run(${consumer_build}/pkg_config_consumer)
if(NOT last_output MATCHES "dataecho ${EXPECTED_VERSION} ")
  message(FATAL_ERROR "pkg_config_consumer: expected version ${EXPECTED_VERSION}, got:\n${last_output}")
endif()
message(STATUS "${last_output}")
