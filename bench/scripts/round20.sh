#!/bin/bash
# shellcheck disable=SC2086,SC2129 # a record of a GPU session: paths have no spaces, option lists split on purpose
# Rounds 20-23 on the GPU (seventh session), kgen-bench --config through
# libkgen's launcher (packing and beta passes included), bench/NOTES.md
# techniques 30 and 31:
#  20: stream-K sk=2 (only the last partial wave's tiles shared, each
#      block's piece first) against sk=1 and split-K. The round also ran a
#      temporary sk=3 (the same split, pieces last: rows "*-sk3" of
#      results/rounds/r20-sk2.csv), removed from the template after it lost;
#  21/22: xb=1 (the next tile's first fragments across the barrier) on the
#      128x256 and 64x128 kernels, with split-K, stream-K and packing;
#  23: raster, pred, red and a 256x128 tile for the packed stream-K kernel.
# Usage: bench/scripts/round20.sh BUILD_DIR OUT_DIR
B=$1; O=$2
cd "$(dirname "$0")/../.." || exit 1
export KGEN_CACHE_DIR=/tmp/kgen-cache HOME=/tmp/home
mkdir -p $HOME
printf "odd1000 1000 1000 1000\nsq4096 4096 4096 4096\nsq8192 8192 8192 8192\n" > $O/al.txt
printf "odd4095 4095 4095 4095\nodd3001 3001 2999 1531\n" > $O/odd.txt
printf "odd1000 1000 1000 1000\nsmallM 64 8192 8192\nsq1024 1024 1024 1024\n" > $O/sm.txt
run() { # round name shapes config
  timeout 150 $B/bench/kgen-bench --shapes $O/$3 --template matmul_warp --config "$4" --csv $O/$1-$2.csv > $O/$1-$2.txt 2>&1
  echo "$1 $2 rc=$?"
}
L="bm=128 bn=256 bk=16 wm=64 wn=64 stages=1 vec=4"
S="bm=64 bn=128 bk=16 wm=32 wn=64 vec=1 stages=3 pred=1 cc=1 raster=8"
Q="bm=64 bn=128 bk=16 wm=32 wn=64 vec=4 pack=1 stages=1 ba=1 raster=8"
for sk in 1 2; do run r20 L-sk$sk al.txt "$L raster=8 sk=$sk red=4"; done
run r20 L-k4 al.txt "$L raster=1 splitk=4 red=4"
run r20 P-sk0 odd.txt "$L raster=8 pack=1 sk=0 red=1"
for sk in 1 2; do run r20 P-sk$sk odd.txt "$L raster=8 pack=1 sk=$sk red=4"; done
run r20 S-sk0 odd.txt "$S"
run r20 S-sk2 odd.txt "$S sk=2 red=4"
run r20 Q-sk2 odd.txt "$Q sk=2 red=4"
run r20 Q-sk0 odd.txt "$Q"
for x in 0 1; do
  run r21 L-sk2-x$x al.txt "$L raster=8 sk=2 red=4 xb=$x"
  run r21 L-x$x al.txt "$L raster=8 xb=$x"
  run r21 L-k4-x$x al.txt "$L raster=1 splitk=4 red=4 xb=$x"
  run r21 P-sk2-x$x odd.txt "$L raster=8 pack=1 sk=2 red=4 xb=$x"
  run r21 M-k3-x$x sm.txt "bm=64 bn=128 bk=16 wm=32 wn=64 vec=4 stages=1 ba=1 raster=1 splitk=3 red=4 xb=$x"
  run r21 M-k8-x$x sm.txt "bm=64 bn=128 bk=16 wm=32 wn=64 vec=4 stages=1 ba=1 raster=1 splitk=8 red=4 xb=$x"
done
for k in 2 4; do for r in 1 8; do
  run r22 L-k${k}r$r-x1 al.txt "$L raster=$r splitk=$k red=4 xb=1"
  run r22 P-k${k}r$r-x1 odd.txt "$L raster=$r pack=1 splitk=$k red=4 xb=1"
done; done
run r22 L-r1-x1 al.txt "$L raster=1 xb=1"
run r22 L-sk2ba-x1 al.txt "$L raster=8 sk=2 red=4 ba=1 xb=1"
run r22 P-sk2ba-x1 odd.txt "$L raster=8 pack=1 sk=2 red=4 ba=1 xb=1"
run r22 P-sk2-x0 odd.txt "$L raster=8 pack=1 sk=2 red=4"
run r22 P-sk2r1-x0 odd.txt "$L raster=1 pack=1 sk=2 red=4"
P="$L pack=1 sk=2"
for r in 1 2 4 16; do run r23 r$r odd.txt "$P raster=$r red=4"; done
run r23 r1p odd.txt "$P raster=1 red=4 pred=1"
run r23 r1red1 odd.txt "$P raster=1 red=1"
run r23 r1x odd.txt "$P raster=1 red=4 xb=1"
run r23 t256 odd.txt "bm=256 bn=128 bk=16 wm=64 wn=64 stages=1 vec=4 pack=1 sk=2 raster=1 red=4"
run r23 t256r8 odd.txt "bm=256 bn=128 bk=16 wm=64 wn=64 stages=1 vec=4 pack=1 sk=2 raster=8 red=4"
