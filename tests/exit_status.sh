#!/bin/sh
# Runs a test's command, then prints its exit status as the last line of the output,
# "[exit status N]", and exits with it. CTest ignores the exit status of a test that has a
# PASS_REGULAR_EXPRESSION; such a test runs through this script and also sets
# FAIL_REGULAR_EXPRESSION to ${EXIT_NONZERO} (tests/CMakeLists.txt), so that a command that
# printed the expected lines and then failed, or crashed, fails the test.
"$@"
status=$?
echo "[exit status $status]"
exit $status
