#!/usr/bin/env bash
# Runs the test suites, each in its own runtime, and prints one closing line per runtime plus a
# total. `bash test/run.sh` runs them all; `bash test/run.sh bun deno` only those named.
# Every suite runs even when an earlier one failed; the exit code is 1 if any failed or ran nothing.
set -u
cd "$(dirname "$0")/.."
bin=node_modules/.bin
uvu=node_modules/uvu/bin.js
# Deno: --allow-ffi loads libSQL's native addon (which then does its own file I/O); --allow-run
# starts the PostgreSQL tests' throwaway cluster (initdb, pg_ctl, runuser).
deno_run=("$bin/deno" run --allow-env --allow-sys --allow-ffi --allow-net=127.0.0.1 --allow-read --allow-write --allow-run)

run_suite() {
  case $1 in
    node) node --import tsx "$uvu" test '\.test\.ts$' -i runtimes --no-color ;;
    bun) "$bin/bun" "$uvu" test/runtimes/bun '\.test\.ts$' --no-color ;;
    deno) "${deno_run[@]}" "$uvu" test/runtimes/deno '\.test\.ts$' --no-color ;;
    workerd) node --import tsx test/runtimes/workerd/run.ts ;;
    # The popup in Debian's Chromium (apt-get install chromium; .ci/run does it).
    browser) node --import tsx "$uvu" test/e2e '\.e2e\.ts$' --no-color ;;
    *) echo "unknown suite: $1" >&2; return 2 ;;
  esac
}

# Runs one suite, echoes its output, and prints "<name>: N passed, N failed" from uvu's
# Total/Passed lines. Fails when the suite failed, ran no test (uvu exits 0 on "Total: 0"), or
# passed fewer tests than it counted (uvu exits 0 when a `before` hook throws).
summarize() {
  local name=$1 out rc total ok
  out=$(mktemp)
  run_suite "$name" 2>&1 | tee "$out"; rc=${PIPESTATUS[0]}
  total=$(sed 's/\x1b\[[0-9;]*m//g' "$out" | sed -n 's/^ *Total: *\([0-9][0-9]*\).*/\1/p' | tail -1)
  ok=$(sed 's/\x1b\[[0-9;]*m//g' "$out" | sed -n 's/^ *Passed: *\([0-9][0-9]*\).*/\1/p' | tail -1)
  rm -f "$out"
  total=${total:-0}; ok=${ok:-0}
  if [ "$total" -eq 0 ]; then echo "$name: no tests ran" >&2; rc=1; fi
  echo "$name: $ok passed, $((total - ok)) failed"
  passed=$((passed + ok)); failed=$((failed + total - ok))
  [ "$rc" -eq 0 ] && [ "$total" -gt 0 ] && [ "$ok" -eq "$total" ]
}

suites=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(node bun deno workerd browser)
status=0; passed=0; failed=0
for name in "${suites[@]}"; do
  summarize "$name" || status=1
done
[ ${#suites[@]} -gt 1 ] && echo "total: $passed passed, $failed failed"
exit "$status"
