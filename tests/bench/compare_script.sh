#!/bin/bash
# shellcheck disable=SC2015 # `ok` always succeeds, so A && ok || bad is an if-then-else
# bench/compare-catalogues.sh without a GPU: its refusals (usage, no
# kgen-bench, no catalogue, one for another architecture, bad settings:
# exit 2; no GPU: exit 1, nothing written), the held-out draw (the same
# seed, the same products), and its summary over the CSVs of stand-ins for
# kgen-bench and kgen whose times and answers are known.
# Usage: compare_script.sh COMPARE_SH SOURCE_ROOT
CMP=$1; SRC=$2
PROG=$CMP
# shellcheck source=tests/bench/checks.sh
. "$(dirname "$0")/checks.sh"
CAT=$SRC/catalogue/sm_90.txt
# the stand-ins: kgen device answers sm_$ARCH (90 unless set); kgen-bench --device-name answers unless NOGPU is
# set; a run writes one CSV row per shape of its --shapes file: with the embedded catalogue kernel "a", 1.0 ms,
# 1.0 of cuBLAS; with KGEN_CATALOGUE the same times SCALE (1 unless set), except the shape tagged s2, which
# runs kernel "b" in 0.5 ms (2.0 of cuBLAS), and s3, which runs "c" in 4.0 ms; the shape tagged $WRONG (none
# unless set) has a wrong result with KGEN_CATALOGUE; with FAILNEW set, a run with KGEN_CATALOGUE fails in
# layout nn and writes no CSV
# kgen choice answers kernel "a" for every shape, and with KGEN_CATALOGUE "b" for s2 and "c" for s3, as the
# stand-in kgen-bench runs them
mkdir -p "$T/b/bench" "$T/b/cli"
cat > "$T/b/cli/kgen" <<'STANDIN'
#!/bin/sh
[ "$1" = device ] && echo "  Compute capability    9.0 (sm_${ARCH:-90})"
if [ "$1" = choice ]; then
    while [ $# -gt 0 ]; do case $1 in --shapes) shapes=$2; shift ;; --layout) layout=$2; shift ;; esac; shift; done
    [ -n "${FAILCHOICE:-}" ] && { echo "kgen: choice: stand-in failure" >&2; exit 1; }
    awk -v l="$layout" -v new="${KGEN_CATALOGUE:+1}" '{ sub(/#.*/, "") } NF == 0 { next }
        { k = "a"; if (new && $1 == "s2") k = "b"; if (new && $1 == "s3") k = "c"
          printf "%s %s %sx%sx%s matmul_warp %s layout=%s\n", $1, l, $2, $3, $4, k, l }' "$shapes"
fi
exit 0
STANDIN
chmod +x "$T/b/cli/kgen"
cat > "$T/b/bench/kgen-bench" <<'STANDIN'
#!/bin/sh
[ "$1" = --device-name ] && { [ -z "${NOGPU:-}" ] && echo "Stand-in GPU" && exit 0; echo "kgen-bench: no GPU: none here" >&2; exit 1; }
while [ $# -gt 0 ]; do
    case $1 in --shapes) shapes=$2; shift ;; --layout) layout=$2; shift ;; --csv) csv=$2; shift ;; esac
    shift
done
[ -n "${KGEN_CATALOGUE:-}" ] && [ -n "${FAILNEW:-}" ] && [ "$layout" = nn ] && { echo "stand-in failure" >&2; exit 1; }
# ROUNDLOG: each run appends "LAYOUT old|new"; with ROUNDSCALES, the Nth run with KGEN_CATALOGUE in a layout takes
# the Nth of them as SCALE
if [ -n "${ROUNDLOG:-}" ]; then
    side=old; [ -n "${KGEN_CATALOGUE:-}" ] && side=new
    echo "$layout $side" >> "$ROUNDLOG"
    [ "$side" = new ] && [ -n "${ROUNDSCALES:-}" ] &&
        SCALE=$(echo "$ROUNDSCALES" | cut -d' ' -f"$(grep -c "^$layout new\$" "$ROUNDLOG")")
fi
awk -v l="$layout" -v new="${KGEN_CATALOGUE:+1}" -v scale="${SCALE:-1}" -v wrong="${WRONG:-}" '
BEGIN { print "tag,M,N,K,kgen_tflops,cublas_tflops,ratio,kgen_ms,cublas_ms,error,ok,template,config,device,layout" }
/^#/ || NF < 4 { next }
{ k = "a"; t = new ? scale : 1.0; ok = !(new && $1 == wrong)
  if (new && $1 == "s2") { k = "b"; t = 0.5 } if (new && $1 == "s3") { k = "c"; t = 4.0 }
  printf "%s,%s,%s,%s,1,1,%.4f,%g,1.0,0,%d,matmul_warp,%s layout=%s,GPU,%s\n", $1, $2, $3, $4, 1.0 / t, t, ok, k, l, l }
