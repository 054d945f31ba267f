#!/usr/bin/env bash
# cli_test.sh -- `kgen tune` and `kgen db` from the command line, no GPU:
# --dry-run (enumerate, check, compile, prune, print what would be timed),
# bad input (a clear message and exit 2, nothing written), and the database
# commands on an imported file.
#
#   cli_test.sh KGEN SOURCE_DIR
set -u
KGEN=$1 SRC=$2
# shellcheck source=tests/kgen_checks.sh
. "$(dirname "$0")/../kgen_checks.sh"
export KGEN_CACHE_DIR=$tmp/cache

# --dry-run: no GPU, no database; what would be timed, by the model's order
space="bm=32,64 bn=32,64 bk=8 tm=4 tn=4 pad=0 vec=1,4"
"$KGEN" tune --dry-run --arch sm_90 --template matmul --space "$space" --m 100 --n 128 --k 64 --top 0 \
    --db "$tmp/never.db" >"$tmp/dry.out" 2>"$tmp/dry.err"
check "dry run exits 0" test $? = 0
cat "$tmp/dry.err"
check "dry run counts 8 candidates" grep -q "8 candidates" "$tmp/dry.err"
check "dry run would time all 8" grep -q "would-be-timed 8" "$tmp/dry.err"
check "dry run lists them" test "$(grep -c "^  [0-9].* matmul bm=" "$tmp/dry.err")" = 8
check "dry run writes no database" test ! -e "$tmp/never.db"
check "the default strategy is auto" grep -q "strategy auto" "$tmp/dry.err"
check "the summary counts the walk's check() calls" grep -q "check() and [0-9]* resources() calls in" "$tmp/dry.err"
# the same dry run again: the walk comes from the walk cache, the same result
"$KGEN" tune --dry-run --arch sm_90 --template matmul --space "$space" --m 100 --n 128 --k 64 --top 0 \
    >"$tmp/dry2.out" 2>"$tmp/dry2.err"
check "a second dry run reads the walk cache" grep -q "calls when walked; read from the walk cache" "$tmp/dry2.err"
check "... and lists the same candidates" diff <(grep "^  [0-9].* matmul bm=" "$tmp/dry.err") \
    <(grep "^  [0-9].* matmul bm=" "$tmp/dry2.err")
check "... one walk entry in the cache" test "$(find "$KGEN_CACHE_DIR" -maxdepth 1 -name "*.walk" | wc -l)" = 1
KGEN_CACHE=0 "$KGEN" tune --dry-run --arch sm_90 --template matmul --space "$space" --m 100 --n 128 --k 64 \
    --top 0 >/dev/null 2>"$tmp/dry3.err"
check "KGEN_CACHE=0 walks again" grep -q "resources() calls in" "$tmp/dry3.err"
"$KGEN" tune --dry-run --arch sm_80 --template matmul --space "$space" --m 100 --n 128 --k 64 --top 0 \
    >/dev/null 2>"$tmp/dry4.err"
check "another architecture walks again" grep -q "resources() calls in" "$tmp/dry4.err"
# the limits table decides: 70 KB of shared memory fits sm_90, not sm_75
big="bm=256 bn=256 bk=32 tm=8 tn=8 pad=4 vec=4"
"$KGEN" tune --dry-run --arch sm_75 --template matmul --space "$big" >/dev/null 2>"$tmp/d75.err"
check "sm_75 rejects the 70 KB tile in check()" grep -q "pruned_check 1" "$tmp/d75.err"
"$KGEN" tune --dry-run --arch sm_90 --template matmul --space "$big" --json >"$tmp/d90.json" 2>"$tmp/d90.err"
check "sm_90 passes it to the compiler" grep -q "1 candidates" "$tmp/d90.err"
check "--json names the dry run" grep -q '"dry_run": true' "$tmp/d90.json"
# a kernel that cannot run the tuned shape is not compiled: at K = 129
# (lda = 129) the float4 loads are refused after rendering, before NVRTC
printf 'odd 257 193 129\n' >"$tmp/odd.txt"
printf 'odd 257 193 129\neven 256 192 128\n' >"$tmp/oddeven.txt"
"$KGEN" tune --dry-run --arch sm_90 --template matmul --space "$space" --shapes "$tmp/odd.txt" --top 0 \
    >/dev/null 2>"$tmp/gate.err"
