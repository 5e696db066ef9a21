#!/bin/sh
# slurm.sh SOURCE_DIR EPOCHSIM — starts a one-node Slurm (munged, slurmctld -i, slurmd; the node is
# this host as `slurmd -C` sees it, proctrack/linuxproc, task/none), submits a 4-task job array of
# configs/cluster/sweep-array.sh, merges the shards and compares them with `cmp` to the same sweep
# run in one process. The daemons are stopped whatever happens (trap). A missing package, a daemon
# that does not start or a node that does not come up is a FAILURE with the reason and the tail of
# the daemon's log: this test never skips.
set -u
src=$(cd "$1" && pwd) || exit 1
epochsim=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") || exit 1
dir=$(mktemp -d /tmp/epochsim-slurm-XXXXXX) || exit 1
pids=""

fail() {
  echo "FAIL: $1" >&2
  for log in "$dir"/*.log "$dir"/*.out; do
    [ -f "$log" ] && { echo "--- tail of $log" >&2; tail -n 15 "$log" >&2; }
  done
  exit 1
}
cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null; done
  for p in $pids; do
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$p" 2>/dev/null
  done
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

[ "$(id -u)" = 0 ] || fail "needs root to start munged, slurmctld and slurmd (run ctest as root)"
for tool in munged slurmctld slurmd sbatch sinfo; do
  command -v "$tool" >/dev/null || fail "$tool not found: install munge, slurmctld, slurmd and slurm-client (sh .ci/setup --test)"
done

# munge: a fresh key and a private socket, so that no system munged is touched.
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/shards" && chmod 700 "$dir" "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null && chmod 400 "$dir/munge/munge.key"
munged -F --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" \
  --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munged.seed" \
  --log-file="$dir/munged.log" >"$dir/munged.out" 2>&1 &
pids="$!"
for _ in $(seq 50); do [ -S "$dir/munge/munge.sock" ] && break; sleep 0.1; done
[ -S "$dir/munge/munge.sock" ] || fail "munged did not start"

# slurm.conf: this host with its real CPUs and memory; ports away from a system Slurm's.
node=$(slurmd -C | head -n 1) || fail "slurmd -C cannot describe this host"
host=$(echo "$node" | sed 's/^NodeName=\([^ ]*\).*/\1/')
port=$((20000 + $$ % 20000))
export SLURM_CONF="$dir/slurm.conf"
cat > "$SLURM_CONF" <<CONF
ClusterName=epochsim-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
$node State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF

slurmctld -D -i >"$dir/slurmctld.out" 2>&1 &
pids="$pids $!"
slurmd -D >"$dir/slurmd.out" 2>&1 &
pids="$pids $!"
state=""
for _ in $(seq 60); do
  state=$(sinfo -h -o %T 2>/dev/null)
  [ "$state" = idle ] && break
  sleep 0.5
done
[ "$state" = idle ] || fail "the node did not come up (sinfo says '$state')"

# The sweep: 12 points on the test catalog, with one invalid value (error rows merge too).
set -- --catalog "$src/tests/data/catalog" --set system.gpu=test-gpu --set system.cpu=test-cpu-8c \
  --set system.storage=test-nvme --set system.host_memory_gb=64 --set dataset.samples=100000 \
  --set dataset.sample_bytes=1000 --set dataset.input_bytes=1000 --set training.max_steps=20 \
  --sweep loader.batch_size=16,32,abc,64 --sweep loader.num_workers=0,2,4
"$epochsim" sweep "$@" --quiet -o "$dir/single.csv" 2>"$dir/single.err"
[ $? -le 1 ] && [ -s "$dir/single.csv" ] || fail "the single-process sweep: $(cat "$dir/single.err")"

cd "$dir" || fail "cannot enter $dir"
EPOCHSIM=$epochsim sbatch --wait --array=0-3 --output="$dir/task-%a.log" \
  "$src/configs/cluster/sweep-array.sh" "$dir/shards" "$@" >"$dir/sbatch.out" 2>&1
rc=$?
# Exit 1 is a sweep with failed points (the "abc" rows), as in the single run; more is a failure.
[ $rc -le 1 ] || fail "sbatch --wait exited $rc: $(cat "$dir/sbatch.out")"
for i in 0 1 2 3; do
  [ -f "$dir/shards/shard-$i" ] || fail "task $i wrote no shard: $(cat "$dir/task-$i.log" 2>/dev/null)"
done
"$epochsim" sweep merge -o "$dir/merged.csv" "$dir"/shards/shard-* || fail "sweep merge failed"
cmp "$dir/single.csv" "$dir/merged.csv" || fail "the merged shards differ from the single run"
echo "cluster/slurm: 4 array tasks on $host, merged = single run ($(($(wc -l <"$dir/single.csv") - 1)) rows)"
