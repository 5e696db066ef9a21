# A one-node Slurm started inside the test runs a 4-shard sweep as a job array (the script of
# docs/cluster.md); the merged shards must equal the single-process sweep byte for byte. It needs
# root and the Debian packages munge, slurmctld, slurmd and slurm-client (.ci/setup --test); where
# they are missing or a daemon does not start it fails with the reason, it never skips.
add_test(NAME cluster/slurm
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/slurm.sh ${CMAKE_SOURCE_DIR} $<TARGET_FILE:epochsim>)
set_tests_properties(cluster/slurm PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE)