check "float4 kernels are pruned_shape at K = 129" grep -q "pruned_shape 4 would-be-timed 4" "$tmp/gate.err"
check "... and only the 4 others are compiled" grep -q "^compiled: 4 " "$tmp/gate.err"
KGEN_CACHE_DIR=$tmp/cache-oe "$KGEN" tune --dry-run --arch sm_90 --template matmul --space "$space" \
    --shapes "$tmp/oddeven.txt" --top 0 >/dev/null 2>"$tmp/gate2.err"
check "the next shape, which takes float4 loads, compiles and would time all 8" \
    test "$(grep -c "^compiled: 8 \|outcomes: would-be-timed 8$" "$tmp/gate2.err")" = 2
# a budget and a strategy
"$KGEN" tune --dry-run --template matmul --space "$space" --strategy model --budget 3 >/dev/null 2>"$tmp/m.err"
check "model --budget 3 would time 3" grep -q "would-be-timed 3" "$tmp/m.err"
# the faulty test template: three modes, two block sizes
"$KGEN" tune --dry-run --template-dir "$SRC/templates" --template faulty >/dev/null 2>"$tmp/f.err"
check "--template-dir templates are tuned" grep -q "6 candidates" "$tmp/f.err"
# a template that requires no library module: its walk is cached all the same
for i in 1 2; do
    "$KGEN" tune --dry-run --template-dir "$SRC/templates" --template tricky --strategy model --budget 1 \
        >/dev/null 2>"$tmp/tr$i.err"
done
check "a walk is cached whatever modules its template loads" grep -q "read from the walk cache" "$tmp/tr2.err"

# the auto strategy times the catalogue's picks for the shape first, those its walk lacks too (matmul_warp's
# space leaves walk at 0), found however the catalogue file spells them (here not canonically)
cat >"$tmp/walk_catalogue.txt" <<'CAT'
kgen-catalogue 1
arch 90
sms 132
device synthetic sm_90 (no GPU)
driver none
date 2026-11-29
command cli_test.sh
kernel 1 matmul_warp 1 64 64 1 0 2 bm=64 bn=64 bk=8 wm=32 wn=32 vec=1 stages=3 cc=1 walk=2
kernel 2 matmul_warp 1 64 64 1 0 2 bm=64 bn=64 bk=8 wm=32 wn=32 vec=1 stages=3 cc=1
time nn 512 512 512 20.0 21.0
time nn 1024 1024 1024 80.0 84.0
time nn 2048 2048 512 160.0 168.0
CAT
KGEN_CATALOGUE=$tmp/walk_catalogue.txt "$KGEN" tune --dry-run --arch sm_90 --template matmul_warp --m 1000 --n 1000 \
    --k 1000 --budget 2 >/dev/null 2>"$tmp/cat.err"
check "a catalogue kernel the walk lacks joins the candidates" grep -q "(1 of them catalogue kernels the walk lacks)" \
    "$tmp/cat.err"
check "... the catalogue's picks are timed first" grep -q "(the catalogue's 2 first)" "$tmp/cat.err"
check "... the one the walk lacks among them" grep -q "^  [0-9].* matmul_warp .* walk=2 .*layout=nn" "$tmp/cat.err"
KGEN_CATALOGUE=$tmp/walk_catalogue.txt "$KGEN" tune --dry-run --arch sm_90 --template matmul_warp --m 1000 --n 1000 \
    --k 1000 --budget 2 --space "bm=64 bn=64 bk=8" >/dev/null 2>"$tmp/cat2.err"
