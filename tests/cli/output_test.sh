#!/usr/bin/env bash
# The output writer (-o of emitted kernels and of `db export`): a path that is
# not a regular file is written in place, never replaced; `-o -` is standard
# output; a regular file is replaced atomically and left alone on failure.
# usage: output_test.sh KGEN CSV
set -euo pipefail
kgen=$1
csv=$2
d=$(mktemp -d)
reader=
cleanup() { [ -n "$reader" ] && kill "$reader" 2> /dev/null; rm -rf "$d"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$kgen" --tile 16 -o - > "$d/want.cu"
[ -s "$d/want.cu" ] || fail "-o - wrote nothing to standard output"

# A character device. As root, a private null device (mknod) so that a
# broken writer cannot replace the system's /dev/null; a user cannot replace
# /dev/null, so a user writes to it. (Root without CAP_MKNOD: no device case.)
node=/dev/null
if [ "$(id -u)" -eq 0 ]; then
    node=
    mknod "$d/node" c 1 3 2> /dev/null && node=$d/node
fi
if [ -n "$node" ]; then
    "$kgen" --tile 16 -o "$node" || fail "-o $node failed"
    [ -c "$node" ] || fail "-o $node replaced the character device"
else
    echo "output_test: root without mknod: the character-device case is left out"
fi

# /dev/stdout through a pipe.
"$kgen" --tile 16 -o /dev/stdout | cat > "$d/stdout.cu"
cmp -s "$d/want.cu" "$d/stdout.cu" || fail "-o /dev/stdout did not write the kernel to the pipe"

# A FIFO with a reader gets the bytes; the FIFO stays a FIFO.
mkfifo "$d/fifo"
cat "$d/fifo" > "$d/fifo.cu" &
reader=$!
timeout 20 "$kgen" --tile 16 -o "$d/fifo" || fail "-o FIFO (with a reader) failed"
wait "$reader"
reader=
cmp -s "$d/want.cu" "$d/fifo.cu" || fail "the FIFO's reader did not get the kernel"
[ -p "$d/fifo" ] || fail "-o FIFO replaced the FIFO"

# A FIFO without a reader: an error at once, not a hang.
set +e
msg=$(timeout 20 "$kgen" --tile 16 -o "$d/fifo" 2>&1)
rc=$?
set -e
[ "$rc" -ne 124 ] || fail "-o FIFO without a reader hung"
[ "$rc" -ne 0 ] || fail "-o FIFO without a reader succeeded"
grep -q "no process is reading" <<< "$msg" || fail "unclear error for a FIFO without a reader: $msg"
[ -p "$d/fifo" ] || fail "a FIFO without a reader was replaced"

# A directory is an error.
if "$kgen" --tile 16 -o "$d" 2> /dev/null; then fail "-o DIRECTORY succeeded"; fi
[ -d "$d" ] || fail "-o DIRECTORY replaced it"

# A regular file: replaced (new inode, same mode), untouched on failure.
echo old > "$d/out.cu"
chmod 640 "$d/out.cu"
ino=$(stat -c %i "$d/out.cu")
"$kgen" --tile 16 -o "$d/out.cu"
cmp -s "$d/want.cu" "$d/out.cu" || fail "-o FILE: wrong contents"
[ "$(stat -c %a "$d/out.cu")" = 640 ] || fail "-o FILE: mode not kept"
[ "$(stat -c %i "$d/out.cu")" != "$ino" ] || fail "-o FILE was rewritten in place, not replaced atomically"
echo old > "$d/keep.cu"
if "$kgen" --tile 33 -o "$d/keep.cu" 2> /dev/null; then fail "--tile 33 succeeded"; fi
[ "$(cat "$d/keep.cu")" = old ] || fail "a failed run changed the output file"
[ -z "$(find "$d" -name '*.tmp.*')" ] || fail "a temporary file was left behind"

# db export uses the same writer.
"$kgen" db import --db "$d/t.db" "$csv" > /dev/null
"$kgen" db export --db "$d/t.db" -o - > "$d/want.csv"
[ -s "$d/want.csv" ] || fail "db export -o - wrote nothing"
"$kgen" db export --db "$d/t.db" -o /dev/stdout | cat > "$d/got.csv"
cmp -s "$d/want.csv" "$d/got.csv" || fail "db export -o /dev/stdout differs from -o -"
if [ -n "$node" ]; then
    "$kgen" db export --db "$d/t.db" -o "$node" 2> /dev/null || fail "db export -o $node failed"
    [ -c "$node" ] || fail "db export -o $node replaced the device"
fi
mkfifo "$d/dbfifo"
cat "$d/dbfifo" > "$d/fifo.csv" &
reader=$!
timeout 20 "$kgen" db export --db "$d/t.db" -o "$d/dbfifo" 2> /dev/null || fail "db export -o FIFO failed"
wait "$reader"
reader=
cmp -s "$d/want.csv" "$d/fifo.csv" || fail "db export -o FIFO: the reader did not get the rows"
echo "output_test: ok"
