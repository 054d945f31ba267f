#!/usr/bin/env bash
# shellcheck disable=SC2016,SC2034 # checks are quoted strings, expanded when they run
# gpu_test.sh KGEN -- `kgen explain` on the GPU present: the seeds' 16x16
# kernel is checked against the float64 reference and timed at a small
# shape, and the report puts the measurement beside the prediction. Exits 77
# (skipped) where there is no GPU.
set -u
KGEN=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$KGEN" explain --tile 16 --m 1024 --n 1024 --k 1024 --json > "$T/json" 2> "$T/err"; rc=$?
if grep -q '"note": "no GPU to query' "$T/json"; then
    echo "SKIPPED: no GPU ($(grep -o '"note": "[^"]*' "$T/json" | head -c 200))"
    exit 77
fi
pass=0
fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }
check '[ $rc -eq 0 ]' "explain on the GPU exits 0 ($(cat "$T/err"))"
check 'grep -q "\"source\": \"device\"" "$T/json"' "the target is the device, queried"
check 'grep -Eq "\"tflops\": [0-9.e+-]+" "$T/json" && ! grep -q "\"measured\": null" "$T/json"' "a measured TFLOP/s"
check 'grep -Eq "\"driver_blocks_per_sm\": [1-9]" "$T/json"' "the driver's occupancy beside the model's"
"$KGEN" explain --tile 16 --m 1024 --n 1024 --k 1024 > "$T/out" 2> "$T/err"; rc=$?
check '[ $rc -eq 0 ] && grep -q "   measured: 1024 x 1024 x 1024 in " "$T/out"' "the report's measured line"
check 'grep -q "checked first: 257x263x131 against the float64 reference" "$T/out"' "checked on an odd shape first"
# a shape the kernel refuses (bounds=0 needs multiples): verified on multiples, then refused with a reason
"$KGEN" explain --tile 32 --bounds 0 --m 1000 --n 1024 --k 1024 > "$T/out" 2> "$T/err"; rc=$?
check '[ $rc -eq 1 ] && grep -q "not measured at 1000x1024x1024" "$T/err"' "a refused shape: exit 1, said why"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
