#!/usr/bin/env python3
"""Stall samples of an ncu source page (ncu -i REP --page source --print-source sass --csv):
totals per stall reason, then the instructions with the most samples of each reason named.

Usage: ncu_stalls.py SOURCE.csv [stall_short_sb stall_wait ...]
"""
import csv,sys,collections
f=open(sys.argv[1]); next(f)
r=csv.DictReader(f)
rows=list(r)
cols=[c for c in rows[0].keys() if c.startswith('stall_') and 'Not Issued' not in c]
tot=collections.Counter()
for x in rows:
    for c in cols:
        try: tot[c]+=int(x[c])
        except: pass
S=sum(tot.values())
print("total samples",S)
for c,v in tot.most_common(12): print(f"  {c:24s} {v:8d} {v/S:.3f}")
def top(col,n=12):
    print("top",col)
    xs=sorted(rows,key=lambda x:-int(x[col] or 0))[:n]
    for x in xs: print(f"   {x['Address'][-5:]} {int(x[col]):6d}  {x['Source'].strip()[:70]}")
for c in sys.argv[2:]: top(c)
