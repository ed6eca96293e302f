# Every dependency comes from a Debian package (see scripts/setup.sh).
#
# For the installed package (cmake/Install.cmake), each dependency is also
# recorded in:
#   DATAECHO_FIND_DEPENDENCIES      package names dataechoConfig.cmake finds
#                                   with find_dependency()
#   DATAECHO_PC_REQUIRES            pkg-config modules of public dependencies
#   DATAECHO_PC_REQUIRES_PRIVATE    pkg-config modules of private (link-only)
#                                   dependencies
# A new private library: find it with find_package() so that it has a target
# a consumer's find_dependency() recreates, append the target to
# DATAECHO_PRIVATE_LIBS and its names to the lists above.
include(GNUInstallDirs)
find_package(Threads REQUIRED)
find_package(absl REQUIRED)
find_package(fmt REQUIRED)

set(DATAECHO_ABSL_TARGETS
  absl::status absl::statusor absl::strings absl::str_format absl::synchronization
  absl::time absl::span absl::inlined_vector absl::random_random absl::flat_hash_map
  absl::cleanup absl::cord)
set(DATAECHO_PRIVATE_LIBS)
set(DATAECHO_FIND_DEPENDENCIES Threads absl fmt)
set(DATAECHO_PC_REQUIRES fmt)
foreach(absl_target ${DATAECHO_ABSL_TARGETS})
  string(REPLACE "absl::" "absl_" absl_module ${absl_target})
  list(APPEND DATAECHO_PC_REQUIRES ${absl_module})
endforeach()
set(DATAECHO_PC_REQUIRES_PRIVATE)

# Network stores (libcurl).
find_package(CURL REQUIRED)
list(APPEND DATAECHO_PRIVATE_LIBS CURL::libcurl)
list(APPEND DATAECHO_FIND_DEPENDENCIES CURL)
list(APPEND DATAECHO_PC_REQUIRES_PRIVATE libcurl)
# The loopback HTTP server of dataecho::testing (testing/: the tests,
# benchmarks, example trainer and echo_bench use it; libmicrohttpd): not
# needed to build only the library.
if(DATAECHO_BUILD_TESTS OR DATAECHO_BUILD_BENCHMARKS OR DATAECHO_BUILD_EXAMPLES OR
   DATAECHO_BUILD_TOOLS)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(MICROHTTPD REQUIRED IMPORTED_TARGET libmicrohttpd)
  list(APPEND DATAECHO_TEST_SUPPORT_LIBS PkgConfig::MICROHTTPD CURL::libcurl)
endif()

# Compressed record files (zlib); JPEG through TurboJPEG (libturbojpeg0-dev) and,
# for region decoding with DCT scaling, libjpeg-turbo's libjpeg API (libjpeg-dev).
find_package(ZLIB REQUIRED)
list(APPEND DATAECHO_PRIVATE_LIBS ZLIB::ZLIB)
list(APPEND DATAECHO_FIND_DEPENDENCIES ZLIB)
list(APPEND DATAECHO_PC_REQUIRES_PRIVATE zlib)
find_package(libjpeg-turbo CONFIG REQUIRED)
list(APPEND DATAECHO_PRIVATE_LIBS libjpeg-turbo::turbojpeg libjpeg-turbo::jpeg)
list(APPEND DATAECHO_FIND_DEPENDENCIES libjpeg-turbo)
list(APPEND DATAECHO_PC_REQUIRES_PRIVATE libturbojpeg libjpeg)
