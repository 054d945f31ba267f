#!/usr/bin/env python3
"""Instruction mix of the hottest loop of each kernel in a CUBIN or SASS dump.

Usage: sass_loop.py FILE.cubin|FILE.sass ...   (needs cuobjdump for .cubin)

The hottest loop is taken to be the backward branch with the most FFMA
between its target and itself. Prints, per kernel: instructions in the
loop, FFMA share, shared/global loads and stores, and whether any local
memory (LDL/STL) appears anywhere.
"""
import collections, re, subprocess, sys

INSN = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")

def kernels(text):
    name, body = None, []
    for line in text.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            if name: yield name, body
            name, body = m.group(1), []
        m = INSN.search(line)
        if m and name:
            body.append((int(m.group(1), 16), m.group(3), m.group(4)))
    if name: yield name, body

def hot_loop(body):
    best = None
    for addr, op, args in body:
        if op.startswith("BRA"):
            t = re.search(r"0x([0-9a-f]+)", args)
            if t and int(t.group(1), 16) < addr:
                lo = int(t.group(1), 16)
                ins = [o for a, o, _ in body if lo <= a <= addr]
                n = sum(1 for o in ins if o.startswith("FFMA"))
                if best is None or n > best[0]:
                    best = (n, ins)
    return best

for path in sys.argv[1:]:
    text = subprocess.run(["cuobjdump", "--dump-sass", path], capture_output=True, text=True).stdout \
        if path.endswith(".cubin") else open(path).read()
    for name, body in kernels(text):
        local = sum(1 for _, o, _ in body if o.startswith(("LDL", "STL")))
        hot = hot_loop(body)
        if not hot:
            print(f"{name}: no loop; local-memory ops {local}")
            continue
        ins = hot[1]
        c = collections.Counter(o.split(".")[0] for o in ins)
        wide = collections.Counter(o for o in ins if o.startswith(("LDS", "STS", "LDG", "STG", "LDGSTS")))
        print(f"{name}\n  loop {len(ins)} instr, FFMA {c['FFMA']} ({100.0 * c['FFMA'] / len(ins):.1f}%), "
              f"BAR {c['BAR']}, local-memory ops {local}\n  memory: " +
              ", ".join(f"{k} {v}" for k, v in sorted(wide.items())) +
              "\n  other: " + ", ".join(f"{k} {v}" for k, v in c.most_common(12) if k not in ("FFMA",)))
