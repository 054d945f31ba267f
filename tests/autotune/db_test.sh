#!/usr/bin/env bash
# The tuning database's commands against mistakes and bad input: each a clear
# message and the documented exit status, nothing created or changed when a
# command fails, no files left behind by commands that only read.
# usage: db_test.sh KGEN
set -euo pipefail
kgen=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"
fail() { echo "FAIL: $*" >&2; exit 1; }
unset KGEN_DB XDG_DATA_HOME
# run CMD...: sets $out (stdout and stderr) and $rc
run() { set +e; out=$("$@" 2>&1); rc=$?; set -e; }

header=device,cc,sm_count,template,template_version,dtype,layout,m,n,k,config,outcome,time_ms,final_ms,created
# (matmul's canonical text for bm=32, as the tuner writes it)
canon="bm=32 bn=64 bk=16 tm=4 tn=4 pad=1 vec=1 bounds=1 layout=nn"
row() { echo "$1,90,132,$2,1,f32,nn,64,64,64,${4:-$canon},ok,1.5,$3,2026-01-01T00:00:00.000Z"; }
{ echo "$header"; row GPU matmul 0; } > good.csv

# The first `db list` before any tuning: a clear message, exit status 0;
# export has nothing to export (1). Nothing is created.
export HOME=$d/home
run "$kgen" db list
[ "$rc" -eq 0 ] || fail "db list with no database: exit $rc: $out"
grep -q "no tuning database yet" <<< "$out" || fail "db list with no database: $out"
run "$kgen" db show
{ [ "$rc" -eq 0 ] && grep -q "no tuning database yet" <<< "$out"; } || fail "db show with no database: $rc $out"
run "$kgen" db export
{ [ "$rc" -eq 1 ] && grep -q "no tuning database" <<< "$out"; } || fail "db export with no database: $rc $out"
[ ! -e "$HOME" ] || fail "reading a missing database created $HOME"

# A relative XDG_DATA_HOME is ignored (XDG base directory spec).
run env XDG_DATA_HOME=rel "$kgen" db list
grep -q "$HOME/.local/share/kgen/tune.db" <<< "$out" || fail "relative XDG_DATA_HOME used: $out"
run env XDG_DATA_HOME="$d/xdg" "$kgen" db list
grep -q "$d/xdg/kgen/tune.db" <<< "$out" || fail "absolute XDG_DATA_HOME not used: $out"

# A good file imports (the control for the rejections below).
run "$kgen" db import --db ok.db good.csv
[ "$rc" -eq 0 ] || fail "good.csv: $out"
# --db in a folder that does not exist: named, exit 1, the folder not made (a mistyped path would make one);
# kgen's own default location gets its folders
run "$kgen" db import --db nofolder/sub/x.db good.csv
{ [ "$rc" -eq 1 ] && grep -q "no folder 'nofolder/sub'" <<< "$out" && [ ! -e nofolder ]; } ||
    fail "--db in a missing folder: exit $rc, created: $(find nofolder 2> /dev/null), $out"
run env KGEN_DB="$d/nofolder/x.db" "$kgen" db import good.csv
{ [ "$rc" -eq 1 ] && grep -q "no folder '$d/nofolder'" <<< "$out" && [ ! -e nofolder ]; } ||
    fail "KGEN_DB in a missing folder: exit $rc, $out"
# --db naming a directory: said so (SQLite alone says "disk I/O error"), exit 1, for writers and readers
mkdir -p adir
for c in "db import --db adir good.csv" "db list --db adir" "db export --db adir"; do
    # shellcheck disable=SC2086 # the command's words
    run "$kgen" $c
    { [ "$rc" -eq 1 ] && grep -q "'adir' is a directory, not a tuning database" <<< "$out"; } ||
        fail "kgen $c: exit $rc, $out"
done
run env HOME="$d/home2" "$kgen" db import good.csv
{ [ "$rc" -eq 0 ] && [ -f "$d/home2/.local/share/kgen/tune.db" ]; } || fail "the default location: exit $rc, $out"