' "$shapes" > "$csv"
STANDIN
chmod +x "$T/b/bench/kgen-bench"
mkdir "$T/empty"

expect 2 "usage: bench/compare-catalogues.sh" --
expect 2 "usage: bench/compare-catalogues.sh" -- "$T/b" "$CAT" "$T/o" extra
expect 2 "kgen-bench not found" -- "$T/empty" "$CAT"
mkdir -p "$T/nokgen/bench" && cp "$T/b/bench/kgen-bench" "$T/nokgen/bench/"
expect 2 "cli/kgen not found" -- "$T/nokgen" "$CAT"
expect 2 "cannot read the catalogue '$T/none.txt'" -- "$T/b" "$T/none.txt"
echo "not a catalogue" > "$T/text.txt"
expect 2 "is not a kgen catalogue" -- "$T/b" "$T/text.txt"
KGEN_BENCH_SETS="grid odd" expect 2 "unknown set 'odd'" -- "$T/b" "$CAT" "$T/o"
KGEN_BENCH_LAYOUTS="nn xy" expect 2 "unknown layout 'xy'" -- "$T/b" "$CAT" "$T/o"
KGEN_COMPARE_SEED=12x expect 2 "KGEN_COMPARE_SEED: not a number '12x'" -- "$T/b" "$CAT" "$T/o"
KGEN_COMPARE_HELDOUT="$T/none.txt" expect 2 "KGEN_COMPARE_HELDOUT: cannot read the file" -- "$T/b" "$CAT" "$T/o"
KGEN_COMPARE_HELDOUT="$T/empty" expect 2 "KGEN_COMPARE_HELDOUT: cannot read the file" -- "$T/b" "$CAT" "$T/o"
KGEN_BENCH_SETS=" " expect 2 "KGEN_BENCH_SETS: no set named" -- "$T/b" "$CAT" "$T/o"
KGEN_BENCH_LAYOUTS=" " expect 2 "KGEN_BENCH_LAYOUTS: no layout named" -- "$T/b" "$CAT" "$T/o"
expect 2 "OUT_DIR '$T/text.txt' is not a directory" -- "$T/b" "$CAT" "$T/text.txt"
ARCH=80 expect 2 "is a catalogue for sm_90, and this GPU is sm_80" -- "$T/b" "$CAT" "$T/o"
NOGPU=1 expect 1 "no GPU:" -- "$T/b" "$CAT" "$T/o"
[ ! -e "$T/o" ] && ok || bad "a refused run created its output directory"
sh "$CMP" --help | grep -q "KGEN_COMPARE_SEED" && ok || bad "--help"

# held-out draws: 40 products, 24 general and 16 thin; the same seed draws the same, another seed others
for d in 1 2; do
    KGEN_BENCH_SETS=heldout KGEN_BENCH_LAYOUTS=nn KGEN_COMPARE_SEED=20261127 sh "$CMP" "$T/b" "$CAT" "$T/h$d" > /dev/null 2>&1 ||
        bad "the held-out run $d failed"
done
KGEN_BENCH_SETS=heldout KGEN_BENCH_LAYOUTS=nn KGEN_COMPARE_SEED=7 sh "$CMP" "$T/b" "$CAT" "$T/h3" > /dev/null 2>&1 ||
    bad "the held-out run with seed 7 failed"
[ "$(grep -vc '^#' "$T/h1/heldout.txt")" = 40 ] && [ "$(grep -c '^h' "$T/h1/heldout.txt")" = 24 ] && ok ||
    bad "the draw is not 40 products, 24 general: $(cat "$T/h1/heldout.txt")"
awk '/^h/ && ($2 < 17 || $3 < 17 || $4 < 8 || $4 > 32768) { exit 1 } /^v/ && ($2 > 16 && $3 > 16) { exit 1 }' \
    "$T/h1/heldout.txt" && ok || bad "a drawn product is out of its range: $(cat "$T/h1/heldout.txt")"