check "--space (narrowed by hand): none joins" test "$(grep -c "catalogue kernels the walk lacks" "$tmp/cat2.err")" = 0
check "... the pick the narrowed space holds is timed first" grep -q "(the catalogue's 1 first)" "$tmp/cat2.err"

# a shard's local search and annealing move among its own candidates (the coordinates' hash rebuilt for the
# slice; it held the whole space's indices, so a sharded run read past its slice)
for strategy in auto anneal; do
    "$KGEN" tune --dry-run --arch sm_90 --template matmul --m 256 --n 256 --k 256 --shard 1/2 --strategy $strategy \
        --budget 24 >/dev/null 2>"$tmp/shard.err"
    check "a sharded $strategy search runs" test $? = 0
    check "... and evaluates its budget" grep -q "would-be-timed 24" "$tmp/shard.err"
done

# bad input: a message naming what was wrong, exit 2
expect 2 "unknown --strategy 'sideways'" tune --dry-run --strategy sideways
# the auto strategy's catalogue: a KGEN_CATALOGUE that cannot be read or parsed is an error, not a tune without it
printf 'kgen-catalogue 1\narch 90\n' >"$tmp/broken_catalogue.txt"
KGEN_CATALOGUE=$tmp/broken_catalogue.txt expect 2 "KGEN_CATALOGUE: .*broken_catalogue.txt:3" tune --dry-run --arch sm_90 --m 64 --n 64 --k 64
KGEN_CATALOGUE=$tmp/none.txt expect 1 "cannot open KGEN_CATALOGUE" tune --dry-run --arch sm_90 --m 64 --n 64 --k 64
expect 2 "shard must be I/N" tune --dry-run --shard 2/2
expect 2 "shard must be I/N" tune --dry-run --shard x
expect 2 "give all of --m, --n and --k" tune --m 10
expect 2 "needs a shape" tune --template matmul
expect 2 "no template being tuned has a parameter 'zz'" tune --dry-run --template matmul --space "zz=1"
expect 2 "bm must be 1..512" tune --dry-run --template matmul --space "bm=999"
expect 2 "not in the space" tune --dry-run --template matmul --space "layout=nn,tt"
expect 2 "layout must be" tune --dry-run --layout xy
expect 2 "is for --dry-run" tune --template matmul --arch sm_90 --m 64 --n 64 --k 64
expect 2 "--budget must be" tune --dry-run --budget 0
expect 2 "unknown template 'nosuch'" tune --dry-run --template nosuch
expect 2 "all cannot be combined" tune --dry-run --template all --template matmul
expect 2 "unknown architecture" tune --dry-run --arch sm_12
expect 2 "--max-seconds must be" tune --dry-run --max-seconds -1
expect 2 "--final must be 0..64" tune --dry-run --final -1
expect 2 "--final-rounds must be 1..1000" tune --dry-run --final-rounds 0
expect 2 "expected 'M N K'" tune --shapes <(echo "1 2")
expect 2 "not an integer" tune --shapes <(printf "big 4096 4096 x\n")
# a bad line after a good one: named, exit 2 (the list was freed twice: an abort, exit 134)
expect 2 ":2: 'b' is not an integer" tune --dry-run --arch sm_90 --shapes <(printf "a 64 64 64\nb 64 64\n")
expect 2 ":2: 'b' is not an integer" catalogue candidates --shapes <(printf "a 64 64 64\nb 64 64\n")
expect 2 "is longer than 31 characters" tune --dry-run --arch sm_90 --shapes <(printf "a2345678901234567890123456789012 64 64 64\n")
# bad input to a real run (no --dry-run): a message naming the option, exit 2,
# and the database neither created nor changed
"$KGEN" db import --db "$tmp/keep.db" /dev/stdin >/dev/null 2>&1 <<'ROWS'
device,cc,sm_count,template,template_version,dtype,layout,m,n,k,config,outcome,reason,time_ms,time_min_ms,time_max_ms,spread,reps,tflops,final_ms,registers,spill_bytes,smem_bytes,threads,occupancy,error,m_multiple,n_multiple,k_multiple,ld_multiple,kgen_version,created
Test GPU,90,132,matmul,1,f32,nn,64,64,64,bm=64 bn=64 bk=16 tm=4 tn=4 pad=0 vec=4 bounds=1 layout=nn,ok,,0.1026,0.1,0.11,0.01,10,20.9,0,59,0,8192,256,0.5,1e-07,1,1,1,4,0.1.0,2026-11-21T05:00:00.000Z
ROWS
keep_sum=$(cksum <"$tmp/keep.db")
printf "a 64 64 64\n" >"$tmp/ok.txt"
printf "a 64 0 64\n" >"$tmp/zero.txt"
printf "64 -8 64\n" >"$tmp/neg.txt"
: >"$tmp/empty.txt"
printf "# only a comment\n" >"$tmp/comment.txt"
for db in "$tmp/new.db" "$tmp/keep.db"; do
    expect 2 "--budget must be 1" tune --m 64 --n 64 --k 64 --budget 0 --db "$db"
    expect 2 "--time must be" tune --m 64 --n 64 --k 64 --time -1 --db "$db"
    expect 2 "--time must be" tune --shapes "$tmp/ok.txt" --time 0 --db "$db"
    expect 2 "--shapes: '$tmp/empty.txt' has no shapes" tune --shapes "$tmp/empty.txt" --db "$db"
    expect 2 "--shapes: '$tmp/comment.txt' has no shapes" tune --shapes "$tmp/comment.txt" --db "$db"
    expect 2 "--shapes: cannot open '$tmp/missing.txt'" tune --shapes "$tmp/missing.txt" --db "$db"
    expect 2 "--shapes: '$tmp' could not be read" tune --shapes "$tmp" --db "$db"
    expect 2 "--shapes $tmp/zero.txt:1 must be 1" tune --shapes "$tmp/zero.txt" --db "$db"
    expect 2 "--shapes $tmp/neg.txt:1 must be 1" tune --shapes "$tmp/neg.txt" --db "$db"
    expect 2 "--m must be 1" tune --m 0 --n 64 --k 64 --db "$db"
    expect 2 "unknown template 'nosuch'" tune --template nosuch --m 64 --n 64 --k 64 --db "$db"
    expect 2 "unknown --strategy 'sideways'" tune --strategy sideways --m 64 --n 64 --k 64 --db "$db"
    expect 2 "no template being tuned has a parameter 'zz'" tune --template matmul --space "zz=1" --m 64 --n 64 \
        --k 64 --db "$db"
