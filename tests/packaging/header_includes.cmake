# dataecho_reached_includes(INCLUDE_DIR HEADER OUT): HEADER (a path under
# INCLUDE_DIR, e.g. dataecho/stage.h) and every quoted include it reaches,
# following the `#include "..."` lines of those that are files under
# INCLUDE_DIR (the project's headers); others (e.g. absl/status/statusor.h)
# are listed, not followed. Used by check_headers.cmake (what dataecho.h
# reaches) and CMakeLists.txt (which headers reach statusor.h).
function(dataecho_reached_includes include_dir header out)
  set(reached ${header})
  set(pending ${header})
  while(pending)
    list(POP_FRONT pending from)
    file(STRINGS ${include_dir}/${from} lines REGEX "^#include \"[^\"]+\"")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" to "${line}")
      if(NOT to IN_LIST reached)
        list(APPEND reached ${to})
        if(EXISTS ${include_dir}/${to})
          list(APPEND pending ${to})
        endif()
      endif()
    endforeach()
  endwhile()
  set(${out} ${reached} PARENT_SCOPE)
endfunction()
