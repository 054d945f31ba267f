-- The multiplication of one tile of K out of shared memory, shared by both
-- pipelines: each lane reads its fragments of A and B (the values of k of
-- one step) and adds their outer product to its accumulators acc[i][j].

local emit = require "lib.emit"
local plan = require "lib.warp.plan"
local copy = require "lib.warp.copy"

local M = {}

local LANES = { "x", "y", "z", "w" }
local VEC_TYPE = copy.VEC_TYPE
local mul = plan.mul

-- Opens `for (int v = 0; v < n; v += step)` under #pragma unroll and
-- returns "v", or, for a single trip, opens nothing and returns "0".
local function open_loop(w, v, n, step)
  if n <= step then return "0" end
  w:line("#pragma unroll")
  if step == 1 then w:open("for (int %s = 0; %s < %d; ++%s)", v, v, n, v)
  else w:open("for (int %s = 0; %s < %d; %s += %d)", v, v, n, v, step) end
  return v
end

local function close_loop(w, v)
  if v ~= "0" then w:close() end
end

-- Fragment reads of one operand for the k group at kk, into x[q][r]: from
-- a buffer contiguous along outer, `fvec` floats of one row of k at a time;
-- from one contiguous along k, kg values of k of one outer index at a time.
-- A vector read goes through `const floatN f`; returns true when that
-- declaration lands in the caller's scope (a single read: no loop opened).
-- `taken`: an f is already declared there, so a single read names its
-- vector fb (inside a loop, f shadows it).
local function emit_fragment(w, cfg, d, op, buf, sub, t, pass, arr, taken)
  arr = arr or op.p
  local scoped = false
  local function vector(single) -- the vector's name; notes a declaration in scope
    scoped = single
    return (single and taken) and "fb" or "f"
  end
  local function at(q, r) return string.format("%s[%s][%s]", arr, q, r) end
  if op.scont then
    local fv = op.fvec
    local q = open_loop(w, "q", d.kg, 1)
    local i = open_loop(w, "i", sub, 1)
    local v = open_loop(w, "v", t, fv)
    local row = emit.add(mul(i, pass), v)
    local addr = string.format("%s[%s]", buf, emit.add(mul(emit.add("kk", q), op.stride), row))
    local r0 = emit.add(mul(i, t), v)
    if fv == 1 then
      w:line("%s = %s;", at(q, r0), addr)
    else
      local f = vector(q == "0" and i == "0" and v == "0")
      w:line("const %s %s = *reinterpret_cast<const %s*>(&%s);", VEC_TYPE[fv], f, VEC_TYPE[fv], addr)
      for e = 0, fv - 1 do w:line("%s = %s.%s;", at(q, emit.add(r0, e)), f, LANES[e + 1]) end
    end
    close_loop(w, v); close_loop(w, i); close_loop(w, q)
  else
    local i = open_loop(w, "i", sub, 1)
    local e = open_loop(w, "e", t, 1)
    local addr = string.format("%s[%s]", buf, emit.add(mul(emit.add(mul(i, pass), e), op.stride), "kk"))
    local r = emit.add(mul(i, t), e)
    if d.kg == 1 then
      w:line("%s = %s;", at(0, r), addr)
    else
      local f = vector(i == "0" and e == "0")
      w:line("const %s %s = *reinterpret_cast<const %s*>(&%s);", VEC_TYPE[d.kg], f, VEC_TYPE[d.kg], addr)
      for q = 0, d.kg - 1 do w:line("%s = %s.%s;", at(q, r), f, LANES[q + 1]) end
    end
    close_loop(w, e); close_loop(w, i)
  end
  return scoped
end

-- Both operands' fragment reads, A then B, in one scope: when both are
-- single vector reads, B's vector is fb (A's f is declared there).
local function emit_fragments(w, cfg, d, abuf, bbuf, aarr, barr)
  local a_scoped = emit_fragment(w, cfg, d, d.A, abuf, d.sub_m, cfg.tm, d.pass_m, aarr)
  emit_fragment(w, cfg, d, d.B, bbuf, d.sub_n, cfg.tn, d.pass_n, barr, a_scoped)
end