done
check "bad input creates no database" test ! -e "$tmp/new.db"
check "bad input leaves a database as it was" test "$(cksum <"$tmp/keep.db")" = "$keep_sum"

# no GPU here: a clear failure, exit 1 (on a GPU machine this sweep just runs)
"$KGEN" tune --template matmul --space "bm=64 bn=64 bk=8 tm=4 tn=4 pad=0 vec=4" --m 64 --n 64 --k 64 \
    --db "$tmp/g.db" >/dev/null 2>"$tmp/g.err"
rc=$?
if [ "$rc" != 0 ]; then
    check "without a GPU, tune fails with 1 and says why" test "$rc" = 1
    check "... naming the driver" grep -q "CUDA\|libcuda\|device" "$tmp/g.err"
fi

# the database commands
cat >"$tmp/rows.csv" <<'EOF'
device,cc,sm_count,template,template_version,dtype,layout,m,n,k,config,outcome,reason,time_ms,time_min_ms,time_max_ms,spread,reps,tflops,final_ms,registers,spill_bytes,smem_bytes,threads,occupancy,error,m_multiple,n_multiple,k_multiple,ld_multiple,kgen_version,created
Test GPU,90,132,matmul,1,f32,nn,1024,1024,1024,bm=64 bn=64 bk=16 tm=4 tn=4 pad=0 vec=4 bounds=1 layout=nn,ok,,0.1026,0.1,0.11,0.01,10,20.9,0,59,0,8192,256,0.5,1e-07,1,1,1,4,0.1.0,2026-11-21T05:00:00.000Z
Test GPU,90,132,matmul,1,f32,nn,1024,1024,1024,bm=64 bn=64 bk=8 tm=4 tn=4 pad=0 vec=4 bounds=1 layout=nn,wrong,"C[3][5] = 1, reference 2",0,0,0,0,0,0,0,62,0,4096,256,0.5,inf,1,1,1,4,0.1.0,2026-11-21T05:00:00.000Z
EOF
# the same rows as a version-1 export wrote them (no final_ms column)
cat >"$tmp/rows_v1.csv" <<'EOF'
device,cc,sm_count,template,template_version,dtype,layout,m,n,k,config,outcome,reason,time_ms,time_min_ms,time_max_ms,spread,reps,tflops,registers,spill_bytes,smem_bytes,threads,occupancy,error,m_multiple,n_multiple,k_multiple,ld_multiple,kgen_version,created
Test GPU,90,132,matmul,1,f32,nn,1024,1024,1024,bm=64 bn=64 bk=16 tm=4 tn=4 pad=0 vec=4 bounds=1 layout=nn,ok,,0.1026,0.1,0.11,0.01,10,20.9,59,0,8192,256,0.5,1e-07,1,1,1,4,0.1.0,2026-11-21T05:00:00.000Z
Test GPU,90,132,matmul,1,f32,nn,1024,1024,1024,bm=64 bn=64 bk=8 tm=4 tn=4 pad=0 vec=4 bounds=1 layout=nn,wrong,"C[3][5] = 1, reference 2",0,0,0,0,0,0,62,0,4096,256,0.5,inf,1,1,1,4,0.1.0,2026-11-21T05:00:00.000Z
EOF
"$KGEN" db import --db "$tmp/d.db" "$tmp/rows.csv" >"$tmp/imp.out" 2>&1
check "import exits 0" test $? = 0
check "import reports 2 rows" grep -q "2 rows added" "$tmp/imp.out"
# rows kg_matmul must never trust are refused, and nothing is written
for bad in 's/,ok,,0.1026,/,ok,,nan,/' 's/,ok,,0.1026,/,ok,,0,/' 's/,nn,1024,1024,1024,/,zz,1024,1024,1024,/' \
           's/,nn,1024,1024,1024,/,nn,-5,1024,1024,/' 's/2026-11-21T05:00:00.000Z$/2026-11-21 05:00/'; do
    (head -1 "$tmp/rows.csv"; sed -n 2p "$tmp/rows.csv" | sed "$bad") >"$tmp/bad.csv"
    "$KGEN" db import --db "$tmp/bad.db" "$tmp/bad.csv" >/dev/null 2>&1
    check "import refuses a row edited by $bad" test $? != 0
