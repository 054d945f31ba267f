-- Global -> shared copies of matmul_warp's operand tiles: the per-thread
-- setup before the K loop, cp.async copies (stages >= 2) and the register
-- path (stages = 1: load into registers, store after the multiplication).
--
-- Edges. A row (or column) a thread copies past the edge of M (N) is
-- clamped to the last one: its loads stay inside the matrix and their
-- results are never stored. Vectors along a contiguous M or N axis that
-- straddle the edge read only the floats inside (`nv`); inside the K loop,
-- where that extent is a multiple of the vector (tested once per tile), no
-- vector straddles and those wholly past the edge read the first vector of
-- their line instead (results never stored), without a branch per copy;
-- with pack = 1 the runtime has padded that extent to a multiple of 4 with
-- zeros (the operand's packed copy), so vectors read up to there and the
-- test is one that always holds; past K (only the
-- tile copied with kcheck) the shared tile gets zeros, so that it adds
-- nothing. A source whose copy reads nothing is the operand's base pointer,
-- always a valid address -- except in the K loop with walk = 2, where such a
-- copy keeps its walking pointer, which may lie past the operand: cp.async
-- with a source size of 0 reads no byte of it (compute-sanitizer agrees).

local emit = require "lib.emit"
local plan = require "lib.warp.plan"

local M = {}

local LANES = { "x", "y", "z", "w" }
local VEC_TYPE = { [1] = "float", [2] = "float2", [4] = "float4" }
M.VEC_TYPE = VEC_TYPE

local function lane(v, w, e) return w == 1 and v or (v .. "." .. LANES[e + 1]) end

-- With cc = 1, single-float cp.async copies (cvec = 1, stages >= 2) whose copies i > 0
-- sit at the same distance from copy 0 in every thread -- in lines (dl),
-- along the contiguous axis (dc) and in shared memory (ds) -- are "compact":
-- they share one source pointer (one per distinct line for a transposing
-- copy) and add constants, instead of holding a 64-bit pointer each. Returns
-- the list of {dl, dc, ds} (index i + 1), or nil.
-- The answer depends only on the copy's geometry, and the tuner asks for
-- every configuration of its space: answers are kept per geometry (a few
-- hundred at most), so that check() stays cheap. The lists are read-only.
local compact_memo = {}

local function compact_offsets(d, op)
  local offs = {}
  for tid = 0, d.threads - 1 do
    local l0, c0 = plan.copy_coords(d, op, tid, 0)
    if not l0 then return nil end
    local o0, k0 = plan.outer_k(op, l0, c0)
    local s0 = plan.smem_off(op, o0, k0)
    for i = 1, op.per_thread - 1 do
      local l, c = plan.copy_coords(d, op, tid, i)
      if l then
        local o, k = plan.outer_k(op, l, c)
        local e = { dl = l - l0, dc = c - c0, ds = plan.smem_off(op, o, k) - s0 }
        local prev = offs[i + 1]
        if prev and (prev.dl ~= e.dl or prev.dc ~= e.dc or prev.ds ~= e.ds) then return nil end
        offs[i + 1] = e
      end
    end
  end
  offs[1] = { dl = 0, dc = 0, ds = 0 }
  for i = 2, op.per_thread do
    if not offs[i] then return nil end
  end
  return offs
end

function M.compact(cfg, d, op)
  if op.compact ~= nil then return op.compact or nil end
  op.compact = false
  if cfg.cc ~= 1 or op.cvec ~= 1 or op.per_thread < 2 then return nil end
  -- the register path (stages = 1) only for direct copies along a contiguous M or N
  if not op.async and not (op.direct and op.gcont) then return nil end
  local key = string.format("%d %d %d %d %d %d %d %s %s %d", d.threads, op.count, op.chunk or 0, op.line_ext,
    op.vpl, op.cvec, op.stride, op.gcont, op.scont, op.per_thread)
  local offs = compact_memo[key]
  if offs == nil then
    offs = compact_offsets(d, op) or false
    compact_memo[key] = offs
  end
  op.compact = offs
  return offs or nil
end

-- Per-thread copy setup, once before the K loop: for each copy i its line
-- l and offset c, source pointer (clamped at M or N), shared offset and,
-- for vectors along a contiguous M or N axis, how many floats lie inside.
function M.emit_setup(w, cfg, d, op)
  local how = op.chunk and string.format("single floats, warps reading %d-float runs along %s",
    op.chunk, op.cont_name) or string.format("%d-float vectors, consecutive threads along %s", op.cvec, op.cont_name)
  w:comment(string.format("%s copies: %d per tile of %s (%s)%s.", op.name, op.count, op.direct and "direct" or
    "transposing", how, op.ragged and "; some threads idle in the last round" or ""))
  local offs = M.compact(cfg, d, op)
  if offs then
    -- copy i's line and offset (read by the K check of the first tile)
    for i = 0, op.per_thread - 1 do
      local le, ce = plan.copy_exprs(op, emit.add("tid", i * d.threads))
      w:line("const int %s_l%d = %s, %s_c%d = %s;", op.p, i, le, op.p, i, ce)
    end
    local o, k = plan.outer_k(op, op.p .. "_l0", op.p .. "_c0")
    local dst = op.scont and emit.add(plan.mul(k, op.stride), o) or emit.add(plan.mul(o, op.stride), k)
    w:line("const int %s_dst0 = %s;", op.p, dst)
    if op.gcont then
      w:comment(string.format("One source pointer; copy i reads it + (its line offset) * %s + (its column offset).", op.ld))
      w:comment(string.format("It may point past %s (then nothing is read through it).", op.limit))
      w:line("const float* %s_src = %s + (size_t)%s_l0 * %s + %s + %s_c0;", op.p, op.ptr, op.p, op.ld, op.origin, op.p)
      if cfg.bounds == 1 then
        w:linec(string.format("const int %s_in = %s - (%s + %s_c0);", op.p, op.limit, op.origin, op.p),
          string.format("copy i reads only if its column offset < %s_in", op.p))
      end
    else
      w:comment(string.format("One source pointer per distinct line (clamped at %s); copies add their offset along k.", op.limit))
      local seen = {}
      for i = 1, op.per_thread do
        local dl = offs[i].dl
        if not seen[dl] then
          seen[dl] = true
          local row = emit.add(emit.add(op.origin, op.p .. "_l0"), dl)
          row = cfg.bounds == 1 and string.format("min(%s, %s - 1)", row, op.limit) or "(" .. row .. ")"
          w:line("const float* %s_row%d = %s + (size_t)%s * %s + %s_c0;", op.p, dl, op.ptr, row, op.ld, op.p)
        end
      end
    end
    return
  end
  for i = 0, op.per_thread - 1 do
    local l, c = string.format("%s_l%d", op.p, i), string.format("%s_c%d", op.p, i)
    local le, ce = plan.copy_exprs(op, emit.add("tid", i * d.threads))
    w:line("const int %s = %s, %s = %s;", l, le, c, ce)
    local o, k = plan.outer_k(op, l, c)
    local src
    if op.gcont and cfg.bounds == 1 and op.cvec == 1 then
      src = string.format("%s + (size_t)%s * %s + min(%s + %s, %s - 1)", op.ptr, l, op.ld, op.origin, c, op.limit)
    elseif op.gcont and cfg.bounds == 1 then
      w:line("const int %s_nv%d = min(max(%s - (%s + %s), 0), %d);", op.p, i, M.load_limit(cfg, op), op.origin, c, op.cvec)
      src = string.format("%s_nv%d > 0 ? %s + (size_t)%s * %s + %s + %s : %s",
        op.p, i, op.ptr, l, op.ld, op.origin, c, op.ptr)
    elseif op.gcont then
      src = string.format("%s + (size_t)%s * %s + %s + %s", op.ptr, l, op.ld, op.origin, c)
    else
      local row = emit.add(op.origin, l)
      row = cfg.bounds == 1 and string.format("min(%s, %s - 1)", row, op.limit) or "(" .. row .. ")"
      src = string.format("%s + (size_t)%s * %s + %s", op.ptr, row, op.ld, c)
    end
    w:line("const float* %s_src%d = %s;", op.p, i, src)
    if i == 0 and M.even_split(cfg, op) and cfg.pack == 1 then
      -- Packed rows (or, unpacked, an extent that is a multiple of 4) never
      -- straddle; the test stays, on ld, which the compiler cannot fold:
      -- without the branch NVVM sinks the next tile's loads to their stores
      -- at the end of the loop, exposing their latency (17 % slower, H200).
      w:linec(string.format("const bool %s_even = %s %% %d == 0;", op.p, op.ld, op.cvec),
        string.format("always (pack=1: %s is a multiple of %d); keeps the loads early", op.ld, op.cvec))
    elseif i == 0 and M.even_split(cfg, op) then
      w:linec(string.format("const bool %s_even = %s %% %d == 0;", op.p, op.limit, op.cvec),
        string.format("no %d-float vector straddles %s (each lies inside, or past it)", op.cvec, op.limit))
    end
    local dst = op.scont and emit.add(plan.mul(k, op.stride), o) or emit.add(plan.mul(o, op.stride), k)
    w:line("const int %s_dst%d = %s;", op.p, i, dst)
  end
end

-- Vectors along a contiguous M or N that may straddle its edge: the K loop
-- tests once per tile, uniformly, whether that extent is a multiple of the
-- vector (then every vector lies wholly inside or past the edge, and those
-- past it load the first vector of their line instead: their values go
-- only to outputs that are never stored), instead of branching per copy.
function M.even_split(cfg, op)
  return op.gcont and cfg.bounds == 1 and op.cvec > 1 and not op.compact
end

-- How far vectors along a contiguous M or N may read: the extent itself,
-- or with pack = 1 the extent rounded up to 4 floats (the packed rows' zero
-- padding; the runtime packs every operand whose extent is not a multiple
-- of 4), so that no vector straddles the edge.
function M.load_limit(cfg, op)
  if cfg.pack == 1 and op.gcont then return string.format("((%s + 3) & ~3)", op.limit) end
  return op.limit
end

-- Floats of copy i inside the matrix, as an expression: the literal cvec
-- when nothing can be outside.
local function valid_expr(cfg, op, i, kcheck)
  local full = tostring(op.cvec)
  if op.gcont then
    local nv = (cfg.bounds == 1 and op.cvec > 1) and string.format("%s_nv%d", op.p, i) or full
    if kcheck then return string.format("(k0 + %s_l%d < K ? %s : 0)", op.p, i, nv) end
    return nv
  end
  if kcheck then return string.format("min(max(K - (k0 + %s_c%d), 0), %d)", op.p, i, op.cvec) end
  return full
end

-- `nv` (floats read) under `gate` (nil: none): nothing where it is false.
local function gated(nv, gate)
  return gate and string.format("(%s ? %s : 0)", gate, nv) or nv
end

-- `reg = the vector at src`, or zeros where `gate` is false.
local function vector_load(op, reg, src, gate)
  local load = string.format("*reinterpret_cast<const %s*>(%s)", VEC_TYPE[op.cvec], src)
  if not gate then return string.format("%s = %s;", reg, load) end
  local zero = op.cvec == 1 and "0.0f" or string.format("make_%s(%s)", VEC_TYPE[op.cvec], string.rep("0.0f", op.cvec, ", "))
  return string.format("%s = %s ? %s : %s;", reg, gate, load, zero)
end

-- The source of copy i for the tile at k0.
local function src_expr(op, i)
  if op.gcont then return string.format("%s_src%d + (size_t)k0 * %s", op.p, i, op.ld) end
  return string.format("%s_src%d + k0", op.p, i)
end

local function open_guard(w, d, op, i)
  if op.ragged and (i + 1) * d.threads > op.count then
    w:open("if (%s < %d)", emit.add("tid", i * d.threads), op.count)
    return true
  end
  return false
end

-- Compact copies along a contiguous M or N: the walking pointer `p` (or
-- the name `pn`), now at line `at`, moves to line `dl`; returns dl.
local function walk_to(w, op, at, dl, pn)
  pn = pn or "p"
  if dl ~= at then
    local step = dl - at
    if step == 1 then w:line("%s += %s;", pn, op.ld)
    else w:line("%s += (size_t)%d * %s;", pn, step, op.ld) end
  end
  return dl
end

-- walk >= 1 (the K loop's compact copies): the source pointers that advance
-- by bk each tile -- one per distinct line of a transposing copy, or the
-- walking pointer's start along a contiguous M or N -- as {name, init, step}.
local function walkers(cfg, op, offs, k0)
  local list = {}
  if op.gcont then
    list[1] = { name = op.p .. "_wp", init = string.format("%s_src + (size_t)(%s) * %s", op.p, k0, op.ld),
      step = string.format("(size_t)%d * %s", cfg.bk, op.ld) }
    return list
  end
  local seen = {}
  for i = 1, op.per_thread do
    local dl = offs[i].dl
    if not seen[dl] then
      seen[dl] = true
      list[#list + 1] = { name = string.format("%s_w%d", op.p, dl),
        init = string.format("%s_row%d + %s", op.p, dl, k0), step = tostring(cfg.bk) }
    end
  end
  return list
end

-- walk >= 1: declares the walking pointers of the K loop's copies, whose
-- first tile is at k0 (an expression); nothing for other copies.
function M.emit_walk_setup(w, cfg, d, op, k0)
  local offs = M.compact(cfg, d, op)
  if cfg.walk == 0 or not offs then return end
  for _, v in ipairs(walkers(cfg, op, offs, k0)) do
    w:line("const float* %s = %s;", v.name, v.init)
  end
end

-- walk >= 1: the walking pointers move on to the next tile.
function M.emit_walk_step(w, cfg, d, op)
  local offs = M.compact(cfg, d, op)
  if cfg.walk == 0 or not offs then return end
  for _, v in ipairs(walkers(cfg, op, offs, "0")) do
    w:line("%s += %s;", v.name, v.step)
  end
end

-- Compact copies (M.compact) of the tile at k0 into `buf` (walk: through
-- the walking pointers, which are at k0), as M.async_copies returns them;
-- `pn` names the pointer that walks down the lines along a contiguous M or N.
local function async_compact(cfg, d, op, buf, kcheck, offs, gate, walk, pn)
  -- gcont: the source walks down the lines: `pn` is at line dl_at
  local dl_at = 0
  local checked_col = op.gcont and cfg.bounds == 1
  local function one(w, i)
    local e = offs[i + 1]
    local dst = string.format("%s + %s", buf, emit.add(op.p .. "_dst0", e.ds))
    local src, conds = nil, {}
    if op.gcont then
      dl_at = walk_to(w, op, dl_at, e.dl, pn)
      src = e.dc == 0 and pn or string.format("%s + %d", pn, e.dc)
      if checked_col then conds[#conds + 1] = string.format("%d < %s_in", e.dc, op.p) end
      if kcheck then conds[#conds + 1] = string.format("k0 + %s_l%d < K", op.p, i) end
    elseif walk then
      src = e.dc == 0 and string.format("%s_w%d", op.p, e.dl) or string.format("%s_w%d + %d", op.p, e.dl, e.dc)
    else
      src = string.format("%s_row%d + %s", op.p, e.dl, e.dc == 0 and "k0" or emit.add("k0", e.dc))
      if kcheck then conds[#conds + 1] = string.format("k0 + %s_c%d < K", op.p, i) end
    end
    if gate then conds[#conds + 1] = gate end
    local guarded = open_guard(w, d, op, i)
    if #conds == 0 then
      w:line("kgen_cp_async4(%s, %s, 4);", dst, src)
    elseif walk and cfg.walk == 2 then
      w:line("kgen_cp_async4(%s, %s, (%s) ? 4 : 0);", dst, src, table.concat(conds, " && "))
    else
      local c = table.concat(conds, " && ")
      w:line("kgen_cp_async4(%s, (%s) ? %s : %s, (%s) ? 4 : 0);", dst, c, src, op.ptr, c)
    end
    if guarded then w:close() end
  end
  local r = { copies = {}, compact = true }
  if op.gcont then
    r.head = function(w)
      if walk then w:line("const float* %s = %s_wp;", pn, op.p)
      else w:line("const float* %s = %s_src + (size_t)k0 * %s;", pn, op.p, op.ld) end
    end
  end
  for i = 0, op.per_thread - 1 do
    r.copies[i + 1] = function(w) one(w, i) end
  end
  return r
end

-- The copies of one operand tile (at k0) with cp.async into buffer `buf`,
-- one emitter each, to be emitted in order: { head = emitter or nil (the
-- declarations the copies share), copies = { emitter, ... } }, where an
-- emitter is function(w); `compact` is true for compact copies (M.compact).
-- `gate`, when given, is a C condition: where it is
-- false the copies read nothing and zero-fill (a predicate instead of a
-- branch around them). `walk`: the K loop's copies, which read through the
-- walking pointers where walk >= 1 declared them (M.emit_walk_setup). `pn`:
-- the name of the pointer compact copies along a contiguous M or N walk
-- down the lines with (default p).
function M.async_copies(cfg, d, op, buf, kcheck, gate, walk, pn)
  local offs = M.compact(cfg, d, op)
  if offs then
    return async_compact(cfg, d, op, buf, kcheck, offs, gate, walk and cfg.walk > 0, pn or "p")
  end
  local r = { copies = {} }
  for i = 0, op.per_thread - 1 do
    r.copies[i + 1] = function(w)
      local guarded = open_guard(w, d, op, i)
      local all = valid_expr(cfg, op, i, kcheck)
      local nv = gated(all, gate)
      local dst = string.format("%s + %s_dst%d", buf, op.p, i)
      local src = src_expr(op, i)
      if all == tostring(op.cvec) then
        -- nothing outside the matrix: the gate, if any, only sets the size
        w:line("kgen_cp_async%d(%s, %s, %s);", 4 * op.cvec, dst, src,
          gate and string.format("%s ? %d : 0", gate, 4 * op.cvec) or tostring(4 * op.cvec))
      elseif op.cvec == 1 then
        w:line("kgen_cp_async4(%s, %s ? %s : %s, %s ? 4 : 0);", dst, nv, src, op.ptr, nv)
      else
        if not guarded then w:open("") end
        w:line("const int nv = %s;", nv)
        w:line("kgen_cp_async%d(%s, nv > 0 ? %s : %s, 4 * nv);", 4 * op.cvec, dst, src, op.ptr)
        if not guarded then w:close() end
      end
      if guarded then w:close() end
    end
  end
  return r
end

-- The copy of one operand tile (at k0) with cp.async into buffer `buf`, all
-- at once (M.async_copies says what the arguments mean). Compact copies sit
-- in a block of their own: no branch on whether the tile lies inside (a
-- branch would keep the copies out of the FFMA stream's basic block,
-- measured 12 % slower on 128 x 256 tiles); their checks are loop-invariant
-- predicates, shared by copies with the same column offset.
function M.emit_async(w, cfg, d, op, buf, kcheck, gate, walk)
  local r = M.async_copies(cfg, d, op, buf, kcheck, gate, walk)
  if r.compact then w:open("") end
  if r.head then r.head(w) end
  for _, c in ipairs(r.copies) do c(w) end
  if r.compact then w:close() end
end

-- Register path, compact copies (direct, along a contiguous M or N): one
-- pointer walks down the lines; a copy past M or N (or K) loads nothing.
local function emit_fetch_compact(w, cfg, d, op, kcheck, offs, gate)
  w:open("")
  w:line("const float* p = %s_src + (size_t)k0 * %s;", op.p, op.ld)
  local at = 0
  for i = 0, op.per_thread - 1 do
    local e = offs[i + 1]
    at = walk_to(w, op, at, e.dl)
    local conds = {}
    if cfg.bounds == 1 then conds[#conds + 1] = string.format("%d < %s_in", e.dc, op.p) end
    if kcheck then conds[#conds + 1] = string.format("k0 + %s_l%d < K", op.p, i) end
    if gate then conds[#conds + 1] = gate end
    local src = e.dc == 0 and "*p" or string.format("p[%d]", e.dc)
    local reg = string.format("%s_reg%d", op.p, i)
    local guarded = open_guard(w, d, op, i)
    if #conds == 0 then w:line("%s = %s;", reg, src)
    else w:line("%s = (%s) ? %s : 0.0f;", reg, table.concat(conds, " && "), src) end
    if guarded then w:close() end
  end
  w:close()
end

-- Register path: loads copy i of the tile at k0 into registers <p>_reg<i>
-- (`gate` false: loads nothing; the registers get zeros).
function M.emit_fetch(w, cfg, d, op, kcheck, gate)
  local offs = M.compact(cfg, d, op)
  if offs then return emit_fetch_compact(w, cfg, d, op, kcheck, offs, gate) end
  if not kcheck and M.even_split(cfg, op) then
    w:open("if (%s_even)", op.p)
    for i = 0, op.per_thread - 1 do
      local guarded = open_guard(w, d, op, i)
      w:line(vector_load(op, string.format("%s_reg%d", op.p, i), src_expr(op, i), gate))
      if guarded then w:close() end
    end
    w:reopen("else")
  end
  for i = 0, op.per_thread - 1 do
    local reg = string.format("%s_reg%d", op.p, i)
    local all = valid_expr(cfg, op, i, kcheck)
    local nv = gated(all, gate)
    if not open_guard(w, d, op, i) then w:open("") end
    w:line("const float* src = %s;", src_expr(op, i))
    if all == tostring(op.cvec) then
      w:line(vector_load(op, reg, "src", gate))
    elseif op.cvec == 1 then
      w:line("%s = %s ? *src : 0.0f;", reg, nv)
    else
      w:line("const int nv = %s;", nv)
      w:open("if (nv == %d)", op.cvec)
      w:line(vector_load(op, reg, "src"))
      w:reopen("else")
      for e = 0, op.cvec - 1 do
        w:line("%s = nv > %d ? src[%d] : 0.0f;", lane(reg, op.cvec, e), e, e)
      end
      w:close()
    end
    w:close()
  end
  if not kcheck and M.even_split(cfg, op) then w:close() end
end

-- Register path: stores the registers into buffer `buf`.
function M.emit_stash(w, d, op, buf)
  local offs = op.compact or nil -- set by M.compact during the setup
  for i = 0, op.per_thread - 1 do
    local reg = string.format("%s_reg%d", op.p, i)
    local dst = offs and emit.add(op.p .. "_dst0", offs[i + 1].ds) or string.format("%s_dst%d", op.p, i)
    local guarded = open_guard(w, d, op, i)
    if op.svec > 1 then
      w:line("*reinterpret_cast<%s*>(%s + %s) = %s;", VEC_TYPE[op.cvec], buf, dst, reg)
    else
      local step = op.direct and 1 or op.stride
      for e = 0, op.cvec - 1 do
        w:line("%s[%s] = %s;", buf, emit.add(dst, e * step), lane(reg, op.cvec, e))
      end
    end
    if guarded then w:close() end
  end
end

return M
