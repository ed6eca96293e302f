# Checks the public headers' conventions (ctest: public_headers_lint):
#   - no `using namespace` outside comments;
#   - each header opens with a comment naming it ("// foo.h: what it is");
#   - headers under internal/ declare namespace dataecho::internal only
#     (but internal/*_members.h, which define a public class's members out of
#     the class, and so in its namespace);
#   - docs/api.md mentions every public header, and the umbrella header
#     dataecho.h reaches it: includes it, or includes a header that does (the
#     stages' headers come through pipeline.h), so that a new stage's header
#     is added to pipeline.h alone and none is lost from the umbrella.
# Usage: cmake -DSOURCE_DIR=<repo> -P check_headers.cmake
cmake_minimum_required(VERSION 3.25)
file(GLOB_RECURSE headers RELATIVE ${SOURCE_DIR}/include/dataecho ${SOURCE_DIR}/include/dataecho/*.h)
file(READ ${SOURCE_DIR}/docs/api.md api_md)
# The headers dataecho.h reaches, following `#include "dataecho/..."` lines.
include(${CMAKE_CURRENT_LIST_DIR}/header_includes.cmake)
dataecho_reached_includes(${SOURCE_DIR}/include dataecho/dataecho.h reached)
set(errors "")
foreach(rel ${headers})
  set(path ${SOURCE_DIR}/include/dataecho/${rel})
  file(STRINGS ${path} lines)
  set(named FALSE)
  set(line_no 0)
  foreach(line IN LISTS lines)
    math(EXPR line_no "${line_no} + 1")
    if(line MATCHES "^[ \t]*//")
      if(line_no LESS_EQUAL 4 AND line MATCHES "^// ${rel}: ")
        set(named TRUE)
      endif()
      continue()
    endif()
    if(line MATCHES "using[ \t]+namespace[ \t]")
      string(APPEND errors "include/dataecho/${rel}:${line_no}: `using namespace` in a header\n")
    endif()
    if(rel MATCHES "^internal/" AND NOT rel MATCHES "_members\\.h$"
       AND line MATCHES "^namespace ([A-Za-z_:]+)"
       AND NOT CMAKE_MATCH_1 STREQUAL "dataecho::internal")
      string(APPEND errors "include/dataecho/${rel}:${line_no}: internal headers belong in namespace dataecho::internal\n")
    endif()
  endforeach()
  if(NOT named)
    string(APPEND errors "include/dataecho/${rel}: must open with a comment \"// ${rel}: <what it is>\"\n")
  endif()
  if(NOT rel MATCHES "^internal/")
    string(FIND "${api_md}" "`dataecho/${rel}`" pos)
    if(pos EQUAL -1)
      string(APPEND errors "docs/api.md: add a line for `dataecho/${rel}`\n")
    endif()
    if(NOT "dataecho/${rel}" IN_LIST reached)
      string(APPEND errors "include/dataecho/${rel}: not reached from dataecho.h: a stage's header belongs in pipeline.h (its builder method), any other in dataecho.h\n")
    endif()
  endif()
endforeach()
list(LENGTH headers count)
if(errors)
  message(FATAL_ERROR "public header check failed:\n${errors}")
endif()
message(STATUS "${count} headers checked")