done
"$KGEN" db list --db "$tmp/bad.db" >"$tmp/badlist.out" 2>&1
check "a refused import writes no row" sh -c "! grep -q 'Test GPU' '$tmp/badlist.out'"
"$KGEN" db list --db "$tmp/d.db" >"$tmp/list.out"
check "list shows the shape and its best" grep -q "Test GPU.*1024x1024x1024 .* 2 .* 1 .*0.1026.*bk=16" "$tmp/list.out"
"$KGEN" db show --db "$tmp/d.db" --outcome wrong >"$tmp/show.out"
check "show --outcome wrong gives the reason" grep -q "reference 2" "$tmp/show.out"
"$KGEN" db export --db "$tmp/d.db" -o "$tmp/e.json"
check "export -o x.json writes JSON" grep -q '"kgen_tuning_db": 2' "$tmp/e.json"
"$KGEN" db export --db "$tmp/d.db" --format csv -o "$tmp/e.csv"
check "export round-trips the imported CSV" cmp -s "$tmp/rows.csv" "$tmp/e.csv"
"$KGEN" db import --db "$tmp/d5.db" "$tmp/rows_v1.csv" >/dev/null
"$KGEN" db export --db "$tmp/d5.db" --format csv -o "$tmp/e4.csv"
check "a version-1 export (no final_ms) imports with final_ms 0" cmp -s "$tmp/rows.csv" "$tmp/e4.csv"
"$KGEN" db import --db "$tmp/d2.db" "$tmp/e.json" >/dev/null
"$KGEN" db export --db "$tmp/d2.db" -o "$tmp/e2.csv"
check "JSON import gives the same rows" cmp -s "$tmp/rows.csv" "$tmp/e2.csv"
# a JSON export of a format this kgen does not read: refused, no database made
sed 's/"kgen_tuning_db": 2/"kgen_tuning_db": 99/' "$tmp/e.json" >"$tmp/e99.json"
expect 1 "kgen_tuning_db is 99; this kgen reads versions 1 to 2" db import --db "$tmp/d99.db" "$tmp/e99.json"
check "an unreadable format makes no database" test ! -e "$tmp/d99.db"
"$KGEN" db merge --db "$tmp/d3.db" "$tmp/d.db" "$tmp/d2.db" >"$tmp/merge.out"
check "merge adds then keeps" grep -q "2 rows added" "$tmp/merge.out"
check "merge of the same rows keeps them" grep -q "2 kept" "$tmp/merge.out"
# errors: nothing written, no partial output
sed 's/,1024,1024,1024,bm=64 bn=64 bk=8/,1024,x,1024,bm=64 bn=64 bk=8/' "$tmp/rows.csv" >"$tmp/bad.csv"
expect 1 "line 3: column n: 'x' is not an integer" db import --db "$tmp/d4.db" "$tmp/bad.csv"
check "a failed import creates no database" test ! -e "$tmp/d4.db"
expect 1 "cannot" db export --db "$tmp/d.db" -o "$tmp/no/such/dir/x.csv"
check "no partial export file" test ! -e "$tmp/no/such/dir/x.csv"
expect 1 "is not a database" db list --db "$tmp/rows.csv"
check "db list of a missing database says so" sh -c "'$KGEN' db list --db '$tmp/missing.db' | grep -q 'no tuning database yet'"
expect 1 "no tuning database" db export --db "$tmp/missing.db"
expect 2 "unknown db command 'drop'" db drop
expect 2 "list|show" db
expect 2 "unknown outcome 'great'" db show --db "$tmp/d.db" --outcome great
expect 2 "needs at least one FILE" db merge --db "$tmp/d.db"
expect 2 "--format must be csv or json" db export --db "$tmp/d.db" --format xml

