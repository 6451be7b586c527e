#!/usr/bin/env bash
# `scalelab grade --package`: the zip holds setup.sh and run_autograder (executable, valid bash)
# and scalelab's sources; run_autograder, pointed at a stand-in /autograder (AUTOGRADER_ROOT) and
# at this build's install (SCALELAB_HOME), grades the reference solution to full marks.
# setup.sh itself (apt-get, a full build) is checked for syntax only: it is not run here.
#   package_check.sh SCALELAB PREFIX SOLUTION_DIR WORK VALIDATOR SCHEMA
set -uo pipefail
scalelab=$1 prefix=$2 solution=$3 work=$4 validator=$5 schema=$6
data_dir=${SCALELAB_DATA_DIR:-/usr/share/datasets/fashion-mnist}
if ! compgen -G "$data_dir/train-images-idx3-ubyte*" > /dev/null; then
  echo "SKIP: no Fashion-MNIST in $data_dir (apt-get install dataset-fashion-mnist, or set SCALELAB_DATA_DIR)"
  exit 77
fi
command -v unzip > /dev/null || { echo "SKIP: no unzip here"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
"$scalelab" grade --package "$work/autograder.zip" --ranks 2 --time-limit 120 || { echo "FAIL: exit $?"; exit 1; }
unzip -q "$work/autograder.zip" -d "$work/zip" || { echo "FAIL: not a zip"; exit 1; }
for f in setup.sh run_autograder; do
  [[ -x $work/zip/$f ]] || { echo "FAIL: $f missing or not executable"; exit 1; }
  bash -n "$work/zip/$f" || { echo "FAIL: $f is not valid bash"; exit 1; }
done
for f in CMakeLists.txt lib/grade/grader.cpp include/scalelab/scalelab.h labs/assessment/starter/train.cpp; do
  [[ -f $work/zip/source/$f ]] || { echo "FAIL: source/$f missing"; exit 1; }
done
! compgen -G "$work/zip/source/build*" > /dev/null || { echo "FAIL: build folders packaged"; exit 1; }
grep -q -- "--ranks 2 --time-limit 120" "$work/zip/run_autograder" || { echo "FAIL: the options did not reach run_autograder"; exit 1; }
# Gradescope's layout, elsewhere: the submission, and scalelab installed with its binary.
mkdir -p "$work/root/submission" "$work/home/bin"
cp "$solution"/*.cpp "$work/root/submission/"
cp -r "$prefix"/. "$work/home/"
cp "$scalelab" "$work/home/bin/scalelab"
AUTOGRADER_ROOT="$work/root" SCALELAB_HOME="$work/home" "$work/zip/run_autograder" || { echo "FAIL: run_autograder exited $?"; exit 1; }
"$validator" "$schema" "$work/root/results/results.json" || { echo "FAIL: results.json"; exit 1; }
grep -q '"score": 100' "$work/root/results/results.json" || { echo "FAIL: the solution did not score 100"; exit 1; }
echo "PASS: package unzips, its scripts parse, run_autograder grades the solution to 100"
