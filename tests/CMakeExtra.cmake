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

# Chat templates against Jinja2 itself (python3-jinja2; skipped when absent):
# the committed expectations are still what Jinja2 renders, and LES (through
# the jinja_render helper) renders every template as Jinja2 does live.
add_executable(jinja_render support/jinja_render.cpp)
target_link_libraries(jinja_render PRIVATE les_test_main ${LES_TEST_LINK})
find_program(LES_PYTHON3 python3)
if(LES_PYTHON3)
  set(les_jinja_dir ${CMAKE_CURRENT_SOURCE_DIR}/core/chat/jinja)
  add_test(NAME core_jinja_expectations_current COMMAND ${LES_PYTHON3} ${les_jinja_dir}/render_reference.py --check)
  add_test(NAME core_jinja_vs_jinja2
           COMMAND ${LES_PYTHON3} ${les_jinja_dir}/render_reference.py --les $<TARGET_FILE:jinja_render>)
  set_tests_properties(core_jinja_expectations_current core_jinja_vs_jinja2 PROPERTIES SKIP_RETURN_CODE 77
                       LABELS core)
endif()
