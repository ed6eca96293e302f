# Turns every fenced C++ block of README.md and docs/*.md into code the build
# compiles and links (target docs_snippets, ctest: docs_snippets), so the docs
# cannot drift from the API.
#
# A block (```cpp, ```c++ or ```C++) is, by the HTML comment on the last
# non-blank line before it:
#   (none)                          a fragment: compiled as the body of a
#                                   function returning absl::Status
#   <!-- snippet: global -->        declarations: compiled at namespace scope
#   <!-- snippet: skip: REASON -->  not compiled; the reason is required
#   <!-- verbatim: path -->         a copy of a compiled file (check_docs.cmake)
# Every block gets its own namespace (docs_snippets::<doc>_<line>); inside it,
# the names a reader's program would define (store, shards, Decode, ...) come
# from docs_snippet_context.h. `#include` lines are lifted to the top of the
# file. `#line` directives make compiler errors point at the Markdown line.
#
#   include(docs_snippets.cmake)
#   dataecho_doc_snippets(${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/docs_snippet_sources sources)
#
# Runs at configure time; the Markdown files are configure dependencies, so
# editing one re-generates on the next build. Files are rewritten only when
# their content changes.

# One Markdown file -> ${out_file}; sets ${counts_var} to "compiled;skipped;verbatim;file"
# (file: "none" when the Markdown file has no block to compile).
function(_dataecho_doc_snippets_file doc display out_file counts_var)
  file(READ ${doc} text)
  string(REGEX REPLACE "[^A-Za-z0-9]" "_" stem "${display}")
  string(TOLOWER "${stem}" stem)
  set(includes "")
  set(code "")
  set(compiled 0)
  set(skipped 0)
  set(verbatim 0)
  set(line_no 0)
  set(in_block FALSE)
  set(marker "")
  while(NOT text STREQUAL "")
    string(FIND "${text}" "\n" nl)
    if(nl EQUAL -1)
      set(line "${text}")
      set(text "")
    else()
      string(SUBSTRING "${text}" 0 ${nl} line)
      math(EXPR nl "${nl} + 1")
      string(SUBSTRING "${text}" ${nl} -1 text)
    endif()
    math(EXPR line_no "${line_no} + 1")
    if(NOT in_block)
      if(line MATCHES "^( *)```([A-Za-z+]*)")
        set(in_block TRUE)
        string(LENGTH "${CMAKE_MATCH_1}" indent)
        set(lang "${CMAKE_MATCH_2}")
        set(body "")
        math(EXPR first_line "${line_no} + 1")
        set(block_marker "${marker}")
      elseif(line MATCHES "^[ \t]*<!--.*-->[ \t]*$")
        set(marker "${line}")
      elseif(NOT line MATCHES "^[ \t]*$")
        set(marker "")
      endif()
      continue()
    endif()
    if(NOT line MATCHES "^ *```[ \t]*$")
      # Strip the fence's indentation (a block inside a list item).
      string(LENGTH "${line}" len)
      if(indent GREATER 0 AND len GREATER_EQUAL indent)
        string(SUBSTRING "${line}" ${indent} -1 line)
      endif()
      if(line MATCHES "^[ \t]*#[ \t]*include")
        string(APPEND includes "${line}\n")
        set(line "")
      endif()
      string(APPEND body "${line}\n")
      continue()
    endif()
    # End of a block.
    set(in_block FALSE)
    set(marker "")
    if(NOT lang MATCHES "^(cpp|c\\+\\+|C\\+\\+|cc|cxx)$")
      continue()
    endif()
    set(ns "${stem}_${first_line}")
    set(where "${display}:${first_line}")
    if(block_marker MATCHES "<!-- verbatim: ")
      math(EXPR verbatim "${verbatim} + 1")
    elseif(block_marker MATCHES "<!-- snippet: skip: *([^ ].*[^ ]) *-->")
      math(EXPR skipped "${skipped} + 1")
      string(APPEND code "// ${where}: skipped: ${CMAKE_MATCH_1}\n\n")
    elseif(block_marker MATCHES "<!-- snippet: skip")
      string(APPEND code "#error \"${where}: a skipped snippet needs a reason: <!-- snippet: skip: why -->\"\n\n")
    elseif(block_marker MATCHES "<!-- snippet: global -->")
      math(EXPR compiled "${compiled} + 1")
      string(APPEND code "namespace docs_snippets::${ns} {\n#line ${first_line} \"${display}\"\n"
                        "${body}}  // namespace docs_snippets::${ns}\n\n")
    elseif(block_marker MATCHES "<!-- snippet")
      string(APPEND code "#error \"${where}: unknown snippet marker (global, skip: reason)\"\n\n")
    else()
      math(EXPR compiled "${compiled} + 1")
      string(APPEND code "namespace docs_snippets::${ns} {\nabsl::Status Snippet() {\n"
                        "#line ${first_line} \"${display}\"\n${body}"
                        "  return absl::OkStatus();\n}\n}  // namespace docs_snippets::${ns}\n\n")
    endif()
  endwhile()
  if(in_block)
    string(APPEND code "#error \"${display}: unterminated code block\"\n")
  endif()
  if(code STREQUAL "")
    set(${counts_var} "0;0;${verbatim};none" PARENT_SCOPE)
    return()
  endif()
  set(content "// Generated from ${display} by tests/packaging/docs_snippets.cmake: do not edit.\n")
  string(APPEND content "// NOLINTBEGIN\n#include \"docs_snippet_context.h\"\n${includes}\n${code}// NOLINTEND\n")
  file(WRITE ${out_file}.new "${content}")
  file(COPY_FILE ${out_file}.new ${out_file} ONLY_IF_DIFFERENT)
  file(REMOVE ${out_file}.new)
  set(${counts_var} "${compiled};${skipped};${verbatim};${out_file}" PARENT_SCOPE)
