# Runs the README's program (benchmarks/compile/readme_pipeline.cc, built with
# dataecho/builder.h alone against the shared library) on TFRecord shards that
# `dataecho convert` makes from Fashion-MNIST's test set (ctest:
# shared_library_readme_pipeline): every stage it builds is one the library
# compiled and exports.
# Usage: cmake -DTOOL=<dataecho> -DPROGRAM=<readme_pipeline> -DDATA_DIR=... -DWORK_DIR=... -P run_readme_pipeline.cmake
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/run_command.cmake)

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
run(${TOOL} convert --images=${DATA_DIR}/t10k-images-idx3-ubyte.gz --labels=${DATA_DIR}/t10k-labels-idx1-ubyte.gz
  --output=${WORK_DIR}/test --shards=2 --limit=1000 --encoding=raw)
file(GLOB shards ${WORK_DIR}/test-*)
# Echo factor 2: the 1,000 images read once, 2,000 rows in batches.
run(${PROGRAM} ${shards})
if(NOT last_output MATCHES "^2000 rows\n")
  message(FATAL_ERROR "unexpected output:\n${last_output}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
