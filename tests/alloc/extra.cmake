# Allocation-failure injection: the project's own malloc/calloc/realloc/strdup/strndup calls are
# routed through a test allocator (the linker's --wrap) that fails the Nth one. Built here rather
# than by the test_*.c loop because it needs those link options.
if(cmocka_FOUND)
  add_executable(alloc_failure ${CMAKE_CURRENT_LIST_DIR}/alloc_failure.c)
  target_link_libraries(alloc_failure PRIVATE epochsim_lib ${CMOCKA_LIBRARIES})
  target_include_directories(alloc_failure PRIVATE ${CMOCKA_INCLUDE_DIR})
  target_compile_definitions(alloc_failure PRIVATE EPOCHSIM_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  target_link_options(alloc_failure PRIVATE -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=strdup,--wrap=strndup)
  add_test(NAME alloc/failure_injection COMMAND alloc_failure)
  set_tests_properties(alloc/failure_injection PROPERTIES ENVIRONMENT "CMOCKA_MESSAGE_OUTPUT=stdout" TIMEOUT 900)
endif()