# Rejected rows: a clear message, exit 1, and no database or folder created.
check_rejected() { # NAME FILE EXPECTED-TEXT
    run "$kgen" db import --db "new/sub/$1.db" "$2"
    [ "$rc" -eq 1 ] || fail "$1: exit $rc: $out"
    grep -q -- "$3" <<< "$out" || fail "$1: unclear message: $out"
    [ ! -e new ] || fail "$1: a failed import created $(find new)"
}
{ echo "$header"; row GPU ../../etc 0; } > t1.csv
check_rejected template t1.csv "column template: '../../etc' is not a template's module name"
{ echo "$header"; row "" matmul 0; } > t2.csv
check_rejected device t2.csv "column device is empty"
{ echo "$header"; row GPU matmul nan; } > t3.csv
check_rejected nan t3.csv "column final_ms: nan is not a finite time"
grep -qi constraint <<< "$out" && fail "NaN final_ms shows SQLite's message: $out"
printf 'dev\001\033[31mice,x\n1,2\n' > t4.csv
check_rejected header t4.csv "unknown column 'dev\\\\x01\\\\x1B\[31mice'"
grep -q $'\033' <<< "$out" && fail "raw escape bytes echoed: $out"
run "$kgen" db merge --db new/sub/m.db good.csv
{ [ "$rc" -eq 1 ] && [ ! -e new ]; } || fail "a failed merge: exit $rc, created: $(find new 2> /dev/null)"

# An existing database is not changed by a failed import.
cp ok.db before.db
run "$kgen" db import --db ok.db t1.csv
{ [ "$rc" -eq 1 ] && cmp -s ok.db before.db; } || fail "a failed import changed the database"

# A UTF-8 byte-order mark (as spreadsheets write) is accepted.
{ printf '\357\273\277'; echo "$header"; row BOM matmul 0; } > bom.csv
run "$kgen" db import --db ok.db bom.csv
[ "$rc" -eq 0 ] || fail "a CSV with a byte-order mark: $out"

# Merging a database into itself: at once, with a clear message.
start=$(date +%s)
run "$kgen" db merge --db ok.db ./ok.db
{ [ "$rc" -eq 1 ] && grep -q "into itself" <<< "$out"; } || fail "merge into itself: exit $rc: $out"
[ "$(($(date +%s) - start))" -lt 10 ] || fail "merge into itself waited"

# Import and merge are all or nothing over their files: a bad file after a
# good one writes nothing, and an import of a missing file creates nothing.
cp ok.db before.db
{ echo "$header"; row GPU2 matmul 0; } > good2.csv
printf 'x' > text.db
run "$kgen" db import --db ok.db good2.csv t1.csv
{ [ "$rc" -eq 1 ] && cmp -s ok.db before.db && grep -q "t1.csv.*nothing was written" <<< "$out"; } ||
    fail "an import whose second file is bad: exit $rc, changed: $(cmp ok.db before.db), $out"
run "$kgen" db merge --db ok.db before.db text.db
{ [ "$rc" -eq 1 ] && cmp -s ok.db before.db && grep -q "text.db.*not a kgen tuning database" <<< "$out"; } ||
    fail "a merge whose second file is bad: exit $rc, $out"
for f in missing.csv .; do
    run "$kgen" db import --db new/sub/x.db "$f"
    { [ "$rc" -eq 1 ] && [ ! -e new ]; } || fail "import of '$f': exit $rc, created: $(find new 2> /dev/null)"