cmp -s "$T/h1/heldout.txt" "$T/h2/heldout.txt" && ok || bad "the same seed drew other products"
# the draw is the script's own generator, not awk's rand (whose sequence for a seed differs between awks): seed
# 20261127 draws these first three products wherever it runs
[ "$(sed -n 2,4p "$T/h1/heldout.txt" | tr '\n' ' ')" = "h01 864 12656 28 h02 63 34 30362 h03 323 275 2294 " ] && ok ||
    bad "seed 20261127 drew other first products: $(sed -n 2,4p "$T/h1/heldout.txt" | tr '\n' ' ')"
! cmp -s <(grep -v '^#' "$T/h1/heldout.txt") <(grep -v '^#' "$T/h3/heldout.txt") && ok || bad "another seed drew the same products"

# the summary, on a given list: 4 shapes, s2 2x faster with its new kernel, s3 4x slower, s1 and s4 unchanged
printf '# tag M N K\ns1 64 64 64\ns2 128 128 128\ns3 256 256 256\ns4 512 512 512\n' > "$T/list.txt"
KGEN_BENCH_SETS=heldout KGEN_BENCH_LAYOUTS="nn tt" KGEN_COMPARE_HELDOUT="$T/list.txt" \
    sh "$CMP" "$T/b" "$CAT" "$T/s" > "$T/out" 2> "$T/err"; rc=$?
[ $rc -eq 0 ] && ok || bad "the stand-in run exited $rc: $(cat "$T/err")"
cmp -s "$T/list.txt" "$T/s/heldout.txt" && ok || bad "KGEN_COMPARE_HELDOUT's list was not the one run"
line=$(grep '^heldout-nn ' "$T/s/summary.txt")
# shapes 4; old/cuBLAS 1; new/cuBLAS (2 x 0.25)^(1/4) = 0.841; below 0.9: old 0, new 1 (s3); wrong 0;
# changed 2; new/old (0.5 x 4)^(1/2) = 1.414; faster 1, slower 1; drift 1 (s1, s4); worst s3 4.00; slowest s3
want="heldout-nn 4 1.000 0.841 0 1 0 2 1.414 1 1 1.000 s3 4.00 s3 4.000"
[ "$(echo "$line" | tr -s ' ')" = "$want" ] && ok || bad "summary line '$line', want '$want'"
grep -q '^heldout-tt ' "$T/s/summary.txt" && ok || bad "no tt line: $(cat "$T/s/summary.txt")"
grep -q "Stand-in GPU" "$T/s/summary.txt" && ok || bad "the summary does not name the GPU"
grep -qF "against $CAT (new)" "$T/s/summary.txt" && ok || bad "the summary does not name the catalogue: $(head -n 1 "$T/s/summary.txt")"
[ -s "$T/s/old-heldout-nn.csv" ] && [ -s "$T/s/new-heldout-tt.csv" ] && ok || bad "the CSVs were not kept"

# the same OUT_DIR again, its list given back from it (not copied onto itself), layout nn only, the new file's
# times 1.21 times the old where the kernel did not change (drift 1.21) and s4 wrong with it
KGEN_BENCH_SETS=heldout KGEN_BENCH_LAYOUTS=nn KGEN_COMPARE_HELDOUT="$T/s/heldout.txt" SCALE=1.21 WRONG=s4 \
    sh "$CMP" "$T/b" "$CAT" "$T/s" > "$T/out" 2> "$T/err"; rc=$?
[ $rc -eq 0 ] && cmp -s "$T/list.txt" "$T/s/heldout.txt" && ok || bad "the list given back from OUT_DIR: exit $rc: $(cat "$T/err")"
line=$(grep '^heldout-nn ' "$T/s/summary.txt")
# s4 wrong: left out; s1 unchanged at 1.21 (drift); s2 0.5 and s3 4.0 as before; new/cuBLAS (1/1.21 x 2 x 0.25)^(1/3)
want="heldout-nn 3 1.000 0.745 0 2 1 2 1.414 1 1 1.210 s3 4.00 s3 4.000"
[ "$(echo "$line" | tr -s ' ')" = "$want" ] && ok || bad "summary line '$line', want '$want'"
! grep -q '^heldout-tt ' "$T/s/summary.txt" && ok || bad "the earlier run's tt results were summarized again"
# a run whose new side fails in nn: exit 1, nn named as not compared, the earlier nn results not used
KGEN_BENCH_SETS=heldout KGEN_BENCH_LAYOUTS="nn tt" KGEN_COMPARE_HELDOUT="$T/list.txt" FAILNEW=1 \
    sh "$CMP" "$T/b" "$CAT" "$T/s" > "$T/out" 2> "$T/err"; rc=$?
