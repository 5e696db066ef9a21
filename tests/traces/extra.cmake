# Side by side: the recorded ResNet-50 traces (Kineto) against epochsim's timeline of their
# replay on the same machine. traces/compare_timeline.py measures both the same way (per step:
# wall time, GPU kernels and copies, GPU busy, idle gaps, data wait); the medians of step time,
# GPU item count and GPU busy must agree within 5 %, the same bound as the replay check.
foreach(run nw0 nw4)
  if(run STREQUAL "nw0")
    set(dir resnet50_num_workers_0)
    set(file worker0.1623143089861.pt.trace.json.gz)
  else()
    set(dir resnet50_num_workers_4)
    set(file worker0.1623212756351.pt.trace.json.gz)
  endif()
  add_test(NAME traces/timeline_side_by_side_${run}
    COMMAND sh -c "\"$1\" run \"$2\" --timeline \"$3\" --timeline-steps 8 --quiet && python3 \"$4\" \"$5\" \"$3\" --check 0.05"
      sh $<TARGET_FILE:epochsim>
      ${CMAKE_SOURCE_DIR}/configs/experiments/replay-resnet50-${run}.yaml
      ${CMAKE_CURRENT_BINARY_DIR}/side-by-side-${run}.json
      ${CMAKE_SOURCE_DIR}/traces/compare_timeline.py
      ${CMAKE_SOURCE_DIR}/tests/data/validation-traces/kineto/${dir}/${file})
endforeach()