done
grep -q "Is a directory" <<< "$out" || fail "import of a folder does not say why: $out"
# Each configuration is checked by its template: a parameter unknown or out of
# range, or a configuration not written as kgen writes it (which would key a
# second row for the same kernel), is refused, the file and text named.
{ echo "$header"; row GPU matmul 0 "bm=32 foo=1 layout=nn"; } > unknown.csv
run "$kgen" db import --db ok.db unknown.csv
{ [ "$rc" -eq 1 ] && cmp -s ok.db before.db && grep -q "unknown.csv: matmul 'bm=32 foo=1 layout=nn': unknown parameter 'foo'" <<< "$out"; } ||
    fail "an unknown parameter: exit $rc: $out"
{ echo "$header"; row GPU matmul 0 "bm=abc layout=nn"; } > notint.csv
run "$kgen" db import --db ok.db notint.csv
{ [ "$rc" -eq 1 ] && grep -q "bm: 'abc' is not an integer" <<< "$out"; } || fail "a parameter that is not an integer: exit $rc: $out"
{ echo "$header"; row GPU matmul 0 "bn=64 bm=32 bk=16 tm=4 tn=4 pad=1 vec=1 bounds=1 layout=nn"; } > order.csv
run "$kgen" db import --db ok.db order.csv
{ [ "$rc" -eq 1 ] && cmp -s ok.db before.db && grep -q "is not written as kgen writes it ('$canon')" <<< "$out"; } ||
    fail "a configuration in another order: exit $rc: $out"
# ... on an architecture kgen has no limits for too, and a configuration of another layout than its row's
sed 's/,90,132,/,100,148,/' order.csv > order100.csv
run "$kgen" db import --db ok.db order100.csv
{ [ "$rc" -eq 1 ] && cmp -s ok.db before.db && grep -q "is not written as kgen writes it ('$canon')" <<< "$out"; } ||
    fail "a configuration in another order, sm_100: exit $rc: $out"
{ echo "$header"; row GPU matmul 0 "${canon/layout=nn/layout=tt}"; } > layout.csv
run "$kgen" db import --db ok.db layout.csv
{ [ "$rc" -eq 1 ] && cmp -s ok.db before.db && grep -q "computes layout tt, but its row's layout is nn" <<< "$out"; } ||
    fail "a configuration of another layout than its row's: exit $rc: $out"
# a merge of a file that is not a database names it once
run "$kgen" db merge --db ok.db good2.csv
{ [ "$rc" -eq 1 ] && [ "$(grep -o "good2.csv" <<< "$out" | wc -l)" -eq 1 ]; } || fail "merge of a text file: exit $rc: $out"

# Standard input is read once, for the check and the import alike.
run sh -c "'$kgen' db import --db in.db - < good2.csv"
{ [ "$rc" -eq 0 ] && "$kgen" db export --db in.db | grep -q GPU2; } || fail "import from standard input: exit $rc: $out"

# Export never overwrites its own database, nor a file when a filter is bad;
# filters are refused where they would be ignored.
cp ok.db self.db
run "$kgen" db export --db self.db -o ./self.db
{ [ "$rc" -eq 1 ] && cmp -s self.db ok.db && grep -q "is the database" <<< "$out"; } || fail "export onto its database: exit $rc: $out"
echo KEEP > keep.csv
run "$kgen" db export --db ok.db --layout xx -o keep.csv
{ [ "$rc" -eq 2 ] && [ "$(cat keep.csv)" = KEEP ] && grep -q "layout must be nn, nt, tn or tt" <<< "$out"; } ||
    fail "export with a bad --layout: exit $rc: $out"
run "$kgen" db show --db ok.db --layout NN
[ "$rc" -eq 2 ] || fail "db show with a bad --layout: exit $rc: $out"
run "$kgen" db list --db ok.db --layout nn
{ [ "$rc" -eq 2 ] && grep -q "takes no filters" <<< "$out"; } || fail "db list with a filter: exit $rc: $out"
run "$kgen" db export --db ok.db --top 3
{ [ "$rc" -eq 2 ] && grep -q "option of db show" <<< "$out"; } || fail "db export --top: exit $rc: $out"

# Commands that only read leave no -wal or -shm file.
rm -f ok.db-wal ok.db-shm
for cmd in list show export; do
    "$kgen" db "$cmd" --db ok.db > /dev/null 2>&1 || fail "db $cmd failed"
    { [ ! -e ok.db-wal ] && [ ! -e ok.db-shm ]; } || fail "db $cmd left $(ls ok.db-*)"
done
echo "db_test: ok"
