# README command 1 must work without the test dependencies: build a second tree with cmocka hidden
# and run the default scenario from it. Not repeated in the sanitizer build: it builds its own tree
# without sanitizers, so that pass would only do the same work twice.
if(NOT EPOCHSIM_SANITIZE)
  add_test(NAME quickstart/without_cmocka
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/without_cmocka.sh ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(quickstart/without_cmocka PROPERTIES TIMEOUT 600)
endif()
