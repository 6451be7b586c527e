#!/usr/bin/env bash
# Grades one submission with the real CLI and checks the verdict:
#   grade_check.sh SCALELAB PREFIX SOURCE_DIR WORK RANKS TIME_LIMIT VALIDATOR SCHEMA EXPECT
# SOURCE_DIR is copied to WORK/src and graded with `scalelab grade --ranks RANKS --time-limit
# TIME_LIMIT`; results.json must validate against SCHEMA (VALIDATOR). EXPECT is one of
#   full            every test passes, score 100
#   below:N         the score is below N
#   VARIANT.sed     the sed script is applied to train.cpp first (it must change it); the tests
#                   that fail must be exactly those its "# Loses:" line names (by the start of
#                   their names; "Integrity" also means a score of 0), and the console must
#                   show the text of each of its "# Seen:" lines, the output naming the fault.
set -uo pipefail
scalelab=$1 prefix=$2 source=$3 work=$4 ranks=$5 limit=$6 validator=$7 schema=$8 expect=$9
data_dir=${SCALELAB_DATA_DIR:-/usr/share/datasets/fashion-mnist}
if ! compgen -G "$data_dir/train-images-idx3-ubyte*" > /dev/null; then
  echo "SKIP: no Fashion-MNIST in $data_dir (apt-get install dataset-fashion-mnist, or set SCALELAB_DATA_DIR)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work/src"
cp "$source"/*.cpp "$work/src/"
if [[ $expect == *.sed ]]; then
  sed -f "$expect" "$source/train.cpp" > "$work/src/train.cpp"
  cmp -s "$source/train.cpp" "$work/src/train.cpp" && { echo "FAIL: $expect no longer changes $source/train.cpp"; exit 1; }
fi
start=$(date +%s)
"$scalelab" grade "$work/src" --prefix "$prefix" --out "$work/results.json" --ranks "$ranks" --time-limit "$limit" > "$work/console.txt" 2>&1
rc=$?
cat "$work/console.txt"
echo "graded in $(( $(date +%s) - start )) s"
[[ $rc == 0 ]] || { echo "FAIL: scalelab grade exited $rc"; exit 1; }
"$validator" "$schema" "$work/results.json" || { echo "FAIL: results.json does not validate against $schema"; exit 1; }
total=$(sed -n 's/^total *\([0-9.]*\) \/ .*/\1/p' "$work/console.txt")
failed=$(sed -En 's/^FAIL +[0-9.]+ \/ [0-9.]+ +(.*)$/\1/p' "$work/console.txt")
case $expect in
  full)
    [[ -z $failed && $total == 100.00 ]] || { echo "FAIL: expected full marks, got $total with failures: $failed"; exit 1; }
    echo "PASS: full marks" ;;
  below:*)
    awk -v t="$total" -v m="${expect#below:}" 'BEGIN { exit !(t < m) }' || { echo "FAIL: score $total, expected below ${expect#below:}"; exit 1; }
    echo "PASS: score $total below ${expect#below:}" ;;
  *.sed)
    loses=$(sed -n 's/^# Loses: //p' "$expect")
    mapfile -t seen < <(sed -n 's/^# Seen: //p' "$expect")
    IFS=';' read -ra lost <<< "$loses"
    status=0
    while IFS= read -r name; do
      [[ -z $name ]] && continue
      ok=0
      for l in "${lost[@]}"; do [[ $name == "${l# }"* ]] && ok=1; done
      [[ $ok == 1 ]] || { echo "FAIL: '$name' failed, which $(basename "$expect") should not lose"; status=1; }
    done <<< "$failed"
    for l in "${lost[@]}"; do
      l=${l# }
      grep -q "^$l" <<< "$failed" || { echo "FAIL: '$l' passed, which $(basename "$expect") should lose"; status=1; }
      [[ $l == Integrity ]] && [[ $total != 0.00 ]] && { echo "FAIL: an integrity failure must score 0, not $total"; status=1; }
    done
    for s in "${seen[@]}"; do
      grep -qF -- "$s" "$work/console.txt" || { echo "FAIL: no output line naming the fault ('$s')"; status=1; }
    done
    [[ $status == 0 ]] && echo "PASS: $(basename "$expect") loses exactly: $loses"
    exit $status ;;
esac