[ $rc -eq 1 ] && ok || bad "a failed run exited $rc, not 1"
grep -q "^heldout-nn: not compared" "$T/s/summary.txt" && ! grep -q '^heldout-nn ' "$T/s/summary.txt" && ok ||
    bad "the failed nn is not named as not compared: $(cat "$T/s/summary.txt")"
grep -q '^heldout-tt ' "$T/s/summary.txt" && ok || bad "the tt that ran is not summarized"

# KGEN_COMPARE_ROUNDS=3: three rounds, the first file of each alternating; each shape's median round compared. The
# new file's unchanged shapes run 1, 3 and 2 times the old's in its three runs: the median, 2, is the drift;
# new/cuBLAS (1/2 x 2 x 0.25 x 1/2)^(1/4) = 0.595, three shapes below 0.9 with it
for v in 0 10 x; do
    KGEN_COMPARE_ROUNDS=$v expect 2 "KGEN_COMPARE_ROUNDS: not a count from 1 to 9 '$v'" -- "$T/b" "$CAT" "$T/r$v"
done
KGEN_BENCH_SETS=heldout KGEN_BENCH_LAYOUTS=nn KGEN_COMPARE_HELDOUT="$T/list.txt" KGEN_COMPARE_ROUNDS=3 \
    ROUNDLOG="$T/rounds.log" ROUNDSCALES="1 3 2" sh "$CMP" "$T/b" "$CAT" "$T/r" > "$T/out" 2> "$T/err"; rc=$?
[ $rc -eq 0 ] && ok || bad "the three-round run exited $rc: $(cat "$T/err")"
[ "$(tr '\n' ' ' < "$T/rounds.log")" = "nn old nn new nn new nn old nn old nn new " ] && ok ||
    bad "the rounds ran in the order $(tr '\n' ' ' < "$T/rounds.log")"
[ -s "$T/r/old-heldout-nn.r3.csv" ] && [ -s "$T/r/new-heldout-nn.r2.csv" ] && ok || bad "the rounds' CSVs were not kept"
[ "$(cut -d, -f1,8 "$T/r/new-heldout-nn.csv" | tr '\n' ' ')" = "tag,kgen_ms s1,2 s2,0.5 s3,4 s4,2 " ] && ok ||
    bad "the median rounds: $(cut -d, -f1,8 "$T/r/new-heldout-nn.csv" | tr '\n' ' ')"
line=$(grep '^heldout-nn ' "$T/r/summary.txt")
want="heldout-nn 4 1.000 0.595 0 3 0 2 1.414 1 1 2.000 s3 4.00 s3 4.000"
[ "$(echo "$line" | tr -s ' ')" = "$want" ] && ok || bad "three-round summary line '$line', want '$want'"

# KGEN_COMPARE_OLD_BENCH: "old" is another build's kgen-bench (a stand-in whose kg_matmul runs kernel "a" in
# 1.0 ms at every shape but s4, 0.2 ms there); the new side is this build's with the catalogue as before
cat > "$T/oldbench" <<'STANDIN'
#!/bin/sh
while [ $# -gt 0 ]; do
    case $1 in --shapes) shapes=$2; shift ;; --layout) layout=$2; shift ;; --csv) csv=$2; shift ;; esac
    shift
done
[ -z "${KGEN_CATALOGUE:-}" ] || { echo "the other build was given KGEN_CATALOGUE" >&2; exit 1; }
awk -v l="$layout" '
BEGIN { print "tag,M,N,K,kgen_tflops,cublas_tflops,ratio,kgen_ms,cublas_ms,error,ok,template,config,device,layout" }
/^#/ || NF < 4 { next }
{ t = $1 == "s4" ? 0.2 : 1.0
  printf "%s,%s,%s,%s,1,1,%.4f,%g,1.0,0,1,matmul_warp,a layout=%s,GPU,%s\n", $1, $2, $3, $4, 1.0 / t, t, l, l }
' "$shapes" > "$csv"
STANDIN
chmod +x "$T/oldbench"
KGEN_COMPARE_OLD_BENCH="$T/none" expect 2 "KGEN_COMPARE_OLD_BENCH: not an executable file" -- "$T/b" "$CAT" "$T/ob"
KGEN_COMPARE_OLD_BENCH="$T/oldbench" KGEN_COMPARE_CHANGED=1 expect 2 "takes no KGEN_COMPARE_CHANGED" -- "$T/b" "$CAT" "$T/ob"
KGEN_BENCH_SETS=heldout KGEN_BENCH_LAYOUTS=nn KGEN_COMPARE_HELDOUT="$T/list.txt" KGEN_COMPARE_OLD_BENCH="$T/oldbench" \
    sh "$CMP" "$T/b" "$CAT" "$T/ob" > "$T/out" 2> "$T/err"; rc=$?
