#!/bin/sh
# bench --predict on CPU ranks: after a calibration every allreduce size gets the memory-traffic
# limit and the share of it reached, in the table, the summary line and the JSON record; the
# flag round is timed again and compared with the profile's, with a warning when a profile's
# round is far from today's (here a profile whose round was set 1000x slower by hand), or when the
# profile's rounds at its calibration's start and end are far apart.
# Usage: bench_memory_limit.sh SCALELAB OUT_PREFIX
set -eu
sl=$1
out=$2
rm -f "$out.json" "$out.bench.json"
"$sl" calibrate --quick --force --profile "$out.json" > /dev/null
"$sl" run -np 2 -- bench allreduce -b 64K -e 1M -f 4 -n 3 -w 1 --predict --profile "$out.json" \
  --json "$out.bench.json" > "$out.out"
grep -q 'memory limit' "$out.out" || { cat "$out.out"; echo "no memory limit column"; exit 1; }
grep -q '# memory-traffic limit .*: reached median [0-9.]*%, least [0-9.]*% over 3 sizes' "$out.out" \
  || { cat "$out.out"; echo "no memory-traffic summary line"; exit 1; }
python3 - "$out.bench.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
assert len(run["results"]) == 3 and all(r["limit_us"] > 0 for r in run["results"]), run["results"]
p = run["prediction"]
assert 0 < p["memory_limit_reached_min_pct"] <= p["memory_limit_reached_median_pct"], p
assert p["flag_round_calibrated_us"] > 0 and p["flag_round_now_us"] > 0 and p["flag_round_bench_end_us"] > 0, p
PY
python3 - "$out.json" "$out.far.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["profile"]["shm_sync_us"] *= 1000
json.dump(d, open(sys.argv[2], "w"))
PY
"$sl" run -np 2 -- bench allreduce -b 64K -e 64K -n 3 -w 1 --predict --profile "$out.far.json" > "$out.far.out"
grep -q '^# warning: a flag round between the ranks takes [0-9.]* us now and took [0-9.]* us at calibration .*calibrate' \
  "$out.far.out" || { cat "$out.far.out"; echo "no warning for a profile of another machine state"; exit 1; }
# A profile whose round at the calibration's start was 1000x its round at the end: its tables mix
# two states of the machine, which bench says (and not the warning above: the end's round is
# today's).
python3 - "$out.json" "$out.mixed.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["profile"]["shm_sync_start_us"] > 0, d["profile"]
d["profile"]["shm_sync_start_us"] = d["profile"]["shm_sync_us"] * 1000
json.dump(d, open(sys.argv[2], "w"))
PY
"$sl" run -np 2 -- bench allreduce -b 64K -e 64K -n 3 -w 1 --predict --profile "$out.mixed.json" --json "$out.mixed.bench.json" \
  > "$out.mixed.out"
grep -q "^# warning: the profile's flag round took [0-9.]* us when its calibration began and [0-9.]* us when it ended: it mixes two states" \
  "$out.mixed.out" || { cat "$out.mixed.out"; echo "no warning for a profile that mixes two machine states"; exit 1; }
python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['runs'][0]['prediction']; assert p['flag_round_calibration_start_us'] > 0, p" \
  "$out.mixed.bench.json"
echo PASS
