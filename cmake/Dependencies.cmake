# Every dependency comes from a Debian package (see scripts/setup.sh).
include(GNUInstallDirs)
find_package(Threads REQUIRED)
find_package(absl REQUIRED)
find_package(fmt REQUIRED)

set(DATAECHO_ABSL_TARGETS
  absl::status absl::statusor absl::strings absl::str_format absl::synchronization
  absl::time absl::span absl::inlined_vector absl::random_random absl::flat_hash_map
  absl::cleanup)
set(DATAECHO_PRIVATE_LIBS)

# Network stores (libcurl) and the test HTTP server (libmicrohttpd).
find_package(PkgConfig REQUIRED)
pkg_check_modules(CURL REQUIRED IMPORTED_TARGET libcurl)
list(APPEND DATAECHO_PRIVATE_LIBS PkgConfig::CURL)
pkg_check_modules(MICROHTTPD REQUIRED IMPORTED_TARGET libmicrohttpd)
list(APPEND DATAECHO_TEST_SUPPORT_LIBS PkgConfig::MICROHTTPD)

# Compressed record files (zlib) and JPEG through TurboJPEG (libturbojpeg0-dev).
find_package(ZLIB REQUIRED)
list(APPEND DATAECHO_PRIVATE_LIBS ZLIB::ZLIB)
pkg_check_modules(TURBOJPEG REQUIRED IMPORTED_TARGET libturbojpeg)
list(APPEND DATAECHO_PRIVATE_LIBS PkgConfig::TURBOJPEG)
