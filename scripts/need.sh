#!/usr/bin/env bash
# Installs the Debian packages named on the command line that are missing,
# with apt-get: as root directly, otherwise through sudo. Every script that
# needs a package (setup.sh, lint.sh, fuzz.sh) asks through this one.
#   scripts/need.sh PACKAGE...
set -euo pipefail
need=()
for pkg in "$@"; do
    dpkg -s "$pkg" > /dev/null 2>&1 || need+=("$pkg")
done
[ ${#need[@]} -eq 0 ] && exit 0
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo > /dev/null 2>&1 || { echo "need: ${need[*]} missing; run as root or install sudo" >&2; exit 1; }
    sudo=(sudo)
fi
echo "need: installing ${need[*]}"
"${sudo[@]}" apt-get update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}"
