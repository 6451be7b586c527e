#!/usr/bin/env bash
# The public API end to end: install scalelab into a temporary prefix, build tests/api/example
# against it, run it at 1 and 2 ranks; each run must print its accuracy and report identical
# parameters on every rank.
#   run_example.sh BUILD_DIR WORK MPIEXEC [MPIEXEC_FLAGS...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
data_dir=${SCALELAB_DATA_DIR:-/usr/share/datasets/fashion-mnist}
if ! compgen -G "$data_dir/train-images-idx3-ubyte*" > /dev/null; then
  echo "SKIP: no Fashion-MNIST in $data_dir (apt-get install dataset-fashion-mnist, or set SCALELAB_DATA_DIR)"
  exit 77
fi
build_dir=$1 work=$2 mpiexec=$3
shift 3
# docs/api.md's copy of the example is this file, exactly.
doc="$here/../../docs/api.md"
diff <(awk '/^<!-- example: tests\/api\/example\/main.cpp -->$/ { getline; on = 1; next } on && /^```$/ { exit } on' "$doc") \
     "$here/example/main.cpp" || { echo "FAIL: docs/api.md's example differs from tests/api/example/main.cpp"; exit 1; }
"$here/build_installed.sh" "$build_dir" "$work" "$here/example"
for n in 1 2; do
  out=$("$mpiexec" "$@" -n "$n" "$work/example/train_example" 1 60 2>&1) ||
    { echo "$out"; echo "FAIL: train_example at $n ranks exited non-zero"; exit 1; }
  echo "$out"
  grep -q "^epoch 1: train loss [0-9.]*, test accuracy 0\.[0-9]*$" <<< "$out" ||
    { echo "FAIL: no accuracy line at $n ranks"; exit 1; }
  grep -q "^ranks $n, parameters identical across ranks$" <<< "$out" ||
    { echo "FAIL: parameters not reported identical at $n ranks"; exit 1; }
done
echo "PASS: installed, built out of tree, ran at 1 and 2 ranks"
