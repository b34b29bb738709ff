#!/usr/bin/env bash
# Runs the test suites, each in its own runtime, and prints one closing line per runtime plus a
# total. `bash test/run.sh` runs them all; `bash test/run.sh bun deno` only those named.
# Every suite runs even when an earlier one failed; the exit code is 1 if any failed or ran nothing.
#
# Two processes run at a time (TEST_JOBS sets how many), the node suite's files split between
# two of them, so that both cores work: most of a suite's time is one process's CPU. The longest
# parts start first, so that no long one starts last and sets the finish. Each process's output
# is kept and printed whole, in the order of the suites, once its suite is done, with how long
# it took.
set -u
# `wait -n -p` (which of the running parts finished) came with bash 5.1.
if [ "${BASH_VERSINFO[0]}" -lt 5 ] || { [ "${BASH_VERSINFO[0]}" -eq 5 ] && [ "${BASH_VERSINFO[1]}" -lt 1 ]; }; then
  echo "test/run.sh needs bash 5.1 or later (this is bash $BASH_VERSION): install a newer bash" >&2
  exit 2
fi
cd "$(dirname "$0")/.." || exit 2
bin=node_modules/.bin
uvu=node_modules/uvu/bin.js
# Deno: --allow-ffi loads libSQL's native addon (which then does its own file I/O); --allow-run
# starts the PostgreSQL tests' throwaway cluster (initdb, pg_ctl, runuser).
deno_run=("$bin/deno" run --allow-env --allow-sys --allow-ffi --allow-net=127.0.0.1 --allow-read --allow-write --allow-run)
# The node suite's first half: these folders of test/; the second half is every other folder.
# Every test that uses dist/ is in the second half, with the one that rebuilds it (npm pack's
# prepack in test/package), so that no test reads dist/ while it is being rebuilt. The folders
# are chosen so that both halves take about as long.
node_first='stores|core|import|layout|client|webhooks'
# The order the parts start in: the longest first. Every part of parts_of is in it.
start_order=(node-1 node-2 workerd deno bun browser)

# One process of a suite; it replaces the shell it runs in.
run_part() {
  case $1 in
    node-1) exec node --import tsx "$uvu" test "^($node_first)/.*\\.test\\.ts\$" --no-color ;;
    node-2) exec node --import tsx "$uvu" test '\.test\.ts$' -i runtimes -i "^($node_first)(/|\$)" --no-color ;;
    bun) exec "$bin/bun" "$uvu" test/runtimes/bun '\.test\.ts$' --no-color ;;
    deno) exec "${deno_run[@]}" "$uvu" test/runtimes/deno '\.test\.ts$' --no-color ;;
    workerd) exec node --import tsx test/runtimes/workerd/run.ts ;;
    # The popup in Debian's Chromium (apt-get install chromium; .ci/run does it).
    browser) exec node --import tsx "$uvu" test/e2e '\.e2e\.ts$' --no-color ;;
  esac
}

parts_of() {
  case $1 in
    node) echo node-1 node-2 ;;
    bun | deno | workerd | browser) echo "$1" ;;
    *) return 1 ;;
  esac
}

suites=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(node bun deno workerd browser)
for name in "${suites[@]}"; do
  parts_of "$name" >/dev/null || { echo "unknown suite: $name" >&2; exit 2; }
done
out=$(mktemp -d)
declare -A pid_part=() started=()
trap 'rm -rf "$out"' EXIT
# Stopped itself, it stops the parts it started, and exits as the signal's own exit would.
stop_parts() { kill "${!pid_part[@]}" 2>/dev/null; exit "$1"; }
trap 'stop_parts 130' INT
trap 'stop_parts 143' TERM

# Prints "<name>: N passed, N failed" from each part's uvu Total/Passed lines, after the parts'
# output. Fails when a part failed, ran no test (uvu exits 0 on "Total: 0"), or passed fewer
# tests than it counted (uvu exits 0 when a `before` hook throws).
summarize() {
  local name=$1 part total ok all=0 allok=0 ok_status=0
  for part in $(parts_of "$name"); do
    cat "$out/$part.out"
    echo "($part ran $(cat "$out/$part.seconds") s)"
    total=$(sed 's/\x1b\[[0-9;]*m//g' "$out/$part.out" | sed -n 's/^ *Total: *\([0-9][0-9]*\).*/\1/p' | tail -1)
    ok=$(sed 's/\x1b\[[0-9;]*m//g' "$out/$part.out" | sed -n 's/^ *Passed: *\([0-9][0-9]*\).*/\1/p' | tail -1)
    total=${total:-0}; ok=${ok:-0}
    if [ "$total" -eq 0 ]; then echo "$part: no tests ran" >&2; ok_status=1; fi
    [ "$(cat "$out/$part.rc")" -eq 0 ] && [ "$ok" -eq "$total" ] || ok_status=1
    all=$((all + total)); allok=$((allok + ok))
  done
  echo "$name: $allok passed, $((all - allok)) failed"
  passed=$((passed + allok)); failed=$((failed + all - allok))
  return "$ok_status"
}

# Waits for one running part and records its exit code and how many seconds it ran.
wait_one() {
  local finished rc part
  wait -n -p finished; rc=$?
  part=${pid_part[$finished]}
  echo "$((EPOCHSECONDS - ${started[$part]}))" >"$out/$part.seconds"
  echo "$rc" >"$out/$part.rc"
  unset "pid_part[$finished]"
}

status=0; passed=0; failed=0; printed=0
# Summarizes, in order, every suite not yet printed whose parts have all finished.
print_done() {
  local part
  while [ "$printed" -lt ${#suites[@]} ]; do
    for part in $(parts_of "${suites[$printed]}"); do
      [ -e "$out/$part.rc" ] || return 0
    done
    summarize "${suites[$printed]}" || status=1
    printed=$((printed + 1))
  done
}

declare -A chosen=()
for name in "${suites[@]}"; do
  for part in $(parts_of "$name"); do chosen[$part]=1; done
done
for part in "${!chosen[@]}"; do
  [[ " ${start_order[*]} " == *" $part "* ]] || { echo "test/run.sh: $part is missing from start_order" >&2; exit 2; }
done
jobs_at_once=${TEST_JOBS:-2}
for part in "${start_order[@]}"; do
  [ -n "${chosen[$part]:-}" ] || continue
  while [ ${#pid_part[@]} -ge "$jobs_at_once" ]; do wait_one; print_done; done
  started[$part]=$EPOCHSECONDS
  run_part "$part" >"$out/$part.out" 2>&1 &
  pid_part[$!]=$part
done
while [ ${#pid_part[@]} -gt 0 ]; do wait_one; print_done; done
[ ${#suites[@]} -gt 1 ] && echo "total: $passed passed, $failed failed"
exit "$status"
