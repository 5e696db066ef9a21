# Fuzzing the four parsers (experiment YAML, native msgpack trace, Kineto JSON, sequence-length
# CSV).
# - Always: each harness is linked with fuzz_replay.c and run as an ordinary test over its seed
#   corpus and over tests/fuzz/regressions/<parser>/ (every input that ever crashed), so the
#   normal and the sanitizer builds replay them.
# - With -DEPOCHSIM_FUZZ=ON and clang (tests/fuzz/run.sh does this in its own build folder): the
#   harnesses are built as libFuzzer binaries fuzz_<parser> instead.
set(EPOCHSIM_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})
set(EPOCHSIM_FUZZ_SEEDS_experiment
  ${CMAKE_SOURCE_DIR}/configs/experiments ${CMAKE_SOURCE_DIR}/configs/sweeps
  ${CMAKE_SOURCE_DIR}/tests/data/catalog/gpus)
set(EPOCHSIM_FUZZ_SEEDS_trace ${EPOCHSIM_FUZZ_DIR}/corpus/trace)
set(EPOCHSIM_FUZZ_SEEDS_kineto ${CMAKE_SOURCE_DIR}/tests/data/kineto)
set(EPOCHSIM_FUZZ_SEEDS_seqlen ${CMAKE_SOURCE_DIR}/configs/datasets ${EPOCHSIM_FUZZ_DIR}/corpus/seqlen)
foreach(parser experiment trace kineto seqlen)
  set(sources ${EPOCHSIM_FUZZ_DIR}/fuzz_${parser}.c ${EPOCHSIM_FUZZ_DIR}/fuzz_input.c)
  if(EPOCHSIM_FUZZ)
    add_executable(fuzz_${parser} ${sources})
    target_link_options(fuzz_${parser} PRIVATE -fsanitize=fuzzer)
    target_link_libraries(fuzz_${parser} PRIVATE epochsim_lib)
  else()
    add_executable(fuzz_${parser}_replay ${sources} ${EPOCHSIM_FUZZ_DIR}/fuzz_replay.c)
    target_link_libraries(fuzz_${parser}_replay PRIVATE epochsim_lib)
    add_test(NAME fuzz/${parser}_corpus COMMAND fuzz_${parser}_replay
      ${EPOCHSIM_FUZZ_SEEDS_${parser}} ${EPOCHSIM_FUZZ_DIR}/regressions/${parser})
  endif()
endforeach()
