# DATAECHO_SANITIZE=address -> ASan + UBSan (halt on error); thread -> TSan.
if(DATAECHO_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
elseif(DATAECHO_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT DATAECHO_SANITIZE STREQUAL "")
  message(FATAL_ERROR "DATAECHO_SANITIZE must be '', 'address' or 'thread', got '${DATAECHO_SANITIZE}'")
endif()

# TSan over an uninstrumented Abseil (Debian's): wraps absl::Mutex / CondVar
# so that TSan sees their acquire and release (see cmake/tsan_absl_mutex.cc).
# Call once the dataecho target exists; every target linking it gets the shim.
function(dataecho_add_tsan_absl_shim target)
  if(NOT DATAECHO_SANITIZE STREQUAL "thread")
    return()
  endif()
  find_file(DATAECHO_ABSL_OPTIONS_H absl/base/options.h REQUIRED)
  file(STRINGS ${DATAECHO_ABSL_OPTIONS_H} use_ns REGEX "^#define ABSL_OPTION_USE_INLINE_NAMESPACE ")
  file(STRINGS ${DATAECHO_ABSL_OPTIONS_H} ns_line REGEX "^#define ABSL_OPTION_INLINE_NAMESPACE_NAME ")
  set(mangled_ns "")
  if(use_ns MATCHES " 1$" AND ns_line MATCHES "NAME ([A-Za-z0-9_]+)")
    string(LENGTH "${CMAKE_MATCH_1}" ns_length)
    set(mangled_ns "${ns_length}${CMAKE_MATCH_1}")
  endif()
  set(symbols
    5Mutex4LockEv 5Mutex6UnlockEv 5Mutex7TryLockEv
    5Mutex10ReaderLockEv 5Mutex12ReaderUnlockEv 5Mutex13ReaderTryLockEv
    5Mutex8LockWhenERKNS0_9ConditionE 5Mutex14ReaderLockWhenERKNS0_9ConditionE
    5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE
    5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE
    5Mutex25ReaderLockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE
    5Mutex26ReaderLockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE
    5Mutex5AwaitERKNS0_9ConditionE
    5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE
    5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE
    7CondVar4WaitEPNS0_5MutexE
    7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE
    7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE)
  add_library(dataecho_tsan_absl STATIC ${PROJECT_SOURCE_DIR}/cmake/tsan_absl_mutex.cc)
  target_link_libraries(dataecho_tsan_absl PUBLIC absl::synchronization absl::time)
  target_compile_definitions(dataecho_tsan_absl PRIVATE DATAECHO_ABSL_MANGLED_NS="${mangled_ns}")
  foreach(symbol ${symbols})
    target_link_options(dataecho_tsan_absl INTERFACE "LINKER:--wrap=_ZN4absl${mangled_ns}${symbol}")
  endforeach()
  target_link_libraries(${target} PUBLIC $<BUILD_INTERFACE:dataecho_tsan_absl>)
endfunction()
