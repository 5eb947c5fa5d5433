# ABI tests: exported symbols, the C99 header check, and the installed C consumer.
add_test(NAME api_exported_symbols
         COMMAND ${CMAKE_SOURCE_DIR}/tests/api/check_exports.sh $<TARGET_FILE:les_shared> ${CMAKE_SOURCE_DIR})
# The installed consumer links the plain libles.so; under ASan the library
# needs the ASan runtime first, so this test runs in unsanitized builds only.
if(NOT LES_SANITIZE)
  add_test(NAME api_c_consumer_installed
           COMMAND ${CMAKE_SOURCE_DIR}/tests/api/run_c_consumer.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR}
                   ${LES_FIXTURES_DIR})
  set_tests_properties(api_c_consumer_installed PROPERTIES SKIP_RETURN_CODE 77 RUN_SERIAL TRUE)
endif()
# The header compiles as C99 with every warning an error (STYLE.md 5).
add_library(les_header_c99 OBJECT ${CMAKE_SOURCE_DIR}/tests/api/header_c99.c)
target_include_directories(les_header_c99 PRIVATE ${CMAKE_SOURCE_DIR}/include)
set_target_properties(les_header_c99 PROPERTIES C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(les_header_c99 PRIVATE -Wall -Wextra -Werror -pedantic)
