# Real clients of `les serve`: the OpenAI Python SDK (tests/clients/openai_sdk_test.py,
# pinned in requirements-openai.txt), installed by run_openai_sdk_test.sh into a venv
# under this build tree (build/clients/openai-venv) made with Debian's python3 and
# python3-venv. Skips (77) without them, the fixture or the package index; fails under
# CI=true. Not in sanitizer builds (the C++ serve tests cover the server there).
if(TARGET les AND NOT LES_SANITIZE)
  find_program(LES_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(NOT LES_PYTHON3)
    set(LES_PYTHON3 python3)
  endif()
  add_test(NAME clients_openai_sdk_test
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/clients/run_openai_sdk_test.sh ${LES_PYTHON3} $<TARGET_FILE:les>
                   ${LES_FIXTURES_DIR} ${CMAKE_BINARY_DIR}/clients/openai-venv)
  set_tests_properties(clients_openai_sdk_test PROPERTIES SKIP_RETURN_CODE 77 LABELS "tools;clients" TIMEOUT 900)
endif()
