#!/usr/bin/env bash
# `scalelab grade --batch`: a folder with the reference solution (a/) and a folder without
# sources (b/) graded into a CSV and one results.json per submission; a link to a missing folder
# (c) gets a row that says so, and a stray file is named on stderr as skipped:
#   batch_check.sh SCALELAB PREFIX SOLUTION_DIR WORK VALIDATOR SCHEMA
# a/ must score 100 with its results.json valid; b/ must be a CSV row with score 0 and the
# one-line reason; the CSV has a header and one row per folder or link.
set -uo pipefail
scalelab=$1 prefix=$2 solution=$3 work=$4 validator=$5 schema=$6
data_dir=${SCALELAB_DATA_DIR:-/usr/share/datasets/fashion-mnist}
if ! compgen -G "$data_dir/train-images-idx3-ubyte*" > /dev/null; then
  echo "SKIP: no Fashion-MNIST in $data_dir (apt-get install dataset-fashion-mnist, or set SCALELAB_DATA_DIR)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work/in/a" "$work/in/b" "$work/out"
cp "$solution"/*.cpp "$work/in/a/"
echo "no sources here" > "$work/in/b/notes.txt"
ln -s "$work/in/gone" "$work/in/c"
echo "not a submission" > "$work/in/readme.txt"
"$scalelab" grade --batch "$work/in" --prefix "$prefix" --out "$work/out/scores.csv" --ranks 2 --time-limit 120 2> "$work/stderr.txt" ||
  { echo "FAIL: exit $?"; cat "$work/stderr.txt"; exit 1; }
grep -q 'readme.txt skipped: not a folder' "$work/stderr.txt" || { echo "FAIL: the stray file was not named"; cat "$work/stderr.txt"; exit 1; }
echo "--- scores.csv:"; cat "$work/out/scores.csv"
[[ $(wc -l < "$work/out/scores.csv") == 4 ]] || { echo "FAIL: expected a header and 3 rows"; exit 1; }
head -1 "$work/out/scores.csv" | grep -q '^submission,score,max_score,Builds against the installed scalelab,' || { echo "FAIL: header"; exit 1; }
grep -q '^a,100.00,100.00,' "$work/out/scores.csv" || { echo "FAIL: a/ did not score 100"; exit 1; }
grep -q '^b,0,,.*no .cpp file in it' "$work/out/scores.csv" || { echo "FAIL: b/ lacks score 0 and its reason"; exit 1; }
grep -q '^c,0,,.*link to a folder that does not exist' "$work/out/scores.csv" || { echo "FAIL: c (dangling link) lacks its row"; exit 1; }
"$validator" "$schema" "$work/out/a/results.json" || { echo "FAIL: a/results.json"; exit 1; }
[[ ! -e $work/out/b/results.json ]] || { echo "FAIL: b/ was not graded, yet has a results.json"; exit 1; }
echo "PASS: batch CSV and results.json"
