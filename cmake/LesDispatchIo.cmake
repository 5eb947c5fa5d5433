# The dispatch_io I/O backend (src/io/dispatch_io_backend.cpp): libdispatch's
# dispatch_io, whose handlers are blocks, so that one file needs a compiler with
# -fblocks and the BlocksRuntime.
#
#   LES_IO_DISPATCH = AUTO (default): built when found; ON: required (configure
#   fails naming what is missing); OFF: not built (`--io dispatch` then answers
#   LES_ERR_UNSUPPORTED).
#
# Apple: libdispatch is part of the system and the C++ compiler (Apple clang)
# has blocks; the file joins les_obj like any other, with -fblocks.
#
# Linux: libdispatch, its headers and the BlocksRuntime come with the Swift
# toolchain (LES_DISPATCH_ROOT, default <dir of `swift`>/../lib/swift: dispatch/,
# Block/, linux/libdispatch.so, linux/libBlocksRuntime.so). GCC has no blocks,
# so this one file is compiled by the toolchain's clang++ (LES_BLOCKS_CXX, found
# next to `swift`) while the rest of LES uses the project's compiler. It is C++
# against the same libstdc++ headers and library as the rest (clang on Linux
# uses the system's GCC installation: same Itanium C++ ABI, same libstdc++), and
# takes the same language level, build-type flags, visibility, PIC and
# sanitizer flags; its headers use only the standard library and LES's own.
# The object goes into libles.a and libles.so, which link libdispatch.so and
# libBlocksRuntime.so (rpath: the toolchain's library folder).
#
# Result: LES_HAVE_DISPATCH_IO (TRUE/FALSE); when TRUE the compile definition
# LES_HAVE_DISPATCH_IO=1 (cmake/LesLibrary.cmake: io_factory.cpp and les_obj's
# users) and LES_DISPATCH_IO_OBJECT (the
# object file for les_static / les_shared on Linux, empty on Apple) and
# LES_DISPATCH_IO_LIBS (the libraries to link).

set(LES_IO_DISPATCH AUTO CACHE STRING "Build the dispatch_io backend: AUTO (when found), ON (required), OFF")
set_property(CACHE LES_IO_DISPATCH PROPERTY STRINGS AUTO ON OFF)
set(LES_HAVE_DISPATCH_IO FALSE)
set(LES_DISPATCH_IO_OBJECT "")
set(LES_DISPATCH_IO_LIBS "")
set(les_dispatch_source ${CMAKE_SOURCE_DIR}/src/io/dispatch_io_backend.cpp)

function(les_dispatch_unavailable why)
  if(LES_IO_DISPATCH STREQUAL "ON")
    message(FATAL_ERROR "LES_IO_DISPATCH=ON but ${why}")
  endif()
  message(STATUS "dispatch_io backend: not built (${why})")
endfunction()

if(LES_IO_DISPATCH STREQUAL "OFF")
  message(STATUS "dispatch_io backend: off (LES_IO_DISPATCH=OFF)")
elseif(APPLE)
  set(LES_HAVE_DISPATCH_IO TRUE)
  set_source_files_properties(${les_dispatch_source} PROPERTIES COMPILE_OPTIONS -fblocks)
  message(STATUS "dispatch_io backend: system libdispatch")
elseif(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
  les_dispatch_unavailable("only Apple systems and Linux are supported")
else()
  find_program(LES_SWIFT_EXECUTABLE swift)
  set(les_swift_root "")
  if(LES_SWIFT_EXECUTABLE)
    get_filename_component(les_swift_real ${LES_SWIFT_EXECUTABLE} REALPATH)
    get_filename_component(les_swift_bin ${les_swift_real} DIRECTORY)
    get_filename_component(les_swift_root ${les_swift_bin}/../lib/swift ABSOLUTE)
  endif()
  set(LES_DISPATCH_ROOT "${les_swift_root}" CACHE PATH
      "Folder with dispatch/, Block/ and linux/libdispatch.so (the Swift toolchain's lib/swift)")
  if(les_swift_bin)
    find_program(LES_BLOCKS_CXX NAMES clang++ HINTS ${les_swift_bin} NO_DEFAULT_PATH)
  endif()
  set(les_dispatch_lib ${LES_DISPATCH_ROOT}/linux/libdispatch.so)
  set(les_blocks_lib ${LES_DISPATCH_ROOT}/linux/libBlocksRuntime.so)
  if(NOT LES_DISPATCH_ROOT OR NOT EXISTS ${LES_DISPATCH_ROOT}/dispatch/dispatch.h)
    les_dispatch_unavailable("no dispatch/dispatch.h in LES_DISPATCH_ROOT='${LES_DISPATCH_ROOT}' (install the Swift toolchain or set LES_DISPATCH_ROOT)")
  elseif(NOT EXISTS ${les_dispatch_lib} OR NOT EXISTS ${les_blocks_lib})
    les_dispatch_unavailable("${les_dispatch_lib} or ${les_blocks_lib} is missing")
  elseif(NOT LES_BLOCKS_CXX)
    les_dispatch_unavailable("no clang++ next to swift for the blocks file (set LES_BLOCKS_CXX)")
  else()
    set(LES_HAVE_DISPATCH_IO TRUE)
    set(LES_DISPATCH_IO_LIBS ${les_dispatch_lib} ${les_blocks_lib})
    set(LES_DISPATCH_IO_OBJECT ${CMAKE_BINARY_DIR}/les_dispatch_io/dispatch_io_backend.cpp.o)
    message(STATUS "dispatch_io backend: ${les_dispatch_lib}, compiled by ${LES_BLOCKS_CXX}")
  endif()
endif()

# The compile rule of the blocks file on Linux (called once les_obj exists).
function(les_add_dispatch_io_object)
  if(NOT LES_DISPATCH_IO_OBJECT)
    return()
  endif()
  string(TOUPPER "${CMAKE_BUILD_TYPE}" config)
  separate_arguments(base_flags UNIX_COMMAND "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${config}}")
  set(flags -std=c++20 -fblocks -fPIC -fvisibility=hidden -fvisibility-inlines-hidden -Wall -Wextra
      ${base_flags} -DLES_BUILDING_LIBRARY=1 -DLES_HAVE_DISPATCH_IO=1
      -I${CMAKE_SOURCE_DIR}/src -I${CMAKE_SOURCE_DIR}/include -isystem ${LES_DISPATCH_ROOT})
  if(LES_SANITIZE)
    # Clang's instrumentation against GCC's libasan/libubsan (the link uses g++): the
    # entry points match; -fsanitize=function has no handler in GCC's libubsan.
    list(APPEND flags -fsanitize=address,undefined -fno-sanitize=function -fno-omit-frame-pointer
         -fno-sanitize-recover=undefined)
  endif()
  set(launcher "")
  if(CCACHE_PROGRAM)
    set(launcher ${CCACHE_PROGRAM})
  endif()
  file(RELATIVE_PATH rel_obj ${CMAKE_BINARY_DIR} ${LES_DISPATCH_IO_OBJECT})
  add_custom_command(OUTPUT ${LES_DISPATCH_IO_OBJECT}
    COMMAND ${launcher} ${LES_BLOCKS_CXX} ${flags} -MD -MF ${LES_DISPATCH_IO_OBJECT}.d
            -c ${les_dispatch_source} -o ${LES_DISPATCH_IO_OBJECT}
    DEPENDS ${les_dispatch_source}
    DEPFILE ${LES_DISPATCH_IO_OBJECT}.d
    COMMENT "Building CXX object ${rel_obj} (blocks: ${LES_BLOCKS_CXX})"
    VERBATIM)
endfunction()
