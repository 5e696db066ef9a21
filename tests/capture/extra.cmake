# The capture harness (traces/capture/, Python) run on the CPU with Debian's python3-torch:
# a few tiny training runs whose JSON/CSV output is checked against the documented schema.
# Uses /usr/bin/python3 on purpose: the python3 on PATH may be another one without torch.
add_test(NAME capture/cpu COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_capture_cpu.py)
set_tests_properties(capture/cpu PROPERTIES TIMEOUT 300)
# kernels.py (the per-kernel probe a GPU session runs) at tiny shapes on the CPU.
add_test(NAME capture/kernels COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/test_kernels_cpu.py)
set_tests_properties(capture/kernels PROPERTIES TIMEOUT 300)