# --configs: exactly the listed configurations (no walk), in the run's layout
cat >"$tmp/list.txt" <<'LIST'
# two of matmul_warp, one of matmul, one check() rejects
matmul_warp bm=64 bk=16 wn=32 stages=3 raster=8
matmul bm=64 bn=64 bk=16 tm=4 tn=4
matmul_warp bm=64 bk=16 wn=32 stages=3 raster=8 splitk=2 red=4

matmul bm=36 bn=64 bk=16 tm=8 tn=4
LIST
"$KGEN" tune --dry-run --arch sm_90 --configs "$tmp/list.txt" --layout tn --m 200 --n 256 --k 512 --top 0 \
    --db "$tmp/never.db" >"$tmp/cfg.out" 2>"$tmp/cfg.err"
check "--configs dry run exits 0" test $? = 0
check "--configs: 4 combinations, 1 rejected, 3 candidates" \
    grep -q "4 combinations of 2 templates, 1 rejected by check() (1 subtrees), 3 candidates" "$tmp/cfg.err"
check "--configs: exhaustive by default" grep -q "strategy exhaustive: 3 evaluated" "$tmp/cfg.err"
check "--configs: the run's layout on every line" test "$(grep -c 'layout=tn$' "$tmp/cfg.err")" = 3
check "--configs: the split-K line kept its splitk" grep -q "splitk=2 .*layout=tn" "$tmp/cfg.err"
check "--configs dry run creates no database" test ! -e "$tmp/never.db"
check "--configs: the line check() rejects is named, with the rule" \
    grep -q "list.txt:6 (matmul): not timed here: bm=36 is not a multiple of tm=8" "$tmp/cfg.err"
