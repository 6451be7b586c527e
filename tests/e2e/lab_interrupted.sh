#!/usr/bin/env bash
# A lab stopped by a signal while a step's command runs: the command gets the signal, the lab
# writes its record (the step failed, "stopped_by" naming the signal) and exits 128 + the signal,
# leaving no command running.
#   lab_interrupted.sh LAB1 WORK
set -uo pipefail
lab1=$1 work=$2
fail() { echo "FAIL: $*"; exit 1; }
children() {  # the pids whose parent is $1 (from /proc: no procps needed)
  local d
  for d in /proc/[0-9]*; do
    [ "$(sed 's/.*) //' "$d/stat" 2> /dev/null | cut -d' ' -f2)" = "$1" ] && echo "${d#/proc/}"
  done
}
rm -rf "$work" && mkdir -p "$work"
for sig in INT TERM; do
  out="$work/$sig"
  "$lab1" --quick --dataset synthetic --step 1 --out "$out" > "$work/$sig.txt" 2>&1 &
  lab=$!
  child=""
  for _ in $(seq 1 200); do
    child=$(children "$lab" | head -1)
    [ -n "$child" ] && break
    sleep 0.05
  done
  [ -n "$child" ] || { cat "$work/$sig.txt"; fail "SIG$sig: the lab started no command"; }
  kill -s "$sig" "$lab"
  wait "$lab"
  rc=$?
  cat "$work/$sig.txt"
  want=$((128 + $(kill -l "$sig")))
  [ "$rc" = "$want" ] || fail "SIG$sig: exit $rc, expected $want"
  ! kill -0 "$child" 2> /dev/null || fail "SIG$sig: the step's command ($child) is still running"
  grep -q "lab1 stopped by SIG$sig" "$work/$sig.txt" || fail "SIG$sig: the last line does not name the signal"
  python3 - "$out/lab1.json" "SIG$sig" <<'PY' || fail "SIG$sig: the record"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["stopped_by"] == sys.argv[2], d.get("stopped_by")
assert d["status"] == "failed", d["status"]
s = d["steps"][-1]
assert s["number"] == 1 and s["status"] == "failed" and s["error"] == "stopped by " + sys.argv[2], s
PY
done
echo "PASS: a stopped lab stops its command and keeps its record"
