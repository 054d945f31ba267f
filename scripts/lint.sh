#!/usr/bin/env bash
# Runs shellcheck on every shell script in the repository (tracked files ending in
# .sh, and those whose first line names sh or bash). Installs shellcheck when
# it is missing. Exit status 1 on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v shellcheck > /dev/null 2>&1 || scripts/need.sh shellcheck
scripts=()
while IFS= read -r -d '' f; do
    [ -f "$f" ] || continue
    case "$f" in
    *.sh) scripts+=("$f") ;;
    *) head -n 1 "$f" | grep -Eq '^#!.*(/|env )(ba)?sh\b' && scripts+=("$f") ;;
    esac
done < <(git ls-files -z)
# -x: follow what a script sources (the tests' tests/kgen_checks.sh)
shellcheck -x "${scripts[@]}"
echo "lint: shellcheck found nothing in ${#scripts[@]} scripts"
