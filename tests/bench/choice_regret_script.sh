#!/bin/bash
# shellcheck disable=SC2015 # `ok` always succeeds, so A && ok || bad is an if-then-else
# bench/choice-regret.sh without a GPU: its refusals (usage, no kgen-bench,
# no shape list, bad settings, no catalogue for the GPU: exit 2; no GPU:
# exit 1, nothing written) and its summary over the CSVs of a stand-in
# kgen-bench whose times and answers are known. The stand-in kgen answers
# `device` itself and passes `catalogue` to the real kgen, so the kernel
# lists are `kgen catalogue kernels --layout`'s own.
# Usage: choice_regret_script.sh CHOICE_REGRET_SH SOURCE_ROOT KGEN
SCRIPT=$1; SRC=$2; REAL_KGEN=$3
PROG=$SCRIPT
# shellcheck source=tests/bench/checks.sh
. "$(dirname "$0")/checks.sh"
mkdir -p "$T/b/bench" "$T/b/cli"
cat > "$T/b/cli/kgen" <<STANDIN
#!/bin/sh
[ "\$1" = device ] && { echo "  Compute capability    9.0 (sm_\${ARCH:-90})"; exit 0; }
exec "$REAL_KGEN" "\$@"
STANDIN
chmod +x "$T/b/cli/kgen"
# the stand-in kgen-bench: --device-name answers unless NOGPU is set. With --configs it writes a row per shape
# and configuration line j (1, 2, ...): 2.0 ms, except line 3, 1.0 ms (the fastest), and line 5 at the shape
# tagged s2, 1.5 ms; line 2 is wrong at s4 (the CSV written, exit 1, as kgen-bench does); shape s5 runs
# nothing (every kernel skipped); it fails, with no CSV, where FAILSWEEP names the layout. With --no-db
# (kg_matmul's choice): s1 and s4 choose line 3, s2 line 5 (1.4 ms in its own run), s3 a configuration no line
# has (1.2 ms), s5 line 1. cuBLAS takes 1.0 ms. A shape list with a line 'bad' is refused (exit 2, no CSV).
# Each run records KGEN_CATALOGUE in $T/env.
cat > "$T/b/bench/kgen-bench" <<'STANDIN'
#!/bin/sh
[ "$1" = --device-name ] && { [ -z "${NOGPU:-}" ] && echo "Stand-in GPU" && exit 0; echo "kgen-bench: no GPU: none here" >&2; exit 1; }
configs=
while [ $# -gt 0 ]; do
    case $1 in --shapes) shapes=$2; shift ;; --layout) layout=$2; shift ;; --csv) csv=$2; shift ;;
        --configs) configs=$2; shift ;; esac
    shift
done
echo "${KGEN_CATALOGUE:-unset}" >> "$STANDIN_DIR/env"
[ -n "$configs" ] && [ "${FAILSWEEP:-}" = "$layout" ] && { echo "stand-in failure" >&2; exit 1; }
grep -q '^bad' "$shapes" && { echo "kgen-bench: $shapes:2: not a shape" >&2; exit 2; }
awk -v l="$layout" -v sweep="${configs:+1}" '
BEGIN { print "tag,M,N,K,kgen_tflops,cublas_tflops,ratio,kgen_ms,cublas_ms,error,ok,template,config,device,layout" }
function row(tag, line, t, ok,    tmpl, cfg) {
  tmpl = line; sub(/ .*/, "", tmpl); cfg = line; sub(/^[^ ]* /, "", cfg); sub(/layout=[a-z]*$/, "layout=" l, cfg)
  printf "%s,%s,%s,%s,1,1,%.4f,%g,1.0,0,%d,%s,%s,GPU,%s\n", tag, m[tag], n[tag], k[tag], 1.0 / t, t, ok, tmpl, cfg, l }
