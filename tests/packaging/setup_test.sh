#!/usr/bin/env bash
# shellcheck disable=SC2016 # the shims' bodies are expanded when they run
# scripts/setup.sh on a "fresh" Debian machine, as root and as a user with
# sudo, without touching this machine's packages: dpkg, apt-get, sudo, id,
# nvcc and cmake are shims on PATH that record how they were called, and
# every package starts out missing.
# usage: setup_test.sh SOURCE_DIR
set -euo pipefail
src=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$d/log" ] && sed 's/^/  log: /' "$d/log" >&2; exit 1; }
mkdir -p "$d/repo/scripts" "$d/bin"
cp "$src/scripts/setup.sh" "$src/scripts/need.sh" "$d/repo/scripts/"
shim() { printf '#!/bin/sh\n%s\n' "$2" > "$d/bin/$1"; chmod +x "$d/bin/$1"; }
shim dpkg '[ "$1" = -s ] && grep -qx "$2" "$SHIM_DIR/installed"'
shim apt-get 'echo "apt-get DEBIAN_FRONTEND=${DEBIAN_FRONTEND:-} $*" >> "$SHIM_DIR/log"
[ "$(id -u)" -eq 0 ] || { echo "apt-get: are you root?" >&2; exit 100; }
if [ "$1" = install ]; then for p in "$@"; do echo "$p" >> "$SHIM_DIR/installed"; done; fi'
shim sudo 'echo "sudo $*" >> "$SHIM_DIR/log"; SHIM_UID=0 exec "$@"'
shim id '[ "$1" = -u ] && echo "$SHIM_UID"'
shim nvcc 'exit 0'
shim cmake 'echo "cmake $*" >> "$SHIM_DIR/log"'
export SHIM_DIR=$d PATH="$d/bin:$PATH"
unset DEBIAN_FRONTEND

for uid in 0 1000; do
    : > "$d/installed"
    : > "$d/log"
    SHIM_UID=$uid "$d/repo/scripts/setup.sh" > "$d/out" 2>&1 || { cat "$d/out" >&2; fail "setup.sh as uid $uid"; }
    for p in cmake gcc liblua5.4-dev libsqlite3-dev pkg-config; do
        grep -qx "$p" "$d/installed" || fail "uid $uid: $p not installed"
    done
    grep -q "^apt-get DEBIAN_FRONTEND=noninteractive install -y" "$d/log" || fail "uid $uid: apt-get install not noninteractive"
    grep -q "^apt-get DEBIAN_FRONTEND= update" "$d/log" || fail "uid $uid: no apt-get update"
    if [ "$uid" -eq 0 ]; then
        grep -q "^sudo" "$d/log" && fail "root ran sudo"
    else
        [ "$(grep -c "^sudo" "$d/log")" -eq 2 ] || fail "a user did not run apt-get through sudo"
    fi
    grep -q "^cmake --build build" "$d/log" || fail "uid $uid: setup.sh did not build"
done

# Everything present: no apt-get at all.
: > "$d/log"
SHIM_UID=1000 "$d/repo/scripts/setup.sh" > "$d/out" 2>&1 || fail "setup.sh with every package present"
grep -q "^apt-get\|^sudo" "$d/log" && fail "apt-get ran although nothing was missing"
echo "setup_test: ok"
