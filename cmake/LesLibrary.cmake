# libles: one static and one shared library, both named libles.
# The shared one exports only les_* symbols (hidden visibility + version script).

file(GLOB LES_CORE_SOURCES CONFIGURE_DEPENDS
  ${CMAKE_SOURCE_DIR}/src/util/*.cpp
  ${CMAKE_SOURCE_DIR}/src/core/*.cpp
  ${CMAKE_SOURCE_DIR}/src/core/chat/*.cpp
  ${CMAKE_SOURCE_DIR}/src/core/chat/jinja/*.cpp
  ${CMAKE_SOURCE_DIR}/src/core/speculative/*.cpp
  ${CMAKE_SOURCE_DIR}/src/core/gguf/*.cpp
  ${CMAKE_SOURCE_DIR}/src/core/tokenizer/*.cpp
  ${CMAKE_SOURCE_DIR}/src/core/model/*.cpp
  ${CMAKE_SOURCE_DIR}/src/core/model/arch/*.cpp
  ${CMAKE_SOURCE_DIR}/src/io/*.cpp
  ${CMAKE_SOURCE_DIR}/src/sched/*.cpp
  ${CMAKE_SOURCE_DIR}/bindings/c/*.cpp)
# Image input (LES_WITH_VISION): src/vision and the les_vision.h entry points
# (bindings/c/les_vision*.cpp); without it bindings/c/les_vision_off.cpp
# answers every les_vision.h call with LES_ERR_UNSUPPORTED (the ABI is the same).
if(LES_WITH_VISION)
  file(GLOB LES_VISION_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/vision/*.cpp)
  list(APPEND LES_CORE_SOURCES ${LES_VISION_SOURCES})
  list(REMOVE_ITEM LES_CORE_SOURCES ${CMAKE_SOURCE_DIR}/bindings/c/les_vision_off.cpp)
else()
  list(FILTER LES_CORE_SOURCES EXCLUDE REGEX "/bindings/c/les_vision(_generate)?\\.cpp$")
endif()

# The dispatch_io backend: with the rest on Apple, its own compile rule on Linux, or not at all.
include(${CMAKE_SOURCE_DIR}/cmake/LesDispatchIo.cmake)
if(NOT LES_HAVE_DISPATCH_IO OR LES_DISPATCH_IO_OBJECT)
  list(REMOVE_ITEM LES_CORE_SOURCES ${CMAKE_SOURCE_DIR}/src/io/dispatch_io_backend.cpp)
endif()

# utf8proc (libutf8proc-dev): Unicode general categories for the BPE
# pre-tokenizers (core/tokenizer/unicode_class.h), and case mapping and canonical
# decomposition for the WordPiece normaliser (core/tokenizer/tokenizer_wpm.h).
# LES does not use ICU (a heavy dependency for iOS/Android builds); the test
# api_no_icu checks that libles.so does not link it.
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)

add_library(les_obj OBJECT ${LES_CORE_SOURCES})
if(LES_WITH_VISION)
  # stb_image (libstb-dev): PNG/JPEG/PPM decoding for the vision input
  # (vision/image_decode.cpp compiles the header-only implementation itself, with
  # internal linkage; libstb.so is not linked).
  find_path(STB_IMAGE_INCLUDE_DIR stb_image.h PATH_SUFFIXES stb REQUIRED)
  target_include_directories(les_obj SYSTEM PRIVATE ${STB_IMAGE_INCLUDE_DIR})
endif()
# llama.cpp's resizes are bit-exact only without fused multiply-adds (its x86-64
# build has none); keep the compiler from contracting them on any target.
set_source_files_properties(${CMAKE_SOURCE_DIR}/src/vision/image_resize.cpp
                            ${CMAKE_SOURCE_DIR}/src/vision/image_slicing.cpp
                            PROPERTIES COMPILE_OPTIONS -ffp-contract=off)
target_include_directories(les_obj PUBLIC ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(les_obj PUBLIC les_kernels_obj fmt::fmt spdlog::spdlog Threads::Threads PkgConfig::UTF8PROC)
# The chat layer (src/core/chat: a template's JSON variables; bindings/c/les_chat.cpp) reads JSON;
# nothing in a header libles' users include does, so the dependency stays private.
target_link_libraries(les_obj PRIVATE nlohmann_json::nlohmann_json)
if(LIBURING_FOUND)
  target_link_libraries(les_obj PUBLIC PkgConfig::LIBURING)
  target_compile_definitions(les_obj PUBLIC LES_HAVE_LIBURING=1)
endif()
if(LES_HAVE_DISPATCH_IO)
  # Inside the library only the factory (and on Apple the backend) needs the definition,
  # so the other objects stay as without the backend and share ccache entries; users see it.
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/src/io/io_factory.cpp ${CMAKE_SOURCE_DIR}/src/io/dispatch_io_backend.cpp
               APPEND PROPERTY COMPILE_DEFINITIONS LES_HAVE_DISPATCH_IO=1)
  target_compile_definitions(les_obj INTERFACE LES_HAVE_DISPATCH_IO=1)
  les_add_dispatch_io_object()
endif()
target_compile_definitions(les_obj PRIVATE LES_BUILDING_LIBRARY=1)
set_target_properties(les_obj PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)

add_library(les_static STATIC $<TARGET_OBJECTS:les_obj> $<TARGET_OBJECTS:les_kernels_obj> ${LES_DISPATCH_IO_OBJECT})
target_link_libraries(les_static PUBLIC les_obj ${LES_DISPATCH_IO_LIBS})
set_target_properties(les_static PROPERTIES OUTPUT_NAME les)

# Random-weight models and vocabularies (src/synth) for tools, tests and
# benchmarks: a separate static library, never part of libles.so.
file(GLOB LES_SYNTH_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/synth/*.cpp)
add_library(les_synth STATIC ${LES_SYNTH_SOURCES})
target_link_libraries(les_synth PUBLIC les_static)

# Recorded routing traces (src/trace): the route_trace reader, cache-only
# replay through the expert cache, the offline optimum and the simulated
# lookahead predictor, for bench_trace and the tests; never part of libles.so.
file(GLOB LES_TRACE_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/trace/*.cpp)
add_library(les_trace STATIC ${LES_TRACE_SOURCES})
target_link_libraries(les_trace PUBLIC les_static)

# Quantisation tooling (src/quant): perplexity and KL-divergence statistics,
# the reference log-probabilities file, imatrix files and quantisation plans,
# for `les perplexity/quantize/imatrix` and the tests; never part of libles.so.
file(GLOB LES_QUANT_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/quant/*.cpp)
add_library(les_quant STATIC ${LES_QUANT_SOURCES})
target_link_libraries(les_quant PUBLIC les_static)

add_library(les_shared SHARED $<TARGET_OBJECTS:les_obj> $<TARGET_OBJECTS:les_kernels_obj> ${LES_DISPATCH_IO_OBJECT})
target_link_libraries(les_shared PRIVATE fmt::fmt spdlog::spdlog Threads::Threads PkgConfig::UTF8PROC
                      ${LES_DISPATCH_IO_LIBS})
if(LES_DISPATCH_IO_LIBS)
  # The installed library finds the toolchain's libdispatch.so where it was linked.
  set_target_properties(les_shared PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
endif()
if(LIBURING_FOUND)
  target_link_libraries(les_shared PRIVATE PkgConfig::LIBURING)
endif()
target_include_directories(les_shared PUBLIC $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
                                              $<INSTALL_INTERFACE:include>)
# The C header's version (include/les/les_common.h) is the project's version.
file(STRINGS ${CMAKE_SOURCE_DIR}/include/les/les_common.h les_version_lines REGEX "^#define LES_VERSION_(MAJOR|MINOR|PATCH) ")
string(REGEX REPLACE ".*MAJOR ([0-9]+).*MINOR ([0-9]+).*PATCH ([0-9]+).*" "\\1.\\2.\\3" les_header_version "${les_version_lines}")
if(NOT les_header_version VERSION_EQUAL PROJECT_VERSION)
  message(FATAL_ERROR "include/les/les_common.h says version ${les_header_version}, CMakeLists.txt ${PROJECT_VERSION}")
endif()
# Before 1.0 every minor version may break the ABI, so the soname carries it (libles.so.0.2).
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(les_soversion ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
else()
  set(les_soversion ${PROJECT_VERSION_MAJOR})
endif()
set_target_properties(les_shared PROPERTIES
  OUTPUT_NAME les
  VERSION ${PROJECT_VERSION}
  SOVERSION ${les_soversion}
  CXX_VISIBILITY_PRESET hidden
  VISIBILITY_INLINES_HIDDEN ON
  LINK_DEPENDS ${CMAKE_SOURCE_DIR}/cmake/les.map)
target_link_options(les_shared PRIVATE "LINKER:--version-script=${CMAKE_SOURCE_DIR}/cmake/les.map"
                    "LINKER:--no-undefined")

# Installation: the shared library, the C headers (les.h and the topic headers
# it includes), a pkg-config file and a CMake
# package (find_package(les) -> les::les). The static library is installed too.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set_target_properties(les_shared PROPERTIES EXPORT_NAME les)
install(TARGETS les_shared EXPORT lesTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES $<TARGET_FILE:les_static> DESTINATION ${CMAKE_INSTALL_LIBDIR} RENAME libles.a)
file(GLOB les_public_headers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/include/les/*.h)
install(FILES ${les_public_headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/les)
install(EXPORT lesTargets NAMESPACE les:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/les)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/templates/lesConfig.cmake.in
  ${CMAKE_BINARY_DIR}/lesConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/les)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/lesConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/lesConfig.cmake ${CMAKE_BINARY_DIR}/lesConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/les)
configure_file(${CMAKE_SOURCE_DIR}/cmake/templates/les.pc.in ${CMAKE_BINARY_DIR}/les.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/les.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
