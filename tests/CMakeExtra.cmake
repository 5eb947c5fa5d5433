# Extra CTests included by tests/CMakeLists.txt.

# `les inspect` on every fixture GGUF, and on truncated copies (must fail with
# the reader's message). Skips (77) without fixtures, fails under CI=true.
if(TARGET les)
  foreach(mode all truncated)
    add_test(NAME tools_inspect_${mode}
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/inspect_fixtures.sh ${mode} $<TARGET_FILE:les>
                     ${LES_FIXTURES_DIR} ${CMAKE_CURRENT_BINARY_DIR}/inspect_${mode})
    set_tests_properties(tools_inspect_${mode} PROPERTIES SKIP_RETURN_CODE 77 LABELS tools)
  endforeach()
endif()

# A short `les run` under valgrind's memcheck: no error of any kind (not under
# the sanitizers, which valgrind cannot run with). Skips (77) without valgrind
# or fixtures, fails under CI=true.
if(TARGET les AND NOT LES_SANITIZE)
  find_program(LES_VALGRIND valgrind)
  if(NOT LES_VALGRIND)
    set(LES_VALGRIND valgrind-not-found)
  endif()
  add_test(NAME tools_run_valgrind
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools/valgrind_run.sh ${LES_VALGRIND} $<TARGET_FILE:les>
                   ${LES_FIXTURES_DIR})
  set_tests_properties(tools_run_valgrind PROPERTIES SKIP_RETURN_CODE 77 LABELS tools)
endif()

# The pretrained files scripts/fetch_pretrained.sh fetches (test_pretrained.cpp;
# the LES_PRETRAINED_DIR environment variable overrides the cache variable).
set_property(SOURCE ${CMAKE_CURRENT_SOURCE_DIR}/core/model/test_pretrained.cpp APPEND PROPERTY
             COMPILE_DEFINITIONS "LES_PRETRAINED_DIR=\"${LES_PRETRAINED_DIR}\"")