[ $rc -eq 0 ] && ok || bad "the run against another build exited $rc: $(cat "$T/err")"
line=$(grep '^heldout-nn ' "$T/ob/summary.txt")
# old/cuBLAS (1 x 1 x 1 x 5)^(1/4) = 1.495; changed s2, s3 as before; drift over s1 (1) and s4 (1.0 / 0.2 = 5)
# sqrt(5) = 2.236; worst of the changed s3 4.00; slowest of all s4 5.000
want="heldout-nn 4 1.495 0.841 0 1 0 2 1.414 1 1 2.236 s3 4.00 s4 5.000"
[ "$(echo "$line" | tr -s ' ')" = "$want" ] && ok || bad "summary against another build '$line', want '$want'"
grep -qF "$T/oldbench's kg_matmul (old) against $CAT (new)" "$T/ob/summary.txt" && ok ||
    bad "the summary does not name the other build: $(head -n 1 "$T/ob/summary.txt")"

# KGEN_COMPARE_CHANGED=1: only s2 and s3, whose kernel differs, are timed; a list where none differs is not
KGEN_COMPARE_CHANGED=2 expect 2 "KGEN_COMPARE_CHANGED: 1 or 0, not '2'" -- "$T/b" "$CAT" "$T/c"
KGEN_BENCH_SETS=heldout KGEN_BENCH_LAYOUTS="nn tt" KGEN_COMPARE_HELDOUT="$T/list.txt" KGEN_COMPARE_CHANGED=1 \
    sh "$CMP" "$T/b" "$CAT" "$T/c" > "$T/out" 2> "$T/err"; rc=$?
[ $rc -eq 0 ] && ok || bad "the changed-only run exited $rc: $(cat "$T/err")"
[ "$(cat "$T/c/changed-heldout-nn.txt")" = "$(printf 's2 128 128 128\ns3 256 256 256')" ] && ok ||
    bad "the changed shapes: $(cat "$T/c/changed-heldout-nn.txt")"
[ "$(cut -d, -f1 "$T/c/new-heldout-nn.csv" | tr '\n' ' ')" = "tag s2 s3 " ] && ok || bad "kgen-bench ran other shapes"
line=$(grep '^heldout-nn ' "$T/c/summary.txt")
# shapes 2; old/cuBLAS 1; new/cuBLAS (2 x 0.25)^(1/2) = 0.707; below 0.9: 0 and 1; changed 2; new/old 1.414;
# faster 1, slower 1; no drift; worst s3 4.00
want="heldout-nn 2 1.000 0.707 0 1 0 2 1.414 1 1 - s3 4.00 s3 4.000"
[ "$(echo "$line" | tr -s ' ')" = "$want" ] && ok || bad "changed-only summary line '$line', want '$want'"
grep -q "only the shapes whose kernel the two files choose differently were timed" "$T/c/summary.txt" && ok ||
    bad "the summary does not say only changed shapes were timed"
printf 's1 64 64 64\ns4 512 512 512\n' > "$T/same.txt"
KGEN_BENCH_SETS=heldout KGEN_BENCH_LAYOUTS=nn KGEN_COMPARE_HELDOUT="$T/same.txt" KGEN_COMPARE_CHANGED=1 \
    sh "$CMP" "$T/b" "$CAT" "$T/c2" > "$T/out" 2> "$T/err"; rc=$?
[ $rc -eq 0 ] && grep -q "^heldout-nn: the same kernel for every shape with both files" "$T/c2/summary.txt" && ok ||
    bad "no changed shape: exit $rc, summary $(cat "$T/c2/summary.txt")"
[ ! -e "$T/c2/old-heldout-nn.csv" ] && ok || bad "kgen-bench ran where no choice differs"
KGEN_BENCH_SETS=heldout KGEN_BENCH_LAYOUTS=nn KGEN_COMPARE_HELDOUT="$T/list.txt" KGEN_COMPARE_CHANGED=1 FAILCHOICE=1 \
    sh "$CMP" "$T/b" "$CAT" "$T/c3" > "$T/out" 2> "$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "^heldout-nn: not compared (kgen choice failed)" "$T/c3/summary.txt" && ok ||
    bad "kgen choice failing: exit $rc, summary $(cat "$T/c3/summary.txt")"
[ ! -e "$T/c3/old-heldout-nn.csv" ] && ok || bad "kgen-bench ran where kgen choice failed"
finish
