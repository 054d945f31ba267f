# checks.sh -- sourced by the shell tests of bench/: a scratch folder T
# (removed on exit), the counts of passed and failed checks, ok and bad, and
# expect. The test sets PROG (the program it runs) first and ends with
# `finish`.
# shellcheck shell=bash disable=SC2154 # PROG is the sourcing test's
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
# expect CODE WORD -- ARGS: PROG ARGS exits CODE with WORD in its standard error
expect() {
    local code=$1 word=$2; shift 3
    "$PROG" "$@" > "$T/out" 2> "$T/err"; local rc=$?
    if [ $rc -eq "$code" ] && grep -q -- "$word" "$T/err"; then ok; else bad "$(basename "$PROG") $* -> $rc: $(cat "$T/err")"; fi
}
# the counts; the exit status: 0 when nothing failed
finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
