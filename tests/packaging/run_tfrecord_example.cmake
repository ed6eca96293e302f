# Runs examples/s3_tfrecord_echo on local TFRecord shards that `dataecho
# convert` makes from Fashion-MNIST's test set (ctest: example_s3_tfrecord_echo).
# Usage: cmake -DTOOL=<dataecho> -DEXAMPLE=<s3_tfrecord_echo> -DDATA_DIR=... -DWORK_DIR=... -P run_tfrecord_example.cmake
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/run_command.cmake)

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
run(${EXAMPLE} --help)
if(NOT last_output MATCHES "^usage: s3_tfrecord_echo")
  message(FATAL_ERROR "--help printed no usage:\n${last_output}")
endif()
run(${TOOL} convert --images=${DATA_DIR}/t10k-images-idx3-ubyte.gz --labels=${DATA_DIR}/t10k-labels-idx1-ubyte.gz
  --output=${WORK_DIR}/test --shards=4 --limit=2000 --encoding=jpeg)
# Echo factor 2: every one of the 2,000 images read once and emitted twice.
run(${EXAMPLE} "${WORK_DIR}/test-*" 2)
message(STATUS "${last_output}")
if(NOT last_output MATCHES "^4 shards, 32 batches, 4000 rows, 2000 fresh\n")
  message(FATAL_ERROR "unexpected counts")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