-- Offset of a lane's first fragment in an operand's tile: `off` (its rows
-- or columns) along the outer axis, and with wk > 1 its group's first k.
local function fragment_origin(cfg, op, off)
  local o = op.scont and off or mul(off, op.stride)
  if cfg.wk == 1 then return o end
  return emit.add(o, mul("kq", op.scont and op.stride or 1)) -- this group's first k
end

-- `mid`, when given, is emitted halfway through the tile's values of k
-- (with mid = 1: the next tile's cp.async copies, or the register path's
-- stores of the prefetched tile). `each`, when given, is emitted at the top
-- of the (unrolled) loop over the steps of k, before the step's fragment
-- reads, where `kk` is the step's first value of k (spread = 1: the copies
-- due at that step); it is emitted once per loop, so not with `mid` (two
-- loops) or `xb` (steps outside the loop), which check() rules out.
function M.emit(w, cfg, d, as, bs, mid, xb, each)
  assert(not (each and (mid or xb)), "compute.emit: `each` goes with neither `mid` nor `xb`")
  w:comment("Multiply the tiles out of shared memory: outer products of fragments.")
  local function first(op, off) return fragment_origin(cfg, op, off) end
  w:linec(string.format("const float* af = %s + %s;", as, first(d.A, "a_off")),
    cfg.wk > 1 and "this lane's rows of the A tile, at its group's k" or "this lane's rows of the A tile")
  w:linec(string.format("const float* bf = %s + %s;", bs, first(d.B, "b_off")),
    "its columns of the B tile")
  -- one step's fragments a, b (at kk) out of the tiles at af, bf
  local function frags()
    w:line("float a[%d][%d], b[%d][%d];", d.kg, d.rows, d.kg, d.cols)
    emit_fragments(w, cfg, d, "af", "bf")
  end
  -- one step's outer products of the fragments a, b
  local function fma()
    local q = open_loop(w, "q", d.kg, 1)
    w:line("#pragma unroll")
    w:line("for (int i = 0; i < %d; ++i)", d.rows)
    w:line("    #pragma unroll")
    w:line("    for (int j = 0; j < %d; ++j) acc[i][j] = fmaf(a[%s][i], b[%s][j], acc[i][j]);", d.cols, q, q)
    close_loop(w, q)
  end
  local function span(lo, hi)
    w:line("#pragma unroll")
    if d.kg == 1 then w:open("for (int kk = %d; kk < %d; ++kk)", lo, hi)
    else w:open("for (int kk = %d; kk < %d; kk += %d)", lo, hi, d.kg) end
    if each then each() end
    frags()
    fma()
    w:close()
  end
  if xb then
    -- xb = 1: step 0's fragments arrived in a_n, b_n (loaded after the last
    -- barrier); the last step's are read, then `xb` stores the next tile and
    -- waits at the barrier, and the next tile's first fragments are loaded
    -- before the last step's FFMAs, which hide their latency.
    local last = d.kslice - d.kg
    w:open("")
    w:line("const int kk = 0;")
    w:line("float (&a)[%d][%d] = a_n;", d.kg, d.rows)
    w:line("float (&b)[%d][%d] = b_n;", d.kg, d.cols)
    fma()
    w:close()
    if last > d.kg then
      w:line("#pragma unroll")
      w:open("for (int kk = %d; kk < %d; kk += %d)", d.kg, last, d.kg)
      frags()
      fma()
      w:close()
    end
    w:open("")
    w:line("const int kk = %d;", last)
    frags()
    xb()
    fma()
    w:close()
  elseif mid then
    local half = (d.kslice // d.kg) // 2 * d.kg
    span(0, half)
    mid()
    span(half, d.kslice)
  else
    span(0, d.kslice)
  end
end

-- xb = 1: step 0's fragments of the tile at buffers (as, bs) into a_n, b_n.
function M.first_fragments(w, cfg, d, as, bs)
  w:open("")
  w:line("const int kk = 0;")
  w:line("const float* naf = %s + %s;", as, fragment_origin(cfg, d.A, "a_off"))
  w:line("const float* nbf = %s + %s;", bs, fragment_origin(cfg, d.B, "b_off"))
  emit_fragments(w, cfg, d, "naf", "nbf", "a_n", "b_n")
  w:close()
end

return M
