# Architecture check (docs/ARCHITECTURE.md): no #include runs from a lower floor to a higher one.
add_test(NAME arch/floors COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/floors.sh ${CMAKE_SOURCE_DIR})
# The project carries everything it points to (self_contained.sh says what is checked).
add_test(NAME arch/self_contained COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/self_contained.sh ${CMAKE_SOURCE_DIR})
# Every C file is as clang-format writes it (.clang-format).
add_test(NAME arch/format COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/format.sh ${CMAKE_SOURCE_DIR})
