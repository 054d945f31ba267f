# kgen_checks.sh -- sourced by the shell tests of the kgen command: a count
# of passed and failed checks, and kgen's exit status and message checked.
# The test sets KGEN (the kgen binary) and ends with `finish`; sourcing makes
# tmp, a scratch folder removed when the test exits.
# shellcheck shell=bash disable=SC2154 # KGEN is the sourcing test's
pass=0 fail=0
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# check WHAT COMMAND...: COMMAND succeeds
check() {
    local what=$1
    shift
    if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $what"; fi
}

# expect CODE PATTERN ARGS...: kgen exits CODE and its stderr matches PATTERN
expect() {
    local code=$1 pattern=$2
    shift 2
    "$KGEN" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" = "$code" ] && grep -q -- "$pattern" "$tmp/err"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: kgen $* exited $rc (want $code), stderr:"
        cat "$tmp/err"
    fi
}

# The counts; the exit status: 0 when nothing failed.
finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" = 0 ]
}
