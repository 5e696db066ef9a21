# Installing: a tree built with an unreachable compiled-in catalog, installed into a temporary
# prefix, runs from there (tests/install/install.sh). Not repeated in the sanitizer build: it
# builds its own tree, so that pass would do the same work twice.
if(NOT EPOCHSIM_SANITIZE)
  add_test(NAME install/prefix
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/install.sh ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(install/prefix PROPERTIES TIMEOUT 600)
endif()
