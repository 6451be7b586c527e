#!/usr/bin/env bash
# A lab step reads the files its earlier steps made only when they were made by that step of this
# lab with the same options and are complete; otherwise one line saying which step to run again,
# exit 2 (never another run's figures, a crash on a half-written record, or a lab record written
# over a step's file); and one run at a time per output folder.
#   lab_earlier_files.sh LAB1 WORK
set -uo pipefail
lab1=$1 work=$2
fail() { echo "FAIL: $*"; exit 1; }
expect() {  # expect CODE PATTERN -- command...
  local code=$1 pattern=$2; shift 3
  "$@" > "$work/out.txt" 2> "$work/err.txt"
  local rc=$?
  cat "$work/err.txt"
  [ "$rc" = "$code" ] || fail "exit $rc, expected $code: $*"
  grep -q -- "$pattern" "$work/err.txt" || fail "stderr lacks '$pattern': $*"
}
rm -rf "$work" && mkdir -p "$work"
A=(--quick --dataset synthetic)
"$lab1" "${A[@]}" --step 1 --out "$work/w" > "$work/step1.txt" 2>&1 || { cat "$work/step1.txt"; fail "step 1"; }
expect 2 "one-rank.json was made with --quick, this run has no --quick; run step 1 again" -- \
  "$lab1" --dataset synthetic --step 5 --out "$work/w"
expect 2 "is the file step 1 writes, and the lab's record would replace it" -- \
  "$lab1" "${A[@]}" --step 1 --out "$work/w2" --json "$work/w2/one-rank.json"
cp "$work/w/one-rank.json" "$work/w/whole.json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['complete']=False; json.dump(d, open(sys.argv[1],'w'))" "$work/w/one-rank.json"
expect 2 "one-rank.json is from a run that did not finish (interrupted?); run step 1 again" -- \
  "$lab1" "${A[@]}" --step 5 --out "$work/w"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d.pop('epochs'); json.dump(d, open(sys.argv[2],'w'))" \
  "$work/w/whole.json" "$work/w/one-rank.json"
"$lab1" "${A[@]}" --step 3 --out "$work/w" > "$work/step3.txt" 2>&1 || { cat "$work/step3.txt"; fail "step 3"; }
expect 2 "a file it reads lacks what it needs" -- "$lab1" "${A[@]}" --step 5 --out "$work/w"
# Two runs into one folder at once: the second is refused while the first holds it.
"$lab1" "${A[@]}" --step 3 --out "$work/w" > "$work/first.txt" 2>&1 &
first=$!
for _ in $(seq 1 100); do [ -f "$work/w/.lab-lock" ] && break; sleep 0.1; done
expect 2 "in use by another job (pid $first); wait for it to finish, or give this run another --out folder" -- \
  "$lab1" "${A[@]}" --step 1 --out "$work/w"
wait "$first" || { cat "$work/first.txt"; fail "the first run failed"; }
[ ! -e "$work/w/.lab-lock" ] || fail "the lock file was left behind"
echo "PASS: earlier steps' files are checked"
