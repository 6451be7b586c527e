#!/bin/bash
# One fault case, run by CTest (tests/faults/CMakeLists.txt registers the matrix):
#   fault_case.sh SCALELAB MPIEXEC WORKDIR KIND PHASE SIGNAL RANKS STALL_TIMEOUT
#   KIND   train | bench | shm (bench with --algo shm): SCALELAB_FAULT_AT=PHASE:<victim>:SIGNAL:<n> (lib/comm/fault_injection.h)
#          stops or kills one rank as it enters PHASE; the victim is rank 0 for the checkpoint
#          (only rank 0 writes it), else the last rank.
#          run: `scalelab run` itself gets SIGNAL while its ranks train (PHASE is ignored).
# Checks: the job ends within STALL_TIMEOUT plus a margin, with a non-zero status; the message
# names the victim rank; the checkpoint written before the fault still resumes (train, after
# epoch 1); no process of the job is left (found by this case's unique work folder in their
# command lines).
set -u
SCALELAB=$1 MPIEXEC=$2 WORK=$3 KIND=$4 PHASE=$5 SIGNAL=$6 RANKS=$7 STALL=$8
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# The job's temporary files (the stall watchdog's heartbeat folder among them) stay in the case's
# folder, which the next run of the case removes.
mkdir -p "$WORK/tmp" && export TMPDIR="$WORK/tmp"
MARGIN=25  # seconds beyond the stall timeout: start-up and mpirun's clean-up on a loaded machine
fail() { echo "FAIL: $*"; cleanup; exit 1; }
cleanup() {
  for p in $(pgrep -f "$WORK/"); do kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
}
leftovers() {  # waits up to 10 s for the job's processes to go; prints those left
  for _ in $(seq 1 20); do
    pgrep -f "$WORK/" > /dev/null || return 0
    sleep 0.5
  done
  pgrep -af "$WORK/"
}

# Four short epochs of four steps; epoch 1's checkpoint is written before any fault below.
TRAIN=(train --dataset synthetic --model mlp --batch-size 32 --max-steps 4 --epochs 3 --checkpoint "$WORK/ckpt.bin"
       --json "$WORK/train.json" --stall-timeout "$STALL")
victim=$((RANKS - 1))
case $KIND/$PHASE in
  train/broadcast) nth=1 ;;
  train/allreduce) nth=6 ;;    # epoch 2, step 2
  train/evaluation) nth=2 ;;   # epoch 2
  train/checkpoint) nth=2; victim=0 ;;
  bench/allreduce | shm/allreduce) nth=20 ;;
  run/*) nth=0 ;;
  *) fail "unknown case $KIND/$PHASE" ;;
esac

start=$(date +%s.%N)
if [ "$KIND" = run ]; then
  # 20 epochs of the cnn: training long after the signal, however fast the engine gets (one epoch
  # of the mlp ended in under a second, before the signal could arrive).
  "$SCALELAB" run -np "$RANKS" -- train --dataset synthetic --model cnn --epochs 20 --no-eval \
      --json "$WORK/run.json" > out.txt 2>&1 &
  launcher=$!
  for _ in $(seq 1 60); do grep -q "^Epoch 1/20" out.txt && break; sleep 0.5; done
  grep -q "^Epoch 1/20" out.txt || fail "training never started"
  start=$(date +%s.%N)
  kill -"$SIGNAL" "$launcher"
  wait "$launcher"
  rc=$?
else
  if [ "$KIND" = train ]; then cmd=("$SCALELAB" "${TRAIN[@]}")
  else
    cmd=("$SCALELAB" bench allreduce -b 1K -e 1K -n 100000 -w 0 --json "$WORK/bench.json" --stall-timeout "$STALL")
    [ "$KIND" = shm ] && cmd+=(--algo shm)  # the survivors wait at shared-memory flags, not in MPI
  fi
  SCALELAB_FAULT_AT="$PHASE:$victim:$SIGNAL:$nth" "$MPIEXEC" -np "$RANKS" -x SCALELAB_FAULT_AT "${cmd[@]}" > out.txt 2>&1
  rc=$?
fi
took=$(echo "$(date +%s.%N) - $start" | bc)
cat out.txt
echo "--- $KIND $PHASE $SIGNAL at $RANKS ranks: exit $rc after $took s"
left=$(leftovers)
[ -z "$left" ] || fail "processes of the job left behind: $left"
[ "$rc" != 0 ] || fail "the job exited 0"
[ "$(echo "$took <= $STALL + $MARGIN" | bc)" = 1 ] || fail "took $took s, more than the stall timeout $STALL s + $MARGIN s"

if [ "$KIND" = run ]; then
  [ "$rc" = $((128 + $(kill -l "$SIGNAL"))) ] || fail "exit $rc, expected 128 + SIG$SIGNAL"
  grep -q "^scalelab run: the job ended by signal $(kill -l "$SIGNAL") " out.txt || fail "no line saying why the job ended"
  exit 0
fi
case $SIGNAL in
  STOP) grep -q "rank $victim stopped making progress" out.txt || fail "no message naming rank $victim as stopped" ;;
  *) grep -qE "rank $victim .*(exited on signal|stopped making progress)" out.txt || fail "no message naming rank $victim" ;;
esac
if [ "$KIND" = train ] && [ "$PHASE" != broadcast ]; then
  [ -f ckpt.bin ] || fail "no checkpoint from epoch 1"
  "$SCALELAB" train --dataset synthetic --model mlp --batch-size 32 --max-steps 4 --epochs 2 --no-eval --quiet \
      --resume "$WORK/ckpt.bin" --json "$WORK/resumed.json" > resume.txt 2>&1 || { cat resume.txt; fail "--resume failed"; }
  python3 -c "import json; d=json.load(open('resumed.json')); e=d['epochs']; assert d['complete'] and [r['epoch'] for r in e] == [2], e" \
      || fail "the resumed run did not continue from epoch 1's checkpoint"
fi
exit 0
