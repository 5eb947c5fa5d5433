# Run by CTest (TEST_INCLUDE_FILES) for one area executable; the variables
# les_ct_* are set by the include file CatchTestCases.cmake generated.
# Lists the executable's test cases per source file into les_ct_list (again
# only when the executable is newer than the list) and adds one test per case
# (and per tier variant); see CatchTestCases.cmake.
if(NOT EXISTS "${les_ct_exe}")
  # Not built: one test that fails, naming what to build.
  add_test("${les_ct_area}_NOT_BUILT" "${les_ct_exe}")
  return()
endif()

# One line per case: <file> TAB <case name>; hidden cases ([.]: reference
# generators run by hand) are not listed. Semicolons and square brackets
# (which split and nest CMake lists) are stored as the placeholders below.
set(les_ct_semicolon "<LES_SEMICOLON>")
set(les_ct_lbracket "<LES_LBRACKET>")
set(les_ct_rbracket "<LES_RBRACKET>")
if(NOT EXISTS "${les_ct_list}" OR "${les_ct_exe}" IS_NEWER_THAN "${les_ct_list}")
  set(les_ct_lines "")
  foreach(les_ct_file ${les_ct_files})
    execute_process(COMMAND ${les_ct_emulator} "${les_ct_exe}" "[#${les_ct_file}]~[.]" "-#" --list-test-names-only
                    OUTPUT_VARIABLE les_ct_out RESULT_VARIABLE les_ct_rc)
    if(NOT les_ct_rc MATCHES "^[0-9]+$")
      add_test("${les_ct_area}_${les_ct_file}_LIST_FAILED" "${les_ct_exe}" "[#${les_ct_file}]" "-#" --list-test-names-only)
      continue()
    endif()
    string(REPLACE ";" "${les_ct_semicolon}" les_ct_out "${les_ct_out}")
    string(REPLACE "[" "${les_ct_lbracket}" les_ct_out "${les_ct_out}")
    string(REPLACE "]" "${les_ct_rbracket}" les_ct_out "${les_ct_out}")
    string(REPLACE "\n" ";" les_ct_out "${les_ct_out}")
    foreach(les_ct_case ${les_ct_out})
      if(NOT les_ct_case STREQUAL "")
        string(APPEND les_ct_lines "${les_ct_file}\t${les_ct_case}\n")
      endif()
    endforeach()
  endforeach()
  file(WRITE "${les_ct_list}" "${les_ct_lines}")
endif()

file(STRINGS "${les_ct_list}" les_ct_entries)
foreach(les_ct_entry ${les_ct_entries})
  string(FIND "${les_ct_entry}" "\t" les_ct_tab)
  string(SUBSTRING "${les_ct_entry}" 0 ${les_ct_tab} les_ct_file)
  math(EXPR les_ct_tab "${les_ct_tab} + 1")
  string(SUBSTRING "${les_ct_entry}" ${les_ct_tab} -1 les_ct_case)
  string(REPLACE "${les_ct_semicolon}" ";" les_ct_case "${les_ct_case}")
  string(REPLACE "${les_ct_lbracket}" "[" les_ct_case "${les_ct_case}")
  string(REPLACE "${les_ct_rbracket}" "]" les_ct_case "${les_ct_case}")
  # The case as a Catch2 test spec: its special characters escaped.
  set(les_ct_spec "${les_ct_case}")
  foreach(les_ct_char "\\" "," "[" "]")
    string(REPLACE "${les_ct_char}" "\\${les_ct_char}" les_ct_spec "${les_ct_spec}")
  endforeach()
  set(les_ct_name "${les_ct_area}_${les_ct_file}/${les_ct_case}")
  add_test("${les_ct_name}" ${les_ct_emulator} "${les_ct_exe}" "${les_ct_spec}")
  set_tests_properties("${les_ct_name}" PROPERTIES SKIP_RETURN_CODE 77 LABELS "${les_ct_area}"
                       ENVIRONMENT "LES_TEST_BINARY_DIR=${les_ct_binary_dir}")
  list(FIND les_ct_tier_files "${les_ct_file}" les_ct_tier_index)  # (IN_LIST needs a policy a CTest script lacks)
  if(les_ct_tier_index GREATER -1)
    foreach(les_ct_tier ${les_ct_tiers})
      set(les_ct_tname "${les_ct_area}_${les_ct_file}_tier_${les_ct_tier}/${les_ct_case}")
      add_test("${les_ct_tname}" ${les_ct_emulator} "${les_ct_exe}" "${les_ct_spec}")
      set_tests_properties("${les_ct_tname}" PROPERTIES SKIP_RETURN_CODE 77 LABELS "${les_ct_area};tier"
                           ENVIRONMENT "LES_KERNEL_TIER=${les_ct_tier};LES_TEST_TIER_VARIANT=${les_ct_tier};LES_TEST_BINARY_DIR=${les_ct_binary_dir}")
    endforeach()
  endif()
endforeach()
