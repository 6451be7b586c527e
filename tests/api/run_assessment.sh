#!/usr/bin/env bash
# The assessment exercise end to end: install scalelab into a temporary prefix, build
# labs/assessment/starter and labs/assessment/solution against it; the starter must run at 1 rank;
# the solution, at 1, 2 and 3 ranks, must reach the accuracy target stated in the students'
# README, end with identical parameters on every rank, leave its log and checkpoint, and leave a
# behaviour trace (SCALELAB_TRACE_FD) that shows the data-parallel steps (check_trace).
#   run_assessment.sh BUILD_DIR WORK LABS_DIR MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
data_dir=${SCALELAB_DATA_DIR:-/usr/share/datasets/fashion-mnist}
if ! compgen -G "$data_dir/train-images-idx3-ubyte*" > /dev/null; then
  echo "SKIP: no Fashion-MNIST in $data_dir (apt-get install dataset-fashion-mnist, or set SCALELAB_DATA_DIR)"
  exit 77
fi
build_dir=$1 work=$2 labs=$3 mpiexec=$4
shift 4
target=$(sed -n 's/^Accuracy target: \*\*\([0-9.]*\)\*\*.*/\1/p' "$labs/starter/README.md")
[[ -n $target ]] || { echo "FAIL: no 'Accuracy target: **X**' line in $labs/starter/README.md"; exit 1; }
"$here/build_installed.sh" "$build_dir" "$work" "$labs/starter" "$labs/solution"

# What the solution's trace must show at N ranks: every rank started and ended; the same
# collectives in the same order on every rank; disjoint training shards; only rank 0 wrote a file;
# a warmed-up learning rate at several ranks (the first step's below the last).
check_trace() {
  local trace=$1 n=$2 r
  [[ $(grep -c '"event":"start"' "$trace") == "$n" && $(grep -c '"event":"end"' "$trace") == "$n" ]] ||
    { echo "FAIL: $trace: not one start and one end per rank"; exit 1; }
  for ((r = 0; r < n; ++r)); do
    grep "\"rank\":$r,\"event\":\"collective\"" "$trace" | sed 's/.*"op":"\([a-z]*\)","call":"\([^"]*\)".*/\1 \2/' > "$trace.ops.$r"
    cmp -s "$trace.ops.0" "$trace.ops.$r" || { echo "FAIL: $trace: rank $r's collectives differ from rank 0's"; exit 1; }
  done
  [[ -s $trace.ops.0 ]] || { echo "FAIL: $trace: no collectives"; exit 1; }
  local all dups
  all=$(grep '"dataset":"fashion-mnist train"' "$trace" | sed 's/.*"indices":\[\([0-9,]*\)\].*/\1/' | tr ',' '\n')
  dups=$(sort -n <<< "$all" | uniq -d | wc -l)
  [[ $dups == 0 && -n $all ]] || { echo "FAIL: $trace: $dups training samples read by more than one rank"; exit 1; }
  ! grep '"event":"file"' "$trace" | grep -qv '"rank":0,' || { echo "FAIL: $trace: a rank other than 0 wrote a file"; exit 1; }
  local lrs
  lrs=$(grep '"rank":0,"event":"step"' "$trace" | sed 's/.*"lr":\([0-9.e+-]*\).*/\1/')
  # Horovod's warm-up starts from base_lr and climbs to base_lr * N: flat at one rank.
  awk -v a="$(head -1 <<< "$lrs")" -v b="$(tail -1 <<< "$lrs")" -v n="$n" 'BEGIN { exit !(n == 1 ? a == b : a < b) }' ||
    { echo "FAIL: $trace: no warm-up (first lr $(head -1 <<< "$lrs"), last $(tail -1 <<< "$lrs"))"; exit 1; }
  echo "trace at $n ranks: $(wc -l < "$trace") lines, $(wc -l < "$trace.ops.0") collectives per rank, $(wc -l <<< "$all") distinct training samples"
}

out=$("$mpiexec" "$@" -n 1 "$work/starter/train" "$work/starter_out" 2>&1) ||
  { echo "$out"; echo "FAIL: the starter exited non-zero at 1 rank"; exit 1; }
echo "starter, 1 rank: $out"
grep -q "^final test accuracy 0\.[0-9]*$" <<< "$out" || { echo "FAIL: the starter printed no accuracy"; exit 1; }

# The untouched starter at 2 ranks is not data-parallel: its trace must fail the checks.
trace="$work/starter_trace_2.jsonl"
exec 9> "$trace"
SCALELAB_TRACE_FD="$$:9" "$mpiexec" "$@" -x SCALELAB_TRACE_FD -n 2 "$work/starter/train" "$work/starter_out_2" > /dev/null 2>&1 ||
  { echo "FAIL: the starter exited non-zero at 2 ranks"; exit 1; }
exec 9>&-
if verdict=$(check_trace "$trace" 2); then
  echo "FAIL: the starter's trace at 2 ranks passed the checks: $verdict"; exit 1
fi
echo "starter, 2 ranks, trace rejected as expected: $verdict"

for n in 1 2 3; do
  dir="$work/solution_out_$n"
  # The behaviour trace through this shell's descriptor 9 (PID:N: Open MPI closes inherited ones).
  trace="$work/solution_trace_$n.jsonl"
  exec 9> "$trace"
  out=$(SCALELAB_TRACE_FD="$$:9" "$mpiexec" "$@" -x SCALELAB_TRACE_FD -n "$n" "$work/solution/train" "$dir" 2>&1) ||
    { echo "$out"; echo "FAIL: the solution exited non-zero at $n ranks"; exit 1; }
  exec 9>&-
  check_trace "$trace" "$n"
  echo "solution, $n ranks: $out"
  grep -q "^parameters identical across $n ranks$" <<< "$out" ||
    { echo "FAIL: parameters not identical across $n ranks"; exit 1; }
  acc=$(sed -n 's/^final test accuracy \([0-9.]*\)$/\1/p' <<< "$out")
  [[ -n $acc ]] || { echo "FAIL: no accuracy at $n ranks"; exit 1; }
  awk -v a="$acc" -v t="$target" 'BEGIN { exit !(a >= t) }' ||
    { echo "FAIL: accuracy $acc below the target $target at $n ranks"; exit 1; }
  [[ -s $dir/model.ckpt && -s $dir/train.log ]] || { echo "FAIL: no model.ckpt or train.log in $dir"; exit 1; }
  grep -q "^epoch 1 ranks $n " "$dir/train.log" || { echo "FAIL: $dir/train.log lacks the epoch line"; exit 1; }
done
echo "PASS: starter runs; solution reaches $target with identical parameters at 1, 2 and 3 ranks"
