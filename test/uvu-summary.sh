#!/usr/bin/env bash
# Runs a uvu command, echoes its output, then prints one plain closing line
# "<label>: N passed, N failed". Fails when the command failed or when it ran no test at all
# (uvu itself exits 0 on "Total: 0").
# usage: test/uvu-summary.sh <label> <command...>
set -u
label=$1; shift
out=$(mktemp)
"$@" 2>&1 | tee "$out"; rc=${PIPESTATUS[0]}
clean=$(sed 's/\x1b\[[0-9;]*m//g' "$out")
rm -f "$out"
total=$(printf '%s\n' "$clean" | sed -n 's/^ *Total: *\([0-9][0-9]*\).*/\1/p' | tail -1)
passed=$(printf '%s\n' "$clean" | sed -n 's/^ *Passed: *\([0-9][0-9]*\).*/\1/p' | tail -1)
total=${total:-0}; passed=${passed:-0}
if [ "$total" -eq 0 ]; then echo "$label: no tests ran" >&2; rc=1; fi
echo "$label: $passed passed, $((total - passed)) failed"
exit "$rc"
