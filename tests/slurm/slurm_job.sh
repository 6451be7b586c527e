#!/bin/bash
# A real Slurm on this host: munged, slurmctld and slurmd started with a minimal slurm.conf in a
# scratch folder (no cgroups: proctrack/linuxproc, task/none), then the script `scalelab slurm
# --cluster generic` writes is submitted with `sbatch --wait` for a 2-task `scalelab train` and a
# 2-task `bench allreduce`; the records must show 2 ranks, the same losses and accuracies as the
# same training under mpirun, and #wrong 0. The daemons are stopped on every exit.
# Exit 77 (CTest's skip) with one line when the daemons cannot run here (not root, Slurm or munge
# not installed, daemons that do not come up).
# usage: slurm_job.sh SCALELAB WORK_DIR
set -u
scalelab=$1 work=$2
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; for f in "$work"/log/*; do echo "--- $f"; tail -5 "$f"; done; exit 1; }
[ "$(id -u)" -eq 0 ] || skip "the Slurm daemons are started as root here, and this is not root"
for c in munged slurmctld slurmd sbatch sinfo scancel; do
  command -v $c >/dev/null || skip "$c is not installed (Debian: slurmctld slurmd slurm-client munge; tools/install-deps.sh)"
done
rm -rf "$work"; mkdir -p "$work"/state "$work"/spool "$work"/log
host=$(hostname -s)
port=$((20000 + $$ % 20000))
# The daemons are found by the files only they were started with, and waited for (then killed).
cleanup() {
  pkill -f "slurmd -f $work/slurm.conf"; pkill -f "slurmctld -f $work/slurm.conf"; pkill -f "munged --force -S $work/"
  for _ in $(seq 1 20); do
    pgrep -f "$work/" >/dev/null || return 0
    sleep 0.5
  done
  pkill -9 -f "$work/"
}
trap cleanup EXIT
. "$(dirname "$0")/slurm_conf.sh"
write_slurm_conf "$work/slurm.conf" "$work" "$port" "$host" "" <<NODES
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
NODES
export SLURM_CONF=$work/slurm.conf
munged --force -S "$work/munge.socket" --pid-file="$work/munged.pid" --log-file="$work/log/munged.log" \
  || skip "munged does not start here (see $work/log/munged.log)"
slurmctld -f "$SLURM_CONF" || skip "slurmctld does not start here (see $work/log/slurmctld.log)"
slurmd -f "$SLURM_CONF" || skip "slurmd does not start here (see $work/log/slurmd.log)"
for _ in $(seq 1 30); do
  sinfo -h -o %T 2>/dev/null | grep -q idle && break
  sleep 1
done
sinfo -h -o %T 2>/dev/null | grep -q idle || skip "the Slurm node did not come up within 30 s (see $work/log)"

# Training: the generic script for 2 tasks on this node, against the same run under mpirun.
"$scalelab" slurm --cluster generic --nodes 1 --gpus-per-node 0 --ranks-per-node 2 --time 00:05:00 --out "$work/train.sh" \
  -- train --model mlp --max-steps 30 --batch-size 64 --seed 7 --json "$work/train-slurm.json" || fail "scalelab slurm (train)"
SCALELAB=$scalelab timeout 120 sbatch --wait -o "$work/train.out" "$work/train.sh" >/dev/null || fail "the train job failed: $(tail -3 "$work/train.out")"
mpirun --allow-run-as-root --oversubscribe -np 2 "$scalelab" train --model mlp --max-steps 30 --batch-size 64 --seed 7 \
  --json "$work/train-mpirun.json" >/dev/null 2>&1 || fail "the same training under mpirun failed"
python3 - "$work/train-slurm.json" "$work/train-mpirun.json" <<'PY' || fail "the records differ"
import json, sys
s, m = (json.load(open(p)) for p in sys.argv[1:3])
assert s["ranks"] == 2 and s["complete"], (s["ranks"], s["complete"])
keys = ("loss", "accuracy", "test_loss", "test_accuracy")
a = [{k: e[k] for k in keys} for e in s["epochs"]]
b = [{k: e[k] for k in keys} for e in m["epochs"]]
assert a == b, (a, b)
print("train under srun: 2 ranks, losses and accuracies identical to mpirun's:", a)
PY
# The collective benchmark under the same script.
"$scalelab" slurm --cluster generic --nodes 1 --gpus-per-node 0 --ranks-per-node 2 --time 00:05:00 --out "$work/bench.sh" \
  -- bench allreduce -b 1K -e 1M -f 8 --json "$work/bench.json" || fail "scalelab slurm (bench)"
SCALELAB=$scalelab timeout 120 sbatch --wait -o "$work/bench.out" "$work/bench.sh" >/dev/null || fail "the bench job failed: $(tail -3 "$work/bench.out")"
python3 - "$work/bench.json" <<'PY' || fail "bench record"
import json, sys
d = json.load(open(sys.argv[1]))
rows = [r for run in d["runs"] for r in run["results"]]
wrong = [r[p]["wrong"] for r in rows for p in ("in_place", "out_of_place")]
assert rows and all(w == 0 for w in wrong), wrong
assert all(run["benchmark"]["ranks"] == 2 and len(run["ranks"]) == 2 for run in d["runs"])
print("bench under srun: 2 ranks,", len(rows), "sizes, #wrong 0")
PY
echo "PASS: both jobs ran under slurmctld/slurmd on $host"
