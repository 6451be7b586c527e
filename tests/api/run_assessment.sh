#!/usr/bin/env bash
# The assessment exercise end to end: install scalelab into a temporary prefix, build
# labs/assessment/starter and labs/assessment/solution against it; the starter must run at 1 rank;
# the solution, at 1, 2 and 3 ranks, must reach the accuracy target stated in the students'
# README, end with identical parameters on every rank, and leave its log and checkpoint.
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

out=$("$mpiexec" "$@" -n 1 "$work/starter/train" "$work/starter_out" 2>&1) ||
  { echo "$out"; echo "FAIL: the starter exited non-zero at 1 rank"; exit 1; }
echo "starter, 1 rank: $out"
grep -q "^final test accuracy 0\.[0-9]*$" <<< "$out" || { echo "FAIL: the starter printed no accuracy"; exit 1; }

for n in 1 2 3; do
  dir="$work/solution_out_$n"
  out=$("$mpiexec" "$@" -n "$n" "$work/solution/train" "$dir" 2>&1) ||
    { echo "$out"; echo "FAIL: the solution exited non-zero at $n ranks"; exit 1; }
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
