# Installation: headers, the library, a CMake package exporting
# dataecho::dataecho, and a pkg-config file.
#
#   cmake --install build --prefix /opt/dataecho
#   # CMake:      find_package(dataecho) ... target_link_libraries(app PRIVATE dataecho::dataecho)
#   # pkg-config: c++ -std=c++20 app.cc $(pkg-config --cflags --libs dataecho)
#
# Tools (the `dataecho` CLI, echo_bench) add their own install(TARGETS ...
# RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}) rules next to their targets.
include(CMakePackageConfigHelpers)

set(DATAECHO_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/dataecho)

# Installed programs find a shared libdataecho next to them, wherever the
# prefix is (applies to targets created after this file is included).
if(BUILD_SHARED_LIBS AND NOT DEFINED CMAKE_INSTALL_RPATH)
  set(CMAKE_INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
endif()

# Every public header, internal/ included (templates use it), and the
# generated version header.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/dataecho
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/dataecho/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dataecho)

install(TARGETS dataecho EXPORT dataechoTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT dataechoTargets
  NAMESPACE dataecho::
  DESTINATION ${DATAECHO_INSTALL_CMAKEDIR})

# dataechoConfig.cmake finds every dependency (a static library's private
# ones are link dependencies of its users) and includes the targets.
set(DATAECHO_CONFIG_FIND_DEPENDENCIES "")
foreach(dep ${DATAECHO_FIND_DEPENDENCIES})
  string(APPEND DATAECHO_CONFIG_FIND_DEPENDENCIES "find_dependency(${dep})\n")
endforeach()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/dataechoConfig.cmake.in
  ${PROJECT_BINARY_DIR}/dataechoConfig.cmake
  INSTALL_DESTINATION ${DATAECHO_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/dataechoConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)  # 0.x: a minor release may break the API
install(FILES
  ${PROJECT_BINARY_DIR}/dataechoConfig.cmake
  ${PROJECT_BINARY_DIR}/dataechoConfigVersion.cmake
  DESTINATION ${DATAECHO_INSTALL_CMAKEDIR})

# dataecho.pc. A static libdataecho.a needs its private dependencies on every
# link line, so they go to Requires (plain `pkg-config --libs` works); a shared
# library links them itself, so they go to Requires.private.
# The file is relocatable: paths are relative to its own directory.
set(DATAECHO_PC_PREFIX "\${pcfiledir}")
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(DATAECHO_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH DATAECHO_PC_UP "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
  string(REGEX REPLACE "/$" "" DATAECHO_PC_UP "${DATAECHO_PC_UP}")
  string(APPEND DATAECHO_PC_PREFIX "/${DATAECHO_PC_UP}")
endif()
list(JOIN DATAECHO_PC_REQUIRES " " DATAECHO_PC_REQUIRES_STRING)
list(JOIN DATAECHO_PC_REQUIRES_PRIVATE " " DATAECHO_PC_REQUIRES_PRIVATE_STRING)
if(BUILD_SHARED_LIBS)
  set(DATAECHO_PC_REQUIRES_LINE "${DATAECHO_PC_REQUIRES_STRING}")
  set(DATAECHO_PC_REQUIRES_PRIVATE_LINE "${DATAECHO_PC_REQUIRES_PRIVATE_STRING}")
else()
  set(DATAECHO_PC_REQUIRES_LINE "${DATAECHO_PC_REQUIRES_STRING} ${DATAECHO_PC_REQUIRES_PRIVATE_STRING}")
  set(DATAECHO_PC_REQUIRES_PRIVATE_LINE "")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/dataecho.pc.in ${PROJECT_BINARY_DIR}/dataecho.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/dataecho.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
