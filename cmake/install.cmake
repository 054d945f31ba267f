# Installation. `cmake --install build --prefix P` puts into P:
#   bin/kgen                          the command
#   include/kgen.h                    the public header
#   lib/libkgen.a, lib/libkgen.so*    the library, static and shared
#   lib/cmake/kgen/kgenConfig*.cmake  find_package(kgen): kgen::kgen, kgen::kgen_static
#   lib/pkgconfig/kgen.pc             pkg-config kgen (shared) and kgen-static
# (lib is CMAKE_INSTALL_LIBDIR.) The package files locate the prefix from
# their own place, so an installed tree may be moved.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The shared library is built from the same sources as libkgen.a. Lua and
# SQLite's static archives are not position-independent, so it links their
# shared libraries; only the kg_* API is exported (cmake/kgen.map).
find_library(KGEN_LUA_SHARED NAMES lua5.4 lua54 NAMES_PER_DIR)
find_library(KGEN_SQLITE_SHARED NAMES sqlite3)
get_target_property(_kgen_sources kgen_lib SOURCES)
add_library(kgen_shared SHARED ${_kgen_sources})
# after kgen_lib, whose rule generates embedded_templates.c: two targets
# running the same custom command in parallel would race on its output
add_dependencies(kgen_shared kgen_lib)
set_target_properties(kgen_shared PROPERTIES OUTPUT_NAME kgen VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR} INSTALL_RPATH "${CUDAToolkit_LIBRARY_DIR}"
  LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/kgen.map)
target_include_directories(kgen_shared PRIVATE $<TARGET_PROPERTY:kgen_lib,INCLUDE_DIRECTORIES>)
target_compile_definitions(kgen_shared PRIVATE $<TARGET_PROPERTY:kgen_lib,COMPILE_DEFINITIONS>)
target_link_options(kgen_shared PRIVATE -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/kgen.map -Wl,--no-undefined)
target_link_libraries(kgen_shared PRIVATE ${CUDA_nvrtc_LIBRARY} ${KGEN_LUA_SHARED} ${KGEN_SQLITE_SHARED}
  Threads::Threads ${CMAKE_DL_LIBS} m)
set_target_properties(kgen PROPERTIES INSTALL_RPATH "${CUDAToolkit_LIBRARY_DIR}")

install(TARGETS kgen RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS kgen_lib ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS kgen_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/runtime/kgen.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# The package files: paths from the prefix, and what libkgen.a links against.
set(KGEN_SHARED_FILE libkgen.so.${PROJECT_VERSION})
set(KGEN_SHARED_SONAME libkgen.so.${PROJECT_VERSION_MAJOR})
set(KGEN_STATIC_DEPS "${CUDA_nvrtc_LIBRARY};${LUA_LIBRARY};${SQLITE_LIBRARY}")
set(KGEN_STATIC_PC_DEPS "-L${CUDAToolkit_LIBRARY_DIR} -Wl,-rpath,${CUDAToolkit_LIBRARY_DIR} -lnvrtc ${LUA_LIBRARY} ${SQLITE_LIBRARY}")
set(_kgen_cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/kgen)
set(_kgen_pcdir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH KGEN_CONFIG_TO_PREFIX /prefix/${_kgen_cmakedir} /prefix)
file(RELATIVE_PATH KGEN_PC_TO_PREFIX /prefix/${_kgen_pcdir} /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/kgenConfig.cmake.in ${PROJECT_BINARY_DIR}/kgenConfig.cmake @ONLY)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kgenConfigVersion.cmake COMPATIBILITY SameMinorVersion)
configure_file(${PROJECT_SOURCE_DIR}/cmake/kgen.pc.in ${PROJECT_BINARY_DIR}/kgen.pc @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/kgen-static.pc.in ${PROJECT_BINARY_DIR}/kgen-static.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/kgenConfig.cmake ${PROJECT_BINARY_DIR}/kgenConfigVersion.cmake
        DESTINATION ${_kgen_cmakedir})
install(FILES ${PROJECT_BINARY_DIR}/kgen.pc ${PROJECT_BINARY_DIR}/kgen-static.pc DESTINATION ${_kgen_pcdir})