FILENAME != ARGV[ARGC - 1] { if (!/^#/ && NF) cfg[++nc] = $0; next }
/^#/ || NF < 4 { next }
{ m[$1] = $2; n[$1] = $3; k[$1] = $4; tags[++nt] = $1 }
END {
  for (i = 1; i <= nt; i++) {
    t = tags[i]
    if (sweep) {
      if (t == "s5") continue
      for (j = 1; j <= nc; j++) row(t, cfg[j], j == 3 ? 1.0 : (t == "s2" && j == 5) ? 1.5 : 2.0, !(t == "s4" && j == 2))
    } else if (t == "s1" || t == "s4") row(t, cfg[3], 1.0, 1)
    else if (t == "s2") row(t, cfg[5], 1.4, 1)
    else if (t == "s3") row(t, "matmul_warp bounds=1 stand-in=1 layout=" l, 1.2, 1)
    else row(t, cfg[1], 2.0, 1)
  }
}' "${configs:-$STANDIN_LIST}" "$shapes" > "$csv"
! grep -q ',0,[a-z_]*,[^,]*,GPU,' "$csv"
STANDIN
chmod +x "$T/b/bench/kgen-bench"
export STANDIN_DIR=$T
# without --configs, the stand-in names kg_matmul's choices from the catalogue's own nn list
"$REAL_KGEN" catalogue kernels "$SRC/catalogue/sm_90.txt" --layout nn -o "$T/nn.cfg" || bad "kgen catalogue kernels --layout nn"
export STANDIN_LIST=$T/nn.cfg
printf '# tag M N K\ns1 64 64 64\ns2 128 128 128\ns3 256 256 256\ns4 512 512 512\ns5 1 1 1\n' > "$T/list.txt"
mkdir "$T/empty"

expect 2 "usage: bench/choice-regret.sh" --
expect 2 "usage: bench/choice-regret.sh" -- "$T/b" "$T/list.txt" "$T/o" extra
expect 2 "kgen-bench not found" -- "$T/empty" "$T/list.txt"
mkdir -p "$T/nokgen/bench" && cp "$T/b/bench/kgen-bench" "$T/nokgen/bench/"
expect 2 "cli/kgen not found" -- "$T/nokgen" "$T/list.txt"
expect 2 "cannot read the shape list '$T/none.txt'" -- "$T/b" "$T/none.txt"
expect 2 "cannot read the shape list" -- "$T/b" "$T/empty"
KGEN_BENCH_LAYOUTS="nn xy" expect 2 "unknown layout 'xy'" -- "$T/b" "$T/list.txt" "$T/o"
KGEN_BENCH_LAYOUTS=" " expect 2 "KGEN_BENCH_LAYOUTS: no layout named" -- "$T/b" "$T/list.txt" "$T/o"
expect 2 "OUT_DIR '$T/list.txt' is not a directory" -- "$T/b" "$T/list.txt" "$T/list.txt"
ARCH=80 expect 2 "no catalogue for sm_80" -- "$T/b" "$T/list.txt" "$T/o"
KGEN_CATALOGUE="$T/none.txt" expect 2 "'$T/none.txt' is not a catalogue kgen can read" -- "$T/b" "$T/list.txt" "$T/o"
NOGPU=1 expect 1 "no GPU:" -- "$T/b" "$T/list.txt" "$T/o"
echo "not a catalogue" > "$T/text.txt"
KGEN_CATALOGUE="$T/text.txt" expect 2 "'$T/text.txt' is not a catalogue kgen can read" -- "$T/b" "$T/list.txt" "$T/o"
KGEN_CATALOGUE="$T/empty" expect 2 "is not a catalogue kgen can read" -- "$T/b" "$T/list.txt" "$T/o"
sed 's/^arch 90$/arch 100/' "$SRC/catalogue/sm_90.txt" > "$T/sm100.txt"
KGEN_CATALOGUE="$T/sm100.txt" expect 2 "is a catalogue for sm_100, and this GPU is sm_90" -- "$T/b" "$T/list.txt" "$T/o"
printf 's1 64 64 64\ns2 128 128 128 # a comment\ns1 96 96 96\n' > "$T/dup.txt"
expect 2 "the tag 's1' stands for more than one line" -- "$T/b" "$T/dup.txt" "$T/o"
printf 's1 64 64 64\nbad line\n' > "$T/badlist.txt"
expect 2 "kgen-bench refused the run" -- "$T/b" "$T/badlist.txt" "$T/o"
[ ! -e "$T/o" ] && ok || bad "a refused run created its output directory"
sh "$SCRIPT" --help | grep -q "KGEN_BENCH_LAYOUTS" && ok || bad "--help"

# the summary: s1 the fastest chosen (1), s2 line 5 (1.5 in the sweep), s3 apart (1.2 in its own run over 1.0),
# s4 left out (a wrong result in the sweep), s5 no kernel ran
KGEN_BENCH_LAYOUTS="nn tt" sh "$SCRIPT" "$T/b" "$T/list.txt" "$T/s" > "$T/out" 2> "$T/err"; rc=$?
[ $rc -eq 1 ] && grep -q "the sweep failed or a result was wrong" "$T/err" && ok ||
    bad "a run with a wrong result exited $rc, not 1: $(cat "$T/err")"
line=$(grep '^nn ' "$T/s/summary.txt")
# shapes 3; regret (1 x 1.5 x 1.2)^(1/3) = 1.2164; fastest chosen 1, within 5 % 1; worst 1.500; apart 1; none 1;
# wrong 1; choice/cuBLAS (1 x 1/1.4 x 1/1.2)^(1/3) = 0.841; fastest/cuBLAS 1.000
want="nn 3 1.2164 1 1 1.500 1 1 1 0.841 1.000"
[ "$(echo "$line" | tr -s ' ')" = "$want" ] && ok || bad "summary line '$line', want '$want'"
grep -A1 '^nn ' "$T/s/summary.txt" | grep -q "worst: s2" && ok || bad "the worst shape is not named s2: $(cat "$T/s/summary.txt")"
grep -q '^tt ' "$T/s/summary.txt" && ok || bad "no tt line: $(cat "$T/s/summary.txt")"
grep -q "Stand-in GPU" "$T/s/summary.txt" && ok || bad "the summary does not name the GPU"
grep -qF "from $SRC/catalogue/sm_90.txt against" "$T/s/summary.txt" && ok ||
    bad "the summary does not name the source tree's catalogue: $(head -n 1 "$T/s/summary.txt")"
cmp -s "$T/nn.cfg" "$T/s/kernels-nn.txt" && ok || bad "the nn sweep did not time the catalogue's nn kernels"
[ ! -e "$T/s/kernels-tn.txt" ] && ok || bad "a layout that was not asked for ran"
grep -q "layout=tt$" "$T/s/kernels-tt.txt" && ! grep -q "layout=nn" "$T/s/kernels-tt.txt" && ok ||
    bad "the tt list is not in tt: $(head -n 2 "$T/s/kernels-tt.txt")"
grep -q '^s3 1.200 .*(apart)' "$T/s/regret-nn.txt" && grep -q '^s2 1.500 ' "$T/s/regret-nn.txt" &&
    grep -q '^s5 - no kernel' "$T/s/regret-nn.txt" && ! grep -q '^s4 ' "$T/s/regret-nn.txt" && ok ||
    bad "regret-nn.txt: $(cat "$T/s/regret-nn.txt")"
[ "$(sort -u "$T/env")" = "$SRC/catalogue/sm_90.txt" ] && ok ||
    bad "both runs were not given the source tree's catalogue: $(sort -u "$T/env")"
# --rescore: no GPU (NOGPU), this build's `kgen choice` against the run's sweeps, from the catalogue copy it wrote.
# What it should find, from the stand-in's times: a chosen kernel on line 3 of the nn list runs 1.0 ms, on line 5
# at s2 1.5 ms, on any other line 2.0 ms (the fastest, line 3: 1.0 ms); s4 wrong
cmp -s "$SRC/catalogue/sm_90.txt" "$T/s/catalogue.txt" && ok || bad "the run did not keep the catalogue it judged"
cp "$T/s/summary.txt" "$T/summary.before"
NOGPU=1 KGEN_BENCH_LAYOUTS=nn sh "$SCRIPT" --rescore "$T/b" "$T/s" > "$T/out" 2> "$T/err"; rc=$?
[ $rc -eq 0 ] && ok || bad "--rescore exited $rc: $(cat "$T/err")"
"$REAL_KGEN" choice --shapes "$T/list.txt" --layout nn --arch sm_90 --brief > "$T/choice-nn.txt"
# shellcheck disable=SC2016 # awk programs: their $i are awk's fields
want=$(awk 'NR == FNR { line[$0] = NR; next }
    { cfg = $4; for (i = 5; i <= NF; i++) cfg = cfg " " $i
      if ($1 == "s4" || $1 == "s5") next
      if (!(cfg in line)) { printf "%s apart\n", $1; next }
      j = line[cfg]; printf "%s %.3f\n", $1, j == 3 ? 1.0 : ($1 == "s2" && j == 5) ? 1.5 : 2.0 }' \
    "$T/s/kernels-nn.txt" "$T/choice-nn.txt")
got=$(awk '/^#/ { next } $2 == "-" { if ($0 ~ /not timed/) print $1, "apart"; next } { print $1, $2 }' \
    "$T/s/rescore-regret-nn.txt")
[ "$got" = "$want" ] && ok || bad "--rescore's regrets '$got', want '$want'"
# (s5, which the sweep has no row for, is not among the shapes it knows)
awk '$1 == "nn" { found = 1; exit !($2 == 3 && $8 == 0 && $9 == 1) } END { if (!found) exit 1 }' \
    "$T/s/rescore-summary.txt" && ok || bad "--rescore's summary (3 shapes, s4 wrong): $(cat "$T/s/rescore-summary.txt")"
grep -qF "from $T/s/catalogue.txt" "$T/s/rescore-summary.txt" && ok || bad "--rescore does not name the run's catalogue"
cmp -s "$T/summary.before" "$T/s/summary.txt" && [ -e "$T/s/regret-nn.txt" ] && ok ||
    bad "--rescore changed the run's own files"
expect 2 "usage: bench/choice-regret.sh" -- --rescore "$T/b"
expect 2 "'$T/nodir' is not a directory" -- --rescore "$T/b" "$T/nodir"
KGEN_CATALOGUE="$T/text.txt" expect 2 "is not a catalogue kgen can read" -- --rescore "$T/b" "$T/s"
expect 2 "is not a catalogue kgen can read" -- --rescore "$T/b" "$T/empty"
# a shape list kgen-bench refuses, into the OUT_DIR of that run: this run's files go, the directory stays
expect 2 "kgen-bench refused the run" -- "$T/b" "$T/badlist.txt" "$T/s"
[ -d "$T/s" ] && [ ! -e "$T/s/sweep-nn.txt" ] && [ ! -e "$T/s/kernels-nn.txt" ] && ok ||
    bad "a refused run into an existing OUT_DIR left its files: $(ls "$T/s")"

# KGEN_CATALOGUE, given relative to the caller: both runs read it by its absolute path, and its kernels are timed;
# the sweep fails in tt: exit 1, tt named as not compared, nn still summarized
cp "$SRC/catalogue/sm_90.txt" "$T/mine.txt"
rm -f "$T/env"
(cd "$T" && KGEN_BENCH_LAYOUTS="nn tt" FAILSWEEP=tt KGEN_CATALOGUE=mine.txt sh "$SCRIPT" b list.txt s > out 2> err); rc=$?
[ $rc -eq 1 ] && ok || bad "a failed sweep exited $rc, not 1"
[ "$(sort -u "$T/env")" = "$T/mine.txt" ] && ok || bad "KGEN_CATALOGUE as the runs saw it: $(sort -u "$T/env")"
grep -qF "from $T/mine.txt against" "$T/s/summary.txt" && ok || bad "the summary does not name KGEN_CATALOGUE's file"
grep -q "^tt: not compared" "$T/s/summary.txt" && ! grep -q '^tt ' "$T/s/summary.txt" && ok ||
    bad "the failed tt is not named as not compared: $(cat "$T/s/summary.txt")"
grep -q '^nn  *3 ' "$T/s/summary.txt" && ok || bad "the nn that ran is not summarized: $(cat "$T/s/summary.txt")"
[ ! -e "$T/s/regret-tt.txt" ] && ok || bad "the first run's regret-tt.txt was left beside the failed tt"
# a catalogue with no times in tt: tt named as not compared, nothing run there
grep -v '^time tt ' "$T/mine.txt" > "$T/nott.txt"
KGEN_BENCH_LAYOUTS="nn tt" KGEN_CATALOGUE="$T/nott.txt" sh "$SCRIPT" "$T/b" "$T/list.txt" "$T/n" > "$T/out" 2> "$T/err"
grep -q "^tt: not compared (no time in this layout)" "$T/n/summary.txt" && [ ! -e "$T/n/sweep-tt.txt" ] && ok ||
    bad "a layout without times: $(cat "$T/n/summary.txt")"
finish