endfunction()

# Generates one translation unit per Markdown file and a main() that reports
# the counts; sets ${sources_var} to their paths.
function(dataecho_doc_snippets source_dir out_dir sources_var)
  file(GLOB docs CONFIGURE_DEPENDS ${source_dir}/docs/*.md)
  list(PREPEND docs ${source_dir}/README.md)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${docs})
  file(MAKE_DIRECTORY ${out_dir})
  set(sources "")
  set(compiled 0)
  set(skipped 0)
  set(verbatim 0)
  foreach(doc ${docs})
    file(RELATIVE_PATH display ${source_dir} ${doc})
    string(REGEX REPLACE "[/.]" "_" stem "${display}")
    set(out ${out_dir}/${stem}.cc)
    _dataecho_doc_snippets_file(${doc} "${display}" ${out} counts)
    list(GET counts 0 c)
    list(GET counts 1 s)
    list(GET counts 2 v)
    math(EXPR compiled "${compiled} + ${c}")
    math(EXPR skipped "${skipped} + ${s}")
    math(EXPR verbatim "${verbatim} + ${v}")
    list(GET counts 3 written)
    if(written STREQUAL "none")
      file(REMOVE ${out})
    else()
      list(APPEND sources ${out})
    endif()
  endforeach()
  set(main ${out_dir}/main.cc)
  file(WRITE ${main}.new
    "// Generated by tests/packaging/docs_snippets.cmake: do not edit.\n#include <cstdio>\n\n"
    "int main() {\n"
    "  std::printf(\"%d C++ blocks of the docs compiled and linked (%d verbatim copies of compiled \"\n"
    "              \"files, %d skipped with a reason)\\n\", ${compiled}, ${verbatim}, ${skipped});\n"
    "  return ${compiled} > 0 ? 0 : 1;\n}\n")
  file(COPY_FILE ${main}.new ${main} ONLY_IF_DIFFERENT)
  file(REMOVE ${main}.new)
  list(APPEND sources ${main})
  set(${sources_var} ${sources} PARENT_SCOPE)
endfunction()