printf 'matmul_warp bm=64\nmatmul_warp bm=64 foo=1\n' >"$tmp/list7.txt"
expect 2 "list7.txt:2: unknown parameter 'foo'" tune --dry-run --configs "$tmp/list7.txt" --m 8 --n 8 --k 8
# a fixed configuration whose every combination check() rejects: the summary says which rule
expect 0 "check() rejected every combination; matmul_warp .*: skw=1 is stream-K's workspace" \
    tune --dry-run --arch sm_90 --template matmul_warp --config "skw=1 sk=0" --m 64 --n 64 --k 64
# ... but not where only this shard's slice is empty (the valid line went to shard 0)
printf 'matmul bm=64 bn=64 bk=16 tm=4 tn=4\nmatmul bm=512 bn=512\nmatmul bm=256 bn=256\n' >"$tmp/list9.txt"
"$KGEN" tune --dry-run --arch sm_90 --configs "$tmp/list9.txt" --m 64 --n 64 --k 64 --shard 1/2 >"$tmp/shard.out" 2>&1
check "--shard: a shard with no candidate says so" grep -q "no configuration would be timed" "$tmp/shard.out"
check "... and not that check() rejected everything" test "$(grep -c "rejected every combination" "$tmp/shard.out")" = 0
printf 'matmul bm=64\nnosuch bm=64\n' >"$tmp/list10.txt"
expect 2 "list10.txt:2: unknown template 'nosuch'" tune --dry-run --configs "$tmp/list10.txt" --m 8 --n 8 --k 8
printf 'matmul bm=abc\n' >"$tmp/list8.txt"
expect 2 "list8.txt:1: bm: 'abc' is not an integer" tune --dry-run --configs "$tmp/list8.txt" --m 8 --n 8 --k 8
printf 'matmul_warp bm=64 layout=nn\n' >"$tmp/list2.txt"
expect 2 "list2.txt:1: a line may not set layout" tune --dry-run --configs "$tmp/list2.txt" --m 8 --n 8 --k 8
printf '# nothing\n\n' >"$tmp/list3.txt"
expect 2 "no configurations" tune --dry-run --configs "$tmp/list3.txt" --m 8 --n 8 --k 8
printf 'matmul_warp bm=64\n9x bm=64\n' >"$tmp/list4.txt"
expect 2 "list4.txt:2: '9x' is not a template name" tune --dry-run --configs "$tmp/list4.txt" --m 8 --n 8 --k 8
printf 'matmul_warp bm=64 bm=128\n' >"$tmp/list5.txt"
expect 2 "list5.txt:1: bm given twice" tune --dry-run --configs "$tmp/list5.txt" --m 8 --n 8 --k 8
printf 'nosuch bm=64\n' >"$tmp/list6.txt"
expect 2 "nosuch" tune --dry-run --configs "$tmp/list6.txt" --m 8 --n 8 --k 8
expect 2 "cannot open" tune --dry-run --configs "$tmp/none.txt" --m 8 --n 8 --k 8
expect 2 "give no --template, --space or parameter options" tune --dry-run --configs "$tmp/list.txt" --bm 64 \
    --m 8 --n 8 --k 8
expect 2 "give no --template" tune --dry-run --configs "$tmp/list.txt" --template matmul --m 8 --n 8 --k 8

finish
