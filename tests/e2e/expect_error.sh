#!/bin/sh
# End-to-end check of a failing command: expect_error.sh CODE LINES WORDS -- COMMAND...
#   CODE   the exact exit status expected (2 for bad input)
#   LINES  "one" (stderr must be exactly one line), "once" (exactly one line starts with "error:",
#          whatever mpirun adds: several ranks, one message) or "any" (mpirun adds its own banner)
#   WORDS  '|'-separated words that stderr must contain (case-sensitive, fixed strings)
# Prints what it saw and exits non-zero when any expectation fails.
code=$1; lines=$2; words=$3; shift 3
[ "$1" = "--" ] && shift
err=$(mktemp)
"$@" >/dev/null 2>"$err"
rc=$?
fail=0
if [ "$rc" -ne "$code" ]; then echo "exit status $rc, expected $code"; fail=1; fi
n=$(wc -l <"$err")
if [ "$lines" = "one" ] && [ "$n" -ne 1 ]; then echo "stderr has $n lines, expected 1"; fail=1; fi
said=$(grep -c '^error:' "$err")
if [ "$lines" = "once" ] && [ "$said" -ne 1 ]; then echo "$said lines start with 'error:', expected 1"; fail=1; fi
old_ifs=$IFS; IFS='|'
for w in $words; do
  if ! grep -qF -- "$w" "$err"; then echo "stderr lacks '$w'"; fail=1; fi
done
IFS=$old_ifs
echo "--- stderr:"; cat "$err"
rm -f "$err"
exit $fail
