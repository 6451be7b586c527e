#!/usr/bin/env bash
# A lab step reads the files its earlier steps made only when they were made by that step of this
# lab with the same options and are complete; otherwise one line saying which step to run again,
# exit 2 (never another run's figures, a crash on a half-written record, or a lab record written
# over a step's file); and one run at a time per output folder. The steps train on a small IDX
# folder (1,024 training and 256 test images) rather than the quick variant's 10,240 images: what
# is checked here is the files, and a dozen lab runs on the larger set took 3.5 minutes on 2 cores.
#   lab_earlier_files.sh LAB1 WORK MAKE_IDX_FIXTURE
set -uo pipefail
lab1=$1 work=$2 make_idx=$3
fail() { echo "FAIL: $*"; exit 1; }
expect() {  # expect CODE PATTERN -- command...
  local code=$1 pattern=$2; shift 3
  "$@" > "$work/out.txt" 2> "$work/err.txt"
  local rc=$?
  cat "$work/err.txt"
  [ "$rc" = "$code" ] || fail "exit $rc, expected $code: $*"
  grep -q -- "$pattern" "$work/err.txt" || fail "stderr lacks '$pattern': $*"
}
rm -rf "$work" && mkdir -p "$work/data"
"$make_idx" "$work/data" 1024 256 || fail "could not write the IDX fixture"
A=(--quick --dataset "$work/data")
"$lab1" "${A[@]}" --step 1 --out "$work/w" > "$work/step1.txt" 2>&1 || { cat "$work/step1.txt"; fail "step 1"; }
expect 2 "one-rank.json was made with --quick, this run has no --quick; run step 1 again" -- \
  "$lab1" --dataset "$work/data" --step 5 --out "$work/w"
expect 2 "is the file step 1 writes, and the lab's record would replace it" -- \
  "$lab1" "${A[@]}" --step 1 --out "$work/w2" --json "$work/w2/one-rank.json"
cp "$work/w/one-rank.json" "$work/w/whole.json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['complete']=False; json.dump(d, open(sys.argv[1],'w'))" "$work/w/one-rank.json"
expect 2 "one-rank.json is from a run that did not finish (interrupted?); run step 1 again" -- \
  "$lab1" "${A[@]}" --step 5 --out "$work/w"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d.pop('epochs'); json.dump(d, open(sys.argv[2],'w'))" \
  "$work/w/whole.json" "$work/w/one-rank.json"
"$lab1" "${A[@]}" --step 3 --out "$work/w" > "$work/step3.txt" 2>&1 || { cat "$work/step3.txt"; fail "step 3"; }
expect 2 'one-rank.json: its "epochs" list is missing or empty; run the step that writes it again' -- \
  "$lab1" "${A[@]}" --step 5 --out "$work/w"
# An empty list (a record damaged since) is the same error, not a crash.
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['epochs']=[]; json.dump(d, open(sys.argv[2],'w'))" \
  "$work/w/whole.json" "$work/w/one-rank.json"
expect 2 'one-rank.json: its "epochs" list is missing or empty' -- "$lab1" "${A[@]}" --step 5 --out "$work/w"
# Two runs into one folder at once: the second is refused while the first holds it.
"$lab1" "${A[@]}" --step 3 --out "$work/w" > "$work/first.txt" 2>&1 &
first=$!
for _ in $(seq 1 100); do [ -f "$work/w/.lab-lock" ] && break; sleep 0.1; done
expect 2 "in use by another job (pid $first); wait for it to finish, or give this run another --out folder" -- \
  "$lab1" "${A[@]}" --step 1 --out "$work/w"
wait "$first" || { cat "$work/first.txt"; fail "the first run failed"; }
[ ! -e "$work/w/.lab-lock" ] || fail "the lock file was left behind"
# One step run again keeps the other steps of the lab's record (same options), replaces its own,
# and the status covers them all; a run with other options starts a new record.
steps() {  # steps FILE -> each step's number and f (failed) or p (passed or, on a busy machine, unreliable), then the lab's
  python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
ok = lambda s: 'failed' if s == 'failed' else 'passed'
print(','.join(str(s['number']) + ok(s['status'])[0] for s in d['steps']) + ':' + ok(d['status']))" "$1"
}
w3="$work/w3"
"$lab1" "${A[@]}" --step 1 --out "$w3" > "$work/r1.txt" 2>&1 || { cat "$work/r1.txt"; fail "step 1 in w3"; }
"$lab1" "${A[@]}" --step 3 --out "$w3" > "$work/r3.txt" 2>&1 || { cat "$work/r3.txt"; fail "step 3 in w3"; }
grep -q "with the other steps of the earlier run it held" "$work/r3.txt" || fail "step 3 did not say it kept step 1"
[ "$(steps "$w3/lab1.json")" = "1p,3p:passed" ] || fail "after steps 1 and 3: $(steps "$w3/lab1.json")"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d.pop('epochs'); json.dump(d, open(sys.argv[1],'w'))" "$w3/one-rank.json"
expect 2 'one-rank.json: its "epochs" list is missing or empty' -- "$lab1" "${A[@]}" --step 5 --out "$w3"
[ "$(steps "$w3/lab1.json")" = "1p,3p,5f:failed" ] || fail "after a failed step 5: $(steps "$w3/lab1.json")"
"$lab1" "${A[@]}" --step 1 --out "$w3" > "$work/r1.txt" 2>&1 || { cat "$work/r1.txt"; fail "step 1 again"; }
[ "$(steps "$w3/lab1.json")" = "1p,3p,5f:failed" ] || fail "after step 1 again: $(steps "$w3/lab1.json")"
"$lab1" "${A[@]}" --step 5 --out "$w3" > "$work/r5.txt" 2>&1 || { cat "$work/r5.txt"; fail "step 5 after step 1 again"; }
[ "$(steps "$w3/lab1.json")" = "1p,3p,5p:passed" ] || fail "after step 5 passed: $(steps "$w3/lab1.json")"
"$lab1" "${A[@]}" --ranks 3 --step 1 --out "$w3" > "$work/r1.txt" 2>&1 || { cat "$work/r1.txt"; fail "step 1 at 3 ranks"; }
[ "$(steps "$w3/lab1.json")" = "1p:passed" ] || fail "another --ranks kept the old steps: $(steps "$w3/lab1.json")"
# A record whose step was damaged since (a status that is no status) is replaced, not merged.
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['steps'][0]['status']=5; json.dump(d, open(sys.argv[1],'w'))" "$w3/lab1.json"
"$lab1" "${A[@]}" --ranks 3 --step 1 --out "$w3" > "$work/r1.txt" 2>&1 || { cat "$work/r1.txt"; fail "step 1 over a damaged record"; }
[ "$(steps "$w3/lab1.json")" = "1p:passed" ] || fail "a damaged record was merged: $(steps "$w3/lab1.json")"
echo "PASS: earlier steps' files are checked, and the lab's record keeps the other steps"
