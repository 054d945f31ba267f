-- matmul_warp: a warp-tiled fp32 matrix multiplication with pipelined copies,
-- the techniques of fast SIMT GEMMs, each one a parameter the tuner switches.
--
--   C = alpha * op(A) * op(B) + beta * C        row-major; op from `layout`
--
-- A block computes a bm x bn tile of C with (bm/wm) x (bn/wn) warps; a warp
-- computes a wm x wn tile. Its 32 lanes stand in a (32/ln) x ln grid and each
-- owns a tm x tn patch of outputs; one pass of the lane grid covers
-- (32/ln*tm) x (ln*tn) outputs and the warp repeats it over its tile, so each
-- thread holds several sub-tiles (their rows and columns a pass apart):
--
--          warp tile wm x wn                 one pass, ln = 8, tm = tn = 4
--       +--------+--------+            +--+--+--+--+--+--+--+--+
--       | pass   | pass   |            |L0|L1|L2|L3|L4|L5|L6|L7|  each cell:
--       | (0,0)  | (0,1)  |            +--+--+--+--+--+--+--+--+  one lane's
--       +--------+--------+            |L8|  ...                |  4 x 4 patch
--       | pass   | pass   |            +--+--+--+--+--+--+--+--+
--       | (1,0)  | (1,1)  |            ... 4 rows of lanes
--       +--------+--------+
--
-- K is walked in tiles of bk. The block's threads copy a bm x bk tile of A and
-- a bk x bn tile of B into shared memory: with stages >= 2 through a ring of
-- `stages` buffers filled by asynchronous copies (cp.async), so the copy of
-- tile t + stages - 1 overlaps the multiplication of tile t; with stages = 1
-- through registers (the next tile is loaded before the current one is
-- multiplied and stored after, into the other of two buffers; with ba = 1
-- only A, while B's copies go into that buffer with cp.async). Shared memory
-- holds A as As[k][m] (at = 1, "transposed": a lane reads its tm rows as one
-- 16-byte vector) or As[m][k] (at = 0: it reads 4 values of k at once); B as
-- Bs[k][n] (bt = 0) or Bs[n][k] (bt = 1). `pad` floats per shared row move
-- the rows of a transposing copy onto different banks.
--
-- Edges: the interior runs without checks. Rows (or columns) a thread
-- copies past the edge of M (N) are clamped to the last one, so its loads
-- stay inside the matrix and their results are never stored; vectors that
-- straddle the edge of a contiguous M or N axis read only the floats inside
-- (inside the K loop that case, an extent not a multiple of the vector, is
-- tested once per tile rather than per copy; with pack = 1 the runtime
-- first copies operands whose rows are not 16-byte granular into padded
-- ones, so vectors never straddle). pred = 1 predicates the K
-- loop's copies of the next tile instead of branching around them.
-- The last tile of K, the only one that can be partial, is multiplied first:
-- its copy (in the prologue) zero-fills past K, and no copy inside the K
-- loop checks anything. Stores check M and N. A transposing copy through
-- cp.async moves single floats, grouped so that each warp instruction reads
-- whole 32-byte sectors (lib/warp_plan.lua).
--
-- wk > 1 puts wk groups of such warps in a block, all on the same tile of C:
-- group g multiplies values [g bk/wk, (g+1) bk/wk) of every tile of K, and
-- at the end groups 1 .. wk-1 park their partial tiles in shared memory for
-- group 0 to add (split-K inside the block: more warps per SM for outputs
-- too small to fill the GPU, with no atomics and no second kernel).
--
-- split-K (splitk > 1) divides the K tiles among gridDim.z slices that add
-- alpha * partial into C atomically (one float at a time, or with red = 4 four
-- at once: sm_90's red.global.add.v4.f32), after a first kernel has
-- multiplied C by beta; with cl = 1 (sm_90) a tile's slices are instead one
-- thread-block cluster that sums the partial tiles through distributed
-- shared memory and stores C itself. Stream-K (sk = 1, 2) runs a persistent
-- grid: whole waves of tiles one per block, the remaining tiles cut along K
-- over all blocks and added atomically (sk = 1: the last partial wave and
-- the full one before it; sk = 2: the last partial wave only, each block's
-- piece before its whole tiles). xb = 1 (register path) loads the next
-- tile's first fragments right after the barrier, behind the current
-- tile's last step of FFMAs. cc = 1 makes single-float copies
-- share one source pointer per line (lib/warp_copy.lua). raster > 1 walks the blocks in groups of `raster`
-- block rows, so that the blocks running together share tiles of A and B in
-- L2. minb > 1 caps the registers (__launch_bounds__' second argument) so
-- that minb blocks fit an SM.
--
-- What each technique bought on an H200, and why: bench/NOTES.md.

local params = require "lib.params"
local emit = require "lib.emit"
local plan = require "lib.warp_plan"
local copy = require "lib.warp_copy"
local access = require "lib.warp_access"

local T = { name = "matmul_warp", version = 1 }

T.params = {
  { name = "bm", type = "int", default = 128, min = 1, max = 512,
    doc = "block tile: rows of C computed by one block" },
  { name = "bn", type = "int", default = 128, min = 1, max = 512,
    doc = "block tile: columns of C computed by one block" },
  { name = "bk", type = "int", default = 8, min = 1, max = 128,
    doc = "block tile: depth (elements of K) copied per stage" },
  { name = "wm", type = "int", default = 32, min = 1, max = 512,
    doc = "warp tile: rows of C computed by one warp (warps = bm/wm * bn/wn)" },
  { name = "wn", type = "int", default = 64, min = 1, max = 512,
    doc = "warp tile: columns of C computed by one warp" },
  { name = "wk", type = "int", default = 1, values = { 1, 2, 3, 4 },
    doc = "warp groups along K: wk groups of bm/wm x bn/wn warps share every tile of K (bk/wk values each) and sum their partial tiles through shared memory at the end (1: one group)" },
  { name = "tm", type = "int", default = 4, min = 1, max = 16,
    doc = "thread sub-tile: consecutive rows of one lane's patch" },
  { name = "tn", type = "int", default = 4, min = 1, max = 16,
    doc = "thread sub-tile: consecutive columns of one lane's patch" },
  { name = "ln", type = "int", default = 8, values = { 1, 2, 4, 8, 16, 32 },
    doc = "lanes of a warp along N (32/ln along M)" },
  { name = "at", type = "int", default = 1, values = { 0, 1 },
    doc = "A in shared memory: 1 transposed As[k][m] (vector reads along m), 0 As[m][k]" },
  { name = "bt", type = "int", default = 0, values = { 0, 1 },
    doc = "B in shared memory: 0 Bs[k][n] (vector reads along n), 1 transposed Bs[n][k]" },
  { name = "pad", type = "int", default = 4, min = 0, max = 32,
    doc = "extra floats per shared-memory row (bank-conflict padding)" },
  { name = "vec", type = "int", default = 4, values = { 1, 2, 4 },
    doc = "floats per global copy (2, 4: 8- and 16-byte copies; need aligned pointers and ld)" },
  { name = "pack", type = "int", default = 0, values = { 0, 1 },
    doc = "vec=4: 1 has the runtime first copy A and B, where their leading dimension, pointer or contiguous M or N extent rules out 16-byte copies, into a workspace whose rows are padded with zeros to multiples of 4 floats, so the 16-byte kernel runs on any shape" },
  { name = "stages", type = "int", default = 2, values = { 1, 2, 3, 4 },
    doc = "1: register prefetch into 2 buffers; 2-4: ring of cp.async buffers" },
  { name = "ba", type = "int", default = 0, values = { 0, 1 },
    doc = "stages=1: 1 copies B's tiles with cp.async into the two buffers (only A goes through registers), so fewer registers are held across the multiplication" },
  { name = "mid", type = "int", default = 0, values = { 0, 1 },
    doc = "1: the next tile's copies (cp.async: issued; register prefetch: stored to shared memory) halfway through the multiplication of the current one; 0: before it (cp.async) or after it (registers)" },
  { name = "pred", type = "int", default = 0, values = { 0, 1 },
    doc = "1: the K loop's copies of the next tile are predicated (past the last tile they read nothing) instead of skipped by a branch, so the loop body is one block ptxas can schedule" },
  { name = "xb", type = "int", default = 0, values = { 0, 1 },
    doc = "stages=1: 1 loads the first fragments of the next tile right after the barrier and multiplies the current tile's last step of k behind them, so no warp waits for shared memory at the top of a tile" },
  { name = "raster", type = "int", default = 1, min = 1, max = 64,
    doc = "block order: groups of this many block rows for L2 reuse (1: row by row)" },
  { name = "splitk", type = "int", default = 1, min = 1, max = 256,
    doc = "slices of K (grid z), summed into C with atomicAdd after a beta pass" },
  { name = "cl", type = "int", default = 0, values = { 0, 1 },
    doc = "split-K: 1 makes a tile's slices one thread-block cluster (sm_90) that sums the partial tiles through distributed shared memory: no beta pass, no atomics" },
  { name = "cc", type = "int", default = 0, values = { 0, 1 },
    doc = "single-float cp.async copies: 1 share one source pointer per line and add constant offsets (fewer registers), 0 one pointer per copy" },
  { name = "sk", type = "int", default = 0, values = { 0, 1, 2 },
    doc = "stream-K: one block per resident slot (SMs x blocks per SM); 1 spreads the last partial wave of tiles and the full wave before it over all blocks by K iterations, 2 only the last partial wave's tiles, each block's shared piece first, before its whole tiles" },
  { name = "red", type = "int", default = 1, values = { 1, 4 },
    doc = "split-K and stream-K: floats per atomic addition into C (4: sm_90 red.global.add.v4.f32; needs tn % 4 == 0)" },
  { name = "minb", type = "int", default = 1, values = { 1, 2, 3, 4 },
    doc = "blocks per SM the registers must allow (__launch_bounds__' second argument; 1: no cap)" },
  { name = "bounds", type = "int", default = 1, values = { 0, 1 },
    doc = "1: any M, N, K >= 1 (checks only at edges); 0: M, N, K multiples of bm, bn, bk" },
  { name = "layout", type = "enum", default = "nn", values = { "nn", "nt", "tn", "tt" },
    doc = "op(A), op(B): n as stored, t transposed (A stored K x M, B stored N x K)" },
}

-- The values the tuner explores; check() prunes what breaks a rule or does
-- not fit the device. Left at their defaults: at = 1, pad = 4, tm = tn = 4,
-- ln = 8, wk = 1, mid = 0 (on an H200 at = 0, pad = 0, warp groups along K
-- and mid-loop copies lost every measured comparison, and the other patch
-- and lane shapes tied or lost: bench/NOTES.md); --space puts them back.
T.space = {
  bm = { 64, 128, 256 },
  bn = { 64, 128, 256 },
  bk = { 8, 16 },
  wm = { 32, 64 },
  wn = { 32, 64 },
  wk = { 1 },
  tm = { 4 },
  tn = { 4 },
  ln = { 8 },
  at = { 1 },
  pad = { 4 },
  vec = { 1, 4 },
  pack = { 0, 1 },
  stages = { 1, 2, 3 },
  ba = { 0, 1 },
  mid = { 0 },
  pred = { 0, 1 },
  xb = { 0 },
  raster = { 1, 8 },
  splitk = { 1, 2, 4, 8, 64 },
  cl = { 0, 1 },
  cc = { 0, 1 },
  sk = { 0, 1, 2 },
  red = { 1, 4 },
  minb = { 1, 2 },
  bounds = { 1 },
}

local MAX_OUTPUTS = 128 -- accumulators per thread the register file can hold
local mul, derive, M_vwidth = plan.mul, plan.derive, plan.vwidth

function T.check(cfg, limits)
  local function fail(...) return nil, string.format(...) end
  if cfg.bm % cfg.wm ~= 0 then return fail("bm=%d is not a multiple of wm=%d", cfg.bm, cfg.wm) end
  if cfg.bn % cfg.wn ~= 0 then return fail("bn=%d is not a multiple of wn=%d", cfg.bn, cfg.wn) end
  local lm = 32 // cfg.ln
  if cfg.wm % (lm * cfg.tm) ~= 0 then
    return fail("wm=%d is not a multiple of (32/ln)*tm = %d*%d = %d (one pass of the lanes, ln=%d)",
      cfg.wm, lm, cfg.tm, lm * cfg.tm, cfg.ln)
  end
  if cfg.wn % (cfg.ln * cfg.tn) ~= 0 then
    return fail("wn=%d is not a multiple of ln*tn = %d*%d = %d (one pass of the lanes)",
      cfg.wn, cfg.ln, cfg.tn, cfg.ln * cfg.tn)
  end
  local outputs = cfg.wm * cfg.wn // 32
  if outputs > MAX_OUTPUTS then
    return fail("wm=%d wn=%d give %d outputs per thread; at most %d fit the registers",
      cfg.wm, cfg.wn, outputs, MAX_OUTPUTS)
  end
  if cfg.bk % cfg.wk ~= 0 then
    return fail("wk=%d groups of warps share each tile of K: bk=%d must be a multiple of wk", cfg.wk, cfg.bk)
  end
  if cfg.wk > 1 and (cfg.cl == 1 or cfg.sk > 0) then
    return fail("wk=%d sums its groups' partial tiles in shared memory; it does not combine with %s: use wk=1",
      cfg.wk, cfg.cl == 1 and "cl=1" or "sk=" .. cfg.sk)
  end
  -- Rules on the parameters alone come before anything is derived, in the
  -- order of the parameters they read: the tuner's space walk (autotune/space.c)
  -- skips every combination that agrees with a rejected one on what check()
  -- read, so an early verdict that reads few parameters cuts a large subtree.
  if cfg.pack == 1 and cfg.vec ~= 4 then
    return fail("pack=1 pads the operands for 16-byte copies: it needs vec=4 (got vec=%d)", cfg.vec)
  end
  if cfg.ba == 1 and (cfg.stages ~= 1 or limits.sm < 80) then
    return fail("ba=1 copies B with cp.async inside the register-prefetch pipeline: it needs stages=1 (got %d) and sm_80 or newer (target %s)",
      cfg.stages, limits.name)
  end
  if cfg.cl == 1 then
    if cfg.splitk < 2 or cfg.splitk > 8 then
      return fail("cl=1 makes the splitk slices of a tile one cluster: it needs 2 <= splitk <= 8 (a portable cluster), got splitk=%d", cfg.splitk)
    end
    if limits.sm < 90 then
      return fail("cl=1 uses thread-block clusters and distributed shared memory, which need sm_90 or newer (target %s)", limits.name)
    end
    if cfg.red ~= 1 or cfg.bn % 4 ~= 0 then
      return fail("cl=1 sums the slices without atomics in 4-float vectors: it needs red=1 and bn %% 4 == 0 (red=%d, bn=%d)", cfg.red, cfg.bn)
    end
  end
  if cfg.sk > 0 and cfg.splitk > 1 then
    return fail("sk=%d (stream-K) divides K itself; it does not combine with splitk=%d: use splitk=1", cfg.sk, cfg.splitk)
  end
  if cfg.splitk == 1 and cfg.sk == 0 and cfg.red ~= 1 then
    return fail("red=%d sets how split-K or stream-K adds into C; with splitk=1 and sk=0 nothing is added: use red=1", cfg.red)
  end
  if cfg.red == 4 and (cfg.tn % 4 ~= 0 or limits.sm < 90) then
    return fail("red=4 adds 4 consecutive floats of a lane's patch at once: it needs tn %% 4 == 0 (tn=%d) and sm_90 or newer (target %s)",
      cfg.tn, limits.name)
  end
  local d = derive(cfg)
  if d.threads > limits.max_threads_per_block then
    return fail("bm=%d bn=%d wm=%d wn=%d wk=%d give %d warps = %d threads per block; the limit is %d",
      cfg.bm, cfg.bn, cfg.wm, cfg.wn, cfg.wk, d.threads // 32, d.threads, limits.max_threads_per_block)
  end
  for _, op in ipairs({ d.A, d.B }) do
    if op.cont_ext % cfg.vec ~= 0 then
      return fail("vec=%d needs %s (the contiguous extent of the %s tile in layout %s) to be a multiple of %d; %s=%d",
        cfg.vec, op.cont_name, op.name, cfg.layout, cfg.vec, op.cont_name, op.cont_ext)
    end
    if op.async and op.direct and op.stride % cfg.vec ~= 0 then
      return fail("vec=%d with stages=%d copies %d bytes straight into %s, whose rows of %d floats (pad=%d) are not %d-byte aligned",
        cfg.vec, cfg.stages, 4 * cfg.vec, op.smem, op.stride, cfg.pad, 4 * cfg.vec)
    end
  end
  if cfg.mid == 1 and d.kslice // d.kg < 2 then
    return fail("mid=1 moves the next tile's copies into the middle of the multiplication: it needs at least two fragment steps per tile of K (%d values of k in %d-value steps)",
      d.kslice, d.kg)
  end
  if d.async and limits.sm < 80 then
    return fail("stages=%d uses cp.async, which needs sm_80 or newer (target %s); use stages=1",
      cfg.stages, limits.name)
  end
  if cfg.xb == 1 and (cfg.stages ~= 1 or cfg.mid == 1 or d.kslice // d.kg < 2) then
    return fail("xb=1 carries the first fragments of the next tile across the register-prefetch pipeline's barrier: it needs stages=1, mid=0 and at least two fragment steps per tile of K (stages=%d, mid=%d, %d value(s) of k in %d-value steps)",
      cfg.stages, cfg.mid, d.kslice, d.kg)
  end
  if cfg.minb > 1 and (d.threads * cfg.minb > limits.max_threads_per_sm
      or (d.smem + (limits.smem_reserved_per_block or 0)) * cfg.minb > limits.smem_per_sm) then
    return fail("minb=%d blocks of %d threads and %d bytes of shared memory do not fit one SM (%d threads, %d bytes on %s)",
      cfg.minb, d.threads, d.smem, limits.max_threads_per_sm, limits.smem_per_sm, limits.name)
  end
  if d.smem > limits.smem_per_block_optin then
    return fail("bm=%d bn=%d bk=%d pad=%d stages=%d wk=%d need %d bytes of shared memory per block; the limit is %d (%s)",
      cfg.bm, cfg.bn, cfg.bk, cfg.pad, cfg.stages, cfg.wk, d.smem, limits.smem_per_block_optin, limits.name)
  end
  -- last: its test walks the copies of every thread (answers memoized per geometry)
  if cfg.cc == 1 and not (copy.compact(cfg, d, d.A) or copy.compact(cfg, d, d.B)) then
    return fail("cc=1 changes nothing here: no operand is copied as single floats through cp.async in a pattern that shares pointers (stages=%d, vec=%d); use cc=0",
      cfg.stages, cfg.vec)
  end
  return true
end

function T.resources(cfg)
  local d = derive(cfg)
  return {
    threads = d.threads,
    block = { d.threads, 1, 1 },
    smem_static = d.dynamic and 0 or d.smem,
    smem_dynamic = d.dynamic and d.smem or 0,
    loads_a = d.loads_a,                 -- floats of A read from global per tile of K
    loads_b = d.loads_b,
    flops_per_phase = d.flops,
    cgma = d.cgma,                       -- FLOPs per global load (the seeds' ratio)
    outputs_per_thread = d.rows * d.cols,
    tile = { m = cfg.bm, n = cfg.bn, k = cfg.bk },
  }
end

---------------------------------------------------------------------------
-- Rendering
---------------------------------------------------------------------------

local LANES = { "x", "y", "z", "w" }
local VEC_TYPE = copy.VEC_TYPE

local function emit_header(w, cfg, d, meta)
  local opa = d.a_trans and "A^T (A stored K x M)" or "A (stored M x K)"
  local opb = d.b_trans and "B^T (B stored N x K)" or "B (stored K x N)"
  w:comment(string.format("Generated by kgen %s from template %s v%d. Regenerate rather than edit.",
    meta.kgen_version, T.name, T.version))
  w:comment("")
  w:comment(string.format("C = alpha * %s * %s + beta * C   (row-major fp32, layout %s)", opa, opb, cfg.layout))
  w:comment("")
  w:comment("Parameters: " .. params.canonical(T.params, cfg))
  w:comment("Derived:")
  if cfg.wk > 1 then
    w:comment(string.format("  warps per block     %d groups along K of %d x %d = %d threads; warp tile %d x %d",
      cfg.wk, d.warps_m, d.warps_n, d.threads, cfg.wm, cfg.wn))
    w:comment(string.format("  groups along K      each multiplies %d of every tile's %d values of k; groups 1..%d",
      d.kslice, cfg.bk, cfg.wk - 1))
    w:comment(string.format("                      park their partial tiles in shared memory (%d bytes), group 0 sums",
      4 * d.park_floats))
  else
    w:comment(string.format("  warps per block     %d x %d = %d threads; warp tile %d x %d",
      d.warps_m, d.warps_n, d.threads, cfg.wm, cfg.wn))
  end
  w:comment(string.format("  lanes               %d x %d, each a %d x %d patch; %d x %d sub-tiles per warp",
    d.lm, cfg.ln, cfg.tm, cfg.tn, d.sub_m, d.sub_n))
  w:comment(string.format("  outputs per thread  %d x %d = %d accumulators", d.rows, d.cols, d.rows * d.cols))
  for _, op in ipairs({ d.A, d.B }) do
    w:comment(string.format("  %s in shared memory %s[%d][%d]: %s rows of %d floats; %s copy, %d x %d floats (%d per thread)",
      op.name, op.smem, op.srows, op.stride, op.scont and "k" or (op.p == "a" and "m" or "n"), op.stride,
      op.direct and "direct" or "transposing", op.count, op.cvec, op.per_thread))
  end
  w:comment(string.format("  shared memory       %d bytes %s: %d buffers of %d floats",
    d.smem, d.dynamic and "dynamic" or "static", d.nbuf, d.stage_floats))
  w:comment(string.format("  pipeline            %s", d.async
    and string.format("cp.async ring of %d stages (copy of tile t+%d overlaps tile t)", cfg.stages, cfg.stages - 1)
    or string.format("register prefetch: tile t+1 loaded before tile t is multiplied, 2 buffers; stored %s%s",
      cfg.mid == 1 and "halfway through the multiplication" or "after it",
      cfg.ba == 1 and "; B copied with cp.async instead (ba=1)" or "")))
  w:comment(string.format("  fragment reads      %d value(s) of k per read; A %s, B %s", d.kg,
    d.A.scont and string.format("%d floats along m", d.A.fvec) or string.format("%d floats along k", d.kg),
    d.B.scont and string.format("%d floats along n", d.B.fvec) or string.format("%d floats along k", d.kg)))
  if cfg.splitk > 1 then
    w:comment(string.format("  split-K             %d slices of K (grid z), added into C with %s", cfg.splitk,
      d.red4 and "red.global.add.v4.f32 (4 floats) where C is 16-byte aligned, else atomicAdd" or "atomicAdd"))
  end
  if d.sk then
    w:comment(string.format("  stream-K            whole waves of tiles one per block; the rest cut along K and added with %s",
      d.red4 and "red.global.add.v4.f32 (4 floats) where C is 16-byte aligned, else atomicAdd" or "atomicAdd"))
  end
  w:comment(string.format("  CGMA ratio          %.2f FLOP per global load: 2*bm*bn*bk / (bm*bk + bk*bn)", d.cgma))
  w:comment("Launch:")
  w:comment(string.format("  block = (%d, 1, 1)", d.threads))
  if d.sk then
    w:comment(string.format("  grid  = (SMs x blocks of this kernel per SM, 1, 1): persistent workers%s",
      cfg.raster > 1 and string.format("; tiles ordered in groups of %d tile rows", cfg.raster) or ""))
  else
    w:comment(string.format("  grid  = (ceil(N / %d), ceil(M / %d), %d)%s", cfg.bn, cfg.bm, cfg.splitk,
      cfg.raster > 1 and string.format("; blocks remapped in groups of %d block rows", cfg.raster) or ""))
  end
  w:comment(string.format("  dynamic shared memory = %d bytes%s", d.dynamic and d.smem or 0,
    d.dynamic and " (raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES first)" or ""))
  if cfg.splitk > 1 then
    w:comment(string.format("  first %s_beta: block (128, 1, 1), grid (ceil(N / 128), ceil(M / 64), 1): C = beta * C",
      d.entry))
  end
  if d.sk then
    w:comment(string.format("  first %s_beta: block (256, 1, 1), the same grid: C = beta * C on the shared tiles",
      d.entry))
  end
  if d.overlap then
    w:comment("  sm_90: this kernel may be launched to overlap the first (programmatic stream")
    w:comment("  serialization); it waits for it (griddepcontrol.wait) before adding into C.")
  end
  w:comment("Preconditions:")
  if cfg.bounds == 1 then
    w:comment("  M, N, K >= 1 (any shape).")
  else
    w:comment(string.format("  no bound checks: M %% %d == 0, N %% %d == 0, K %% %d == 0.", cfg.bm, cfg.bn, cfg.bk))
  end
  w:comment(string.format("  lda >= %s, ldb >= %s, ldc >= N.", d.a_trans and "M" or "K", d.b_trans and "K" or "N"))
  if cfg.vec > 1 then
    w:comment(string.format("  vec=%d: lda and ldb multiples of %d; A and B aligned to %d bytes.",
      cfg.vec, cfg.vec, 4 * cfg.vec))
  end
end

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
local function emit_fragment(w, cfg, d, op, buf, sub, t, pass, arr)
  arr = arr or op.p
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
      w:line("const %s f = *reinterpret_cast<const %s*>(&%s);", VEC_TYPE[fv], VEC_TYPE[fv], addr)
      for e = 0, fv - 1 do w:line("%s = f.%s;", at(q, emit.add(r0, e)), LANES[e + 1]) end
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
      w:line("const %s f = *reinterpret_cast<const %s*>(&%s);", VEC_TYPE[d.kg], VEC_TYPE[d.kg], addr)
      for q = 0, d.kg - 1 do w:line("%s = f.%s;", at(q, r), LANES[q + 1]) end
    end
    close_loop(w, e); close_loop(w, i)
  end
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
-- stores of the prefetched tile).
local function emit_compute(w, cfg, d, as, bs, mid, xb)
  w:comment("Multiply the tiles out of shared memory: outer products of fragments.")
  local function first(op, off) return fragment_origin(cfg, op, off) end
  w:linec(string.format("const float* af = %s + %s;", as, first(d.A, "a_off")),
    cfg.wk > 1 and "this lane's rows of the A tile, at its group's k" or "this lane's rows of the A tile")
  w:linec(string.format("const float* bf = %s + %s;", bs, first(d.B, "b_off")),
    "its columns of the B tile")
  -- one step's fragments a, b (at kk) out of the tiles at af, bf
  local function frags()
    w:line("float a[%d][%d], b[%d][%d];", d.kg, d.rows, d.kg, d.cols)
    emit_fragment(w, cfg, d, d.A, "af", d.sub_m, cfg.tm, d.pass_m)
    emit_fragment(w, cfg, d, d.B, "bf", d.sub_n, cfg.tn, d.pass_n)
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
local function emit_first_fragments(w, cfg, d, as, bs)
  w:open("")
  w:line("const int kk = 0;")
  w:line("const float* naf = %s + %s;", as, fragment_origin(cfg, d.A, "a_off"))
  w:line("const float* nbf = %s + %s;", bs, fragment_origin(cfg, d.B, "b_off"))
  emit_fragment(w, cfg, d, d.A, "naf", d.sub_m, cfg.tm, d.pass_m, "a_n")
  emit_fragment(w, cfg, d, d.B, "nbf", d.sub_n, cfg.tn, d.pass_n, "b_n")
  w:close()
end

-- Epilogue: C = alpha * acc + beta * C (C not read when beta == 0), or
-- (atomic: split-K, stream-K's shared tiles) an atomic addition of
-- alpha * acc. Vectors where C allows them: `cv` floats per store.
local function emit_store(w, cfg, d, atomic, cv)
  if atomic then
    w:comment("Add this share of the tile: C was multiplied by beta by the first kernel.")
    w:linec("kgen_dep_wait();", "that kernel has finished (a no-op unless launched to overlap it)")
  else
    w:comment("C = alpha * acc + beta * C; C is not read when beta == 0 (BLAS convention).")
  end
  if cv > 1 then
    w:line("const bool c_vec = (ldc %% %d == 0) && (reinterpret_cast<unsigned long long>(C) %% %d == 0);", cv, 4 * cv)
  end
  w:line("#pragma unroll")
  w:open("for (int i = 0; i < %d; ++i)", d.rows)
  w:line("const int r = row0 + a_off + (i / %d) * %d + i %% %d;", cfg.tm, d.pass_m, cfg.tm)
  if cfg.bounds == 1 then w:line("if (r >= M) continue;") end
  w:line("float* crow = C + (size_t)r * ldc;")
  w:line("#pragma unroll")
  if cv == 1 then w:open("for (int j = 0; j < %d; ++j)", d.cols)
  else w:open("for (int j = 0; j < %d; j += %d)", d.cols, cv) end
  w:line("const int c = col0 + b_off + (j / %d) * %d + j %% %d;", cfg.tn, d.pass_n, cfg.tn)
  local function one(e) -- the statement for element c + e
    local v, dst = emit.add("j", e), "crow[" .. emit.add("c", e) .. "]"
    if atomic then return string.format("atomicAdd(&%s, alpha * acc[i][%s]);", dst, v) end
    return string.format("%s = beta == 0.0f ? alpha * acc[i][%s] : alpha * acc[i][%s] + beta * %s;", dst, v, v, dst)
  end
  if cv == 1 then
    if cfg.bounds == 1 then w:line("if (c < N) %s", one(0)) else w:line(one(0)) end
  else
    local vt = VEC_TYPE[cv]
    local comps = {}
    for e = 0, cv - 1 do comps[#comps + 1] = string.format("alpha * acc[i][j + %d]", e) end
    w:open("if (c_vec%s)", cfg.bounds == 1 and string.format(" && c + %d <= N", cv) or "")
    if atomic then
      w:line("kgen_red_add4(&crow[c], %s);", table.concat(comps, ", "))
    else
      w:line("%s v = make_%s(%s);", vt, vt, table.concat(comps, ", "))
      w:open("if (beta != 0.0f)")
      w:line("const %s old = *reinterpret_cast<const %s*>(&crow[c]);", vt, vt)
      for e = 0, cv - 1 do w:line("v.%s += beta * old.%s;", LANES[e + 1], LANES[e + 1]) end
      w:close()
      w:line("*reinterpret_cast<%s*>(&crow[c]) = v;", vt)
    end
    w:reopen("else")
    w:line("#pragma unroll")
    w:open("for (int e = 0; e < %d; ++e)", cv)
    if cfg.bounds == 1 then w:line("if (c + e >= N) break;") end
    w:line(one("e"))
    w:close()
    w:close()
  end
  w:close()
  w:close()
end

-- wk > 1: groups 1 .. wk-1 park their partial tiles in shared memory, each
-- thread's accumulators as vectors of pv floats, thread-major (consecutive
-- threads, consecutive vectors: no bank conflicts); group 0 adds them to
-- its own, in group order (deterministic), and then stores the tile: the
-- `if (kgrp == 0)` block is left open for the store.
local function emit_group_sum(w, cfg, d)
  local pv, tt = d.pv, d.tile_threads
  local vt = VEC_TYPE[pv]
  local per = d.rows * d.cols // pv -- vectors per thread
  w:comment(string.format("Sum the %d groups' partial tiles: groups 1..%d park theirs in shared memory,", cfg.wk, cfg.wk - 1))
  w:comment("group 0 adds them in group order.")
  w:linec("__syncthreads();", "every warp is done with the pipeline's buffers")
  w:line("const int tt = tid %% %d;", tt)
  w:line("%s* park = reinterpret_cast<%s*>(smem);", vt, vt)
  local function slot(g, i, j)
    return string.format("park[(%s * %d + (%s * %d + %s) / %d) * %d + tt]", g, per, i, d.cols, j, pv, tt)
  end
  w:open("if (kgrp > 0)")
  w:line("#pragma unroll")
  w:open("for (int i = 0; i < %d; ++i)", d.rows)
  w:line("#pragma unroll")
  if pv == 1 then
    w:line("for (int j = 0; j < %d; ++j) %s = acc[i][j];", d.cols, slot("(kgrp - 1)", "i", "j"))
  else
    local comps = {}
    for e = 0, pv - 1 do comps[#comps + 1] = string.format("acc[i][j + %d]", e) end
    w:line("for (int j = 0; j < %d; j += %d) %s = make_%s(%s);", d.cols, pv, slot("(kgrp - 1)", "i", "j"), vt,
      table.concat(comps, ", "))
  end
  w:close()
  w:close()
  w:linec("__syncthreads();", "the partial tiles are in place")
  w:open("if (kgrp == 0)")
  w:line("#pragma unroll")
  w:open("for (int g = 0; g < %d; ++g)", cfg.wk - 1)
  w:line("#pragma unroll")
  w:open("for (int i = 0; i < %d; ++i)", d.rows)
  w:line("#pragma unroll")
  w:open("for (int j = 0; j < %d; j += %d)", d.cols, pv)
  if pv == 1 then
    w:line("acc[i][j] += %s;", slot("g", "i", "j"))
  else
    w:line("const %s v = %s;", vt, slot("g", "i", "j"))
    for e = 0, pv - 1 do w:line("acc[i][j + %d] += v.%s;", e, LANES[e + 1]) end
  end
  w:close()
  w:close()
  w:close()
  -- left open: group 0 stores the tile inside this block (the caller closes it)
end

-- cl = 1: the splitk slices of a tile are one cluster. Each parks its
-- partial tile in its own shared memory; after a cluster barrier each sums
-- its share of the tile's rows over every slice's shared memory (mapa +
-- ld.shared::cluster) and stores C = alpha * sum + beta * C; a second
-- barrier keeps the shared memory alive until all have read it.
local function emit_cluster_store(w, cfg, d)
  local S, q4 = cfg.splitk, cfg.bn // 4
  w:comment("Cluster split-K: park this slice's partial tile in shared memory (bm x bn, row-major).")
  w:linec("__syncthreads();", "every warp is done with the pipeline's buffers")
  w:line("#pragma unroll")
  w:open("for (int i = 0; i < %d; ++i)", d.rows)
  w:line("const int r = a_off + (i / %d) * %d + i %% %d;", cfg.tm, d.pass_m, cfg.tm)
  w:line("#pragma unroll")
  w:line("for (int j = 0; j < %d; ++j) smem[r * %d + b_off + (j / %d) * %d + j %% %d] = acc[i][j];",
    d.cols, cfg.bn, cfg.tn, d.pass_n, cfg.tn)
  w:close()
  w:linec("kgen_cluster_sync();", "every slice's partial tile is in place")
  w:line("const int rank = (int)kgen_cluster_rank();")
  w:line("const int r_lo = rank * %d, r_hi = min(%d, r_lo + %d);", (cfg.bm + S - 1) // S, cfg.bm, (cfg.bm + S - 1) // S)
  w:line("const bool c_vec = (ldc % 4 == 0) && (reinterpret_cast<unsigned long long>(C) % 16 == 0);")
  w:open("for (int e = tid + r_lo * %d; e < r_hi * %d; e += %d)", q4, q4, d.threads)
  w:line("const int lr = e / %d, lc = (e %% %d) * 4;", q4, q4)
  w:line("const float* p = smem + lr * %d + lc;", cfg.bn)
  w:line("float4 s = kgen_dsmem_ld4(p, 0);")
  for q = 1, S - 1 do
    w:line("{ const float4 t = kgen_dsmem_ld4(p, %d); s.x += t.x; s.y += t.y; s.z += t.z; s.w += t.w; }", q)
  end
  w:line("const int r = row0 + lr, c = col0 + lc;")
  if cfg.bounds == 1 then w:line("if (r >= M) continue;") end
  w:line("float* crow = C + (size_t)r * ldc;")
  w:open("if (c_vec%s)", cfg.bounds == 1 and " && c + 4 <= N" or "")
  w:line("float4 v = make_float4(alpha * s.x, alpha * s.y, alpha * s.z, alpha * s.w);")
  w:open("if (beta != 0.0f)")
  w:line("const float4 old = *reinterpret_cast<const float4*>(&crow[c]);")
  w:line("v.x += beta * old.x; v.y += beta * old.y; v.z += beta * old.z; v.w += beta * old.w;")
  w:close()
  w:line("*reinterpret_cast<float4*>(&crow[c]) = v;")
  w:reopen("else")
  w:line("const float sv[4] = {s.x, s.y, s.z, s.w};")
  w:line("#pragma unroll")
  w:open("for (int u = 0; u < 4; ++u)")
  if cfg.bounds == 1 then w:line("if (c + u >= N) break;") end
  w:line("crow[c + u] = beta == 0.0f ? alpha * sv[u] : alpha * sv[u] + beta * crow[c + u];")
  w:close()
  w:close()
  w:close()
  w:linec("kgen_cluster_sync();", "no slice leaves while another still reads its shared memory")
end

-- Tile `id` (a linear index) of a grid of tiles_m x tiles_n tiles, as its
-- first row and column: row by row, or with raster > 1 in groups of
-- `raster` tile rows walked column by column, so that the blocks resident
-- together read few distinct tiles of A and B (L2 reuse).
local function emit_tile_origin(w, cfg, id, tiles_m, tiles_n)
  if cfg.raster > 1 then
    w:line("const int per_group = %d * %s;", cfg.raster, tiles_n)
    w:line("const int first_m = (int)(%s / per_group) * %d;", id, cfg.raster)
    w:line("const int group_m = min(%s - first_m, %d);", tiles_m, cfg.raster)
    w:line("const int in_group = (int)(%s %% per_group);", id)
    w:linec(string.format("const int row0 = (first_m + in_group %% group_m) * %d;", cfg.bm), "first row of C in this tile")
    w:linec(string.format("const int col0 = (in_group / group_m) * %d;", cfg.bn), "first column")
  else
    w:linec(string.format("const int row0 = (int)(%s / %s) * %d;", id, tiles_n, cfg.bm), "first row of C in this tile")
    w:linec(string.format("const int col0 = (int)(%s %% %s) * %d;", id, tiles_n, cfg.bn), "first column")
  end
end

-- The block's tile of C (one tile per block: the grid is the tiles).
local function emit_block_origin(w, cfg)
  if cfg.raster > 1 then
    w:comment(string.format("Grouped order: consecutive blocks walk down groups of %d block rows (L2 reuse).", cfg.raster))
    w:line("const int bid = blockIdx.y * gridDim.x + blockIdx.x;")
    emit_tile_origin(w, cfg, "bid", "(int)gridDim.y", "(int)gridDim.x")
  else
    w:linec(string.format("const int row0 = blockIdx.y * %d;", cfg.bm), "first row of C in this block")
    w:linec(string.format("const int col0 = blockIdx.x * %d;", cfg.bn), "first column")
  end
end

-- The K loop. With bound checks the slice's last tile, the only one that
-- can end inside K, is multiplied first: its copy (with K checks) is issued
-- in the prologue and every copy inside the loop runs unchecked: the t-th
-- tile multiplied (t >= 1) is tile kt0 + t - 1.
local function emit_main_loop(w, cfg, d)
  local A, B = d.A, d.B
  local checked = cfg.bounds == 1
  local function bufs(stage)
    local off = mul(stage, d.stage_floats)
    return off == "0" and "smem" or string.format("smem + %s", off),
      string.format("smem + %s", emit.add(off, B.base))
  end
  local first_k0 = string.format("(kt0 + ktiles - 1) * %d", cfg.bk)
  -- Opens the block of the next tile's copies, `ahead` tiles on: skipped by
  -- a branch past the last tile, or (pred = 1) always entered with `more`
  -- false there; returns the gate for the copies (nil: none).
  local function open_next(ahead, why)
    if cfg.pred ~= 1 then
      w:open("if (t + %d < ktiles)", ahead)
      return nil
    end
    w:open("")
    w:linec(string.format("const bool more = t + %d < ktiles;", ahead), why)
    return "more"
  end
  if checked then
    w:comment("The last tile of K (the only one that may be partial) is multiplied first, so that")
    w:comment("only its copy checks K and the loop's copies run without checks.")
  end
  if d.async then
    local function issue(stage, k0, kcheck, gate)
      local as, bs = bufs(stage)
      w:line("const int k0 = %s;", k0)
      w:line("float* as = %s;", as)
      w:line("float* bs = %s;", bs)
      copy.emit_async(w, cfg, d, A, "as", kcheck, gate)
      copy.emit_async(w, cfg, d, B, "bs", kcheck, gate)
    end
    w:comment(string.format("Prologue: start the copies of the first %d tile%s, one commit group each.",
      cfg.stages - 1, cfg.stages > 2 and "s" or ""))
    w:open("")
    issue("0", checked and first_k0 or string.format("kt0 * %d", cfg.bk), checked)
    w:close()
    w:line("kgen_cp_async_commit();")
    for st = 1, cfg.stages - 2 do
      w:open("if (%d < ktiles)", st)
      issue(tostring(st), checked and string.format("%s * %d", st == 1 and "kt0" or string.format("(kt0 + %d)", st - 1), cfg.bk)
        or string.format("(kt0 + %d) * %d", st, cfg.bk), false)
      w:close()
      w:linec("kgen_cp_async_commit();", "empty groups keep the count")
    end
    w:line("int rs = 0, ws = %d;", cfg.stages - 1)
    w:open("for (int t = 0; t < ktiles; ++t)")
    w:linec(string.format("asm volatile(\"cp.async.wait_group %d;\\n\" ::);", cfg.stages - 2), "tile t has landed (this thread's copies)")
    w:linec("__syncthreads();", "... everyone's; and tile t-1 is no longer read")
    local function next_copies()
      if cfg.mid == 1 then
        w:comment("Start the copies of a later tile halfway: its buffer's readers passed the barrier.")
      end
      local gate = open_next(cfg.stages - 1, "past the last tile the copies read nothing (no branch)")
      issue("ws", checked and string.format("(kt0 + t + %d) * %d", cfg.stages - 2, cfg.bk)
        or string.format("(kt0 + t + %d) * %d", cfg.stages - 1, cfg.bk), false, gate)
      w:close()
      w:line("kgen_cp_async_commit();")
      w:line("ws = ws == %d ? 0 : ws + 1;", cfg.stages - 1)
    end
    if cfg.mid ~= 1 then next_copies() end
    local as, bs = bufs("rs")
    w:line("const float* as = %s;", as)
    w:line("const float* bs = %s;", bs)
    emit_compute(w, cfg, d, "as", "bs", cfg.mid == 1 and next_copies or nil)
    w:line("rs = rs == %d ? 0 : rs + 1;", cfg.stages - 1)
    w:close()
    if cfg.pred == 1 then
      w:linec("asm volatile(\"cp.async.wait_group 0;\\n\" ::);", "the zero-filling copies past the last tile have landed")
    end
  else
    local staged = B.async and { A } or { A, B } -- operands through registers
    for _, op in ipairs(staged) do
      for i = 0, op.per_thread - 1 do w:line("%s %s_reg%d;", VEC_TYPE[op.cvec], op.p, i) end
    end
    -- bdst: with ba = 1 B's tile goes straight into that buffer (cp.async)
    local function fetch(k0, kcheck, bdst, gate)
      w:line("const int k0 = %s;", k0)
      copy.emit_fetch(w, cfg, d, A, kcheck, gate)
      if B.async then
        w:line("float* bs = %s;", bdst)
        copy.emit_async(w, cfg, d, B, "bs", kcheck, gate)
        w:line("kgen_cp_async_commit();")
      else
        copy.emit_fetch(w, cfg, d, B, kcheck, gate)
      end
    end
    w:open("")
    fetch(checked and first_k0 or string.format("kt0 * %d", cfg.bk), checked, string.format("smem + %d", B.base))
    w:close()
    copy.emit_stash(w, d, A, "smem")
    if B.async then
      w:linec("asm volatile(\"cp.async.wait_group 0;\\n\" ::);", "B's first tile has landed (this thread's copies)")
    else
      copy.emit_stash(w, d, B, string.format("(smem + %d)", B.base))
    end
    w:line("__syncthreads();")
    if cfg.xb == 1 then
      w:line("float a_n[%d][%d], b_n[%d][%d];", d.kg, d.rows, d.kg, d.cols)
      emit_first_fragments(w, cfg, d, "smem", string.format("(smem + %d)", B.base))
    end
    w:open("for (int t = 0; t < ktiles; ++t)")
    w:line("const int cur = t & 1;")
    local gate = open_next(1, "after the last tile the loads read nothing (no branch)")
    if B.async then
      w:comment("Prefetch the next tile: A into registers, B with cp.async into the other buffer (its")
      w:comment("readers passed the last barrier); both fly during the multiplication.")
    else
      w:comment("Prefetch the next tile into registers; the loads fly during the multiplication.")
    end
    fetch(checked and string.format("(kt0 + t) * %d", cfg.bk) or string.format("(kt0 + t + 1) * %d", cfg.bk), false,
      string.format("smem + (cur ^ 1) * %d + %d", d.stage_floats, B.base), gate)
    w:close()
    w:line("const float* as = smem + cur * %d;", d.stage_floats)
    w:line("const float* bs = smem + cur * %d + %d;", d.stage_floats, B.base)
    local function stash()
      if cfg.mid == 1 then
        w:comment("Store the next tile halfway: the other buffer's readers passed the last barrier.")
      end
      if cfg.pred == 1 then
        w:open("")
        w:comment("Unconditional: after the last tile this stores zeros into the idle buffer.")
      else
        w:open("if (t + 1 < ktiles)")
      end
      w:line("float* nas = smem + (cur ^ 1) * %d;", d.stage_floats)
      copy.emit_stash(w, d, A, "nas")
      if not B.async then
        w:line("float* nbs = smem + (cur ^ 1) * %d + %d;", d.stage_floats, B.base)
        copy.emit_stash(w, d, B, "nbs")
      end
      w:close()
    end
    local function barrier()
      if B.async then
        w:linec("asm volatile(\"cp.async.wait_group 0;\\n\" ::);", "B's next tile has landed (this thread's copies)")
      end
      w:linec("__syncthreads();", "stores visible; reads of `cur` done")
    end
    if cfg.xb == 1 then
      emit_compute(w, cfg, d, "as", "bs", nil, function()
        stash()
        barrier()
        w:comment("The next tile's first fragments (past the last tile: unused reads of the idle buffer).")
        emit_first_fragments(w, cfg, d, string.format("(smem + (cur ^ 1) * %d)", d.stage_floats),
          string.format("(smem + (cur ^ 1) * %d + %d)", d.stage_floats, B.base))
      end)
    elseif cfg.mid == 1 then
      emit_compute(w, cfg, d, "as", "bs", stash)
      barrier()
    else
      emit_compute(w, cfg, d, "as", "bs")
      stash()
      barrier()
    end
    w:close()
  end
end

local function emit_kernel(w, cfg, d)
  local cluster = d.cl and string.format("__cluster_dims__(1, 1, %d) ", cfg.splitk) or ""
  if cfg.minb > 1 then
    w:line("extern \"C\" __global__ void %s__launch_bounds__(%d, %d)", cluster, d.threads, cfg.minb)
  else
    w:line("extern \"C\" __global__ void %s__launch_bounds__(%d)", cluster, d.threads)
  end
  w:line("%s(int M, int N, int K, float alpha,", d.entry)
  w:line("    const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,")
  w:line("    float beta, float* __restrict__ C, int ldc)")
  w:open("")
  if d.dynamic then
    w:linec("extern __shared__ __align__(16) float smem[];",
      string.format("%d buffers of As[%d][%d] + Bs[%d][%d]", d.nbuf, d.A.srows, d.A.stride, d.B.srows, d.B.stride))
  else
    w:linec(string.format("__shared__ __align__(16) float smem[%d];", d.smem // 4),
      string.format("%d buffers of As[%d][%d] + Bs[%d][%d]", d.nbuf, d.A.srows, d.A.stride, d.B.srows, d.B.stride))
  end
  w:blank()
  w:line("const int tid = threadIdx.x;")
  w:line("const int warp = tid / 32, lane = tid % 32;")
  local function lane_offsets()
    local wt = "warp"
    if cfg.wk > 1 then
      w:linec(string.format("const int kgrp = warp / %d, wt = warp %% %d;", d.tile_warps, d.tile_warps),
        string.format("group of warps along K; warp in the tile"))
      w:linec(string.format("const int kq = kgrp * %d;", d.kslice),
        string.format("the group's first k in each tile of K (%d values each)", d.kslice))
      wt = "wt"
    end
    w:linec(string.format("const int a_off = (%s / %d) * %d + (lane / %d) * %d;", wt, d.warps_n, cfg.wm, cfg.ln, cfg.tm),
      "first row of this lane's patch in the block tile")
    w:linec(string.format("const int b_off = (%s %% %d) * %d + (lane %% %d) * %d;", wt, d.warps_n, cfg.wn, cfg.ln, cfg.tn),
      "first column")
  end
  local function tile_work(store)
    copy.emit_setup(w, cfg, d, d.A)
    copy.emit_setup(w, cfg, d, d.B)
    w:blank()
    w:line("float acc[%d][%d];", d.rows, d.cols)
    w:line("#pragma unroll")
    w:line("for (int i = 0; i < %d; ++i)", d.rows)
    w:line("    #pragma unroll")
    w:line("    for (int j = 0; j < %d; ++j) acc[i][j] = 0.0f;", d.cols)
    w:blank()
    if d.cl then
      w:comment("An empty slice (K shorter than the cluster) multiplies nothing but still takes part.")
      w:open("if (ktiles > 0)")
    end
    emit_main_loop(w, cfg, d)
    if d.cl then w:close() end
    w:blank()
    if cfg.wk > 1 then
      emit_group_sum(w, cfg, d)
      store()
      w:close()
    else
      store()
    end
  end
  if d.sk then
    lane_offsets()
    w:blank()
    w:comment("Stream-K: this block is one of gridDim.x resident workers. Whole waves of tiles")
    w:comment("go one tile per worker (data-parallel); the tiles that would leave a wave")
    w:comment("partly idle are cut into K iterations shared out evenly, and their")
    w:comment("pieces add into C atomically (the first kernel applied beta to them).")
    w:line("const int tiles_m = (M + %d) / %d, tiles_n = (N + %d) / %d;", cfg.bm - 1, cfg.bm, cfg.bn - 1, cfg.bn)
    w:linec(string.format("const int iters = (K + %d) / %d;", cfg.bk - 1, cfg.bk), "tiles of K per tile of C")
    w:line("const long long tiles = (long long)tiles_m * tiles_n, workers = gridDim.x;")
    w:line("const long long dp_tiles = kgen_sk_dp_tiles(tiles, workers);")
    w:line("const long long sk_iters = (tiles - dp_tiles) * iters;")
    w:line("const long long me = blockIdx.x;")
    w:line("long long sk_pos = me * (sk_iters / workers) + min(me, sk_iters % workers);")
    w:line("const long long sk_end = sk_pos + sk_iters / workers + (me < sk_iters % workers ? 1 : 0);")
    w:line("long long next = me;")
    w:open("for (;;)")
    w:line("long long tile;")
    w:line("int kt0, ktiles;")
    w:line("bool shared;")
    local function whole() w:line("tile = next; next += workers; kt0 = 0; ktiles = iters; shared = false;") end
    local function piece()
      w:line("tile = dp_tiles + sk_pos / iters;")
      w:line("kt0 = (int)(sk_pos % iters);")
      w:line("ktiles = (int)min((long long)(iters - kt0), sk_end - sk_pos);")
      w:line("sk_pos += ktiles;")
      w:line("shared = true;")
    end
    if cfg.sk == 2 then
      -- the shared pieces first: their atomic additions then drain while
      -- the whole tiles run, not at the end of the kernel
      w:open("if (sk_pos < sk_end)")
      piece()
      w:reopen("else if (next < dp_tiles)")
      whole()
    else
      w:open("if (next < dp_tiles)")
      whole()
      w:reopen("else if (sk_pos < sk_end)")
      piece()
    end
    w:reopen("else")
    w:line("break;")
    w:close()
    emit_tile_origin(w, cfg, "tile", "tiles_m", "tiles_n")
    w:linec("__syncthreads();", "the previous tile's reads of shared memory are done")
    w:blank()
    tile_work(function()
      w:open("if (shared)")
      emit_store(w, cfg, d, true, d.red4 and d.cv or 1)
      w:reopen("else")
      emit_store(w, cfg, d, false, M_vwidth(cfg.tn))
      w:close()
    end)
    w:close()
    w:close()
    return
  end
  emit_block_origin(w, cfg)
  lane_offsets()
  w:blank()
  if cfg.splitk > 1 then
    w:comment("This slice's tiles of K: [kt0, kt0 + ktiles).")
    w:line("const int kt_all = (K + %d) / %d;", cfg.bk - 1, cfg.bk)
    w:line("const int kt_per = (kt_all + %d) / %d;", cfg.splitk - 1, cfg.splitk)
    w:line("const int kt0 = blockIdx.z * kt_per;")
    w:line("const int ktiles = min(kt_all - kt0, kt_per);")
    if not d.cl then w:linec("if (ktiles <= 0) return;", "an empty slice adds nothing") end
  else
    w:line("const int kt0 = 0;")
    w:line("const int ktiles = (K + %d) / %d;", cfg.bk - 1, cfg.bk)
  end
  w:blank()
  if d.cl then
    tile_work(function() emit_cluster_store(w, cfg, d) end)
  else
    tile_work(function() emit_store(w, cfg, d, cfg.splitk > 1, d.cv) end)
  end
  w:close()
end

-- Stream-K's division of the tiles, shared by the kernel and its beta pass.
local function emit_sk_helper(w, cfg)
  w:comment("Stream-K: how many tiles (the first ones) go whole to one worker. When the tiles")
  w:comment("fill whole waves of `workers`, all; else")
  if cfg.sk == 1 then
    w:comment("all but the last partial wave and the full one before it (so that each")
    w:comment("worker's shared piece is one to two tiles of work), or none when there are")
    w:comment("fewer than two waves.")
  else
    w:comment("all but the last partial wave (each worker's shared piece is then under")
    w:comment("one tile of work), or none when there is less than one wave.")
  end
  w:open("__device__ __forceinline__ long long kgen_sk_dp_tiles(long long tiles, long long workers)")
  w:line("const long long rest = tiles % workers;")
  w:line("if (rest == 0) return tiles;")
  if cfg.sk == 1 then
    w:line("return tiles >= 2 * workers ? tiles - rest - workers : 0;")
  else
    w:line("return tiles - rest;")
  end
  w:close()
  w:blank()
end

-- split-K's first kernel: C = beta * C (zero when beta == 0, C unread).
local function emit_beta_kernel(w, d)
  w:blank()
  w:comment("split-K, launched first: C = beta * C, so that the slices can add into it.")
  w:line("extern \"C\" __global__ void __launch_bounds__(128)")
  w:line("%s_beta(int M, int N, int K, float alpha,", d.entry)
  w:line("    const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,")
  w:line("    float beta, float* __restrict__ C, int ldc)")
  w:open("")
  w:linec("kgen_dep_launch();", "the main kernel may start: it waits for this one before adding")
  w:line("const int c = blockIdx.x * 128 + threadIdx.x;")
  w:line("if (c >= N) return;")
  w:line("const int r1 = min(M, (int)(blockIdx.y + 1) * 64);")
  w:line("for (int r = blockIdx.y * 64; r < r1; ++r)")
  w:line("    C[(size_t)r * ldc + c] = beta == 0.0f ? 0.0f : beta * C[(size_t)r * ldc + c];")
  w:close()
end

-- pack = 1: the copy the runtime launches before the others (when an
-- operand needs it) into its workspace, on a grid of (ceil(max ldp / 1024),
-- rows (at most 65535), 2): z = 0 packs A, z = 1 B; an operand with 0 rows
-- is not packed. Row r's floats [0, cols) are copied and [cols, ldp) zeroed,
-- ldp a multiple of 4, so every 16-byte vector of a packed row is readable
-- and the kernel's vectors never straddle the edge (lib/warp_copy.lua).
local function emit_pack_kernel(w, d)
  w:blank()
  w:comment("pack = 1: copies of A (z = 0) and B (z = 1) with rows padded to ldp floats (zeros).")
  w:line("extern \"C\" __global__ void __launch_bounds__(256)")
  w:line("%s_pack(const float* __restrict__ A, int a_rows, int a_cols, int lda, float* __restrict__ Ap, int ldap,", d.entry)
  w:line("    const float* __restrict__ B, int b_rows, int b_cols, int ldb, float* __restrict__ Bp, int ldbp)")
  w:open("")
  w:line("const bool b = blockIdx.z == 1;")
  w:line("const float* __restrict__ src = b ? B : A;")
  w:line("float* __restrict__ dst = b ? Bp : Ap;")
  w:line("const int rows = b ? b_rows : a_rows, cols = b ? b_cols : a_cols;")
  w:line("const int ld = b ? ldb : lda, ldp = b ? ldbp : ldap;")
  w:line("const int c = (blockIdx.x * 256 + threadIdx.x) * 4;")
  w:line("if (c >= ldp) return;")
  w:open("for (int r = blockIdx.y; r < rows; r += gridDim.y)")
  w:line("const float* s = src + (size_t)r * ld + c;")
  w:line("float4 v;")
  w:line("v.x = c < cols ? __ldg(s) : 0.0f;")
  w:line("v.y = c + 1 < cols ? __ldg(s + 1) : 0.0f;")
  w:line("v.z = c + 2 < cols ? __ldg(s + 2) : 0.0f;")
  w:line("v.w = c + 3 < cols ? __ldg(s + 3) : 0.0f;")
  w:line("*reinterpret_cast<float4*>(dst + (size_t)r * ldp + c) = v;")
  w:close()
  w:close()
end

-- stream-K's first kernel, on the same grid of workers: C = beta * C over
-- the tiles whose pieces will be added atomically (zero when beta == 0).
local function emit_sk_beta_kernel(w, cfg, d)
  w:blank()
  w:comment("stream-K, launched first with the same grid: C = beta * C on the shared tiles.")
  w:line("extern \"C\" __global__ void __launch_bounds__(256)")
  w:line("%s_beta(int M, int N, int K, float alpha,", d.entry)
  w:line("    const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,")
  w:line("    float beta, float* __restrict__ C, int ldc)")
  w:open("")
  w:linec("kgen_dep_launch();", "the main kernel may start: it waits for this one before adding")
  w:linec("if (beta == 1.0f) return;", "C = 1 * C")
  w:line("const int tiles_m = (M + %d) / %d, tiles_n = (N + %d) / %d;", cfg.bm - 1, cfg.bm, cfg.bn - 1, cfg.bn)
  w:line("const long long tiles = (long long)tiles_m * tiles_n, workers = gridDim.x;")
  w:open("for (long long tile = kgen_sk_dp_tiles(tiles, workers) + blockIdx.x; tile < tiles; tile += workers)")
  emit_tile_origin(w, cfg, "tile", "tiles_m", "tiles_n")
  w:open("for (int e = threadIdx.x; e < %d; e += 256)", cfg.bm * cfg.bn)
  w:line("const int r = row0 + e / %d, c = col0 + e %% %d;", cfg.bn, cfg.bn)
  w:open("if (r < M && c < N)")
  w:line("float* p = C + (size_t)r * ldc + c;")
  w:line("*p = beta == 0.0f ? 0.0f : beta * *p;")
  w:close()
  w:close()
  w:close()
  w:close()
end

function T.render(cfg, meta)
  local d = derive(cfg)
  d.entry = plan.entry(cfg, d)
  local w = emit.writer()
  emit_header(w, cfg, d, meta)
  w:blank()
  copy.emit_helpers(w, d)
  if d.red4 then
    w:comment("C[p..p+3] += (a, b, c, d), each element atomically (sm_90 vector reduction).")
    w:open("__device__ __forceinline__ void kgen_red_add4(float* p, float a, float b, float c, float d)")
    w:line("asm volatile(\"red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\\n\" :: \"l\"(p), \"f\"(a), \"f\"(b), \"f\"(c), \"f\"(d) : \"memory\");")
    w:close()
    w:blank()
  end
  if d.sk then emit_sk_helper(w, cfg) end
  if d.overlap then
    w:comment("Programmatic dependent launch (sm_90): the beta pass lets this kernel's blocks start")
    w:comment("at once (launch_dependents); they wait for the pass to finish, and for its stores")
    w:comment("to be visible, only before they add into C. Without the launch attribute both are")
    w:comment("no-ops: the stream has already ordered the two kernels.")
    w:open("__device__ __forceinline__ void kgen_dep_launch()")
    w:line("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900")
    w:line("asm volatile(\"griddepcontrol.launch_dependents;\\n\" ::: \"memory\");")
    w:line("#endif")
    w:close()
    w:open("__device__ __forceinline__ void kgen_dep_wait()")
    w:line("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900")
    w:line("asm volatile(\"griddepcontrol.wait;\\n\" ::: \"memory\");")
    w:line("#endif")
    w:close()
    w:blank()
  end
  if d.cl then
    w:comment("Thread-block clusters (sm_90): this block's rank, a cluster-wide barrier, and a")
    w:comment("16-byte read of another block's shared memory at the address p has in ours.")
    w:open("__device__ __forceinline__ unsigned kgen_cluster_rank()")
    w:line("unsigned r;")
    w:line("asm volatile(\"mov.u32 %0, %%cluster_ctarank;\\n\" : \"=r\"(r));")
    w:line("return r;")
    w:close()
    w:open("__device__ __forceinline__ void kgen_cluster_sync()")
    w:line("asm volatile(\"barrier.cluster.arrive.release.aligned;\\nbarrier.cluster.wait.acquire.aligned;\\n\" ::: \"memory\");")
    w:close()
    w:open("__device__ __forceinline__ float4 kgen_dsmem_ld4(const float* p, int rank)")
    w:line("unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p)), r;")
    w:line("asm volatile(\"mapa.shared::cluster.u32 %0, %1, %2;\\n\" : \"=r\"(r) : \"r\"(a), \"r\"(rank));")
    w:line("float4 v;")
    w:line("asm volatile(\"ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\\n\" : \"=f\"(v.x), \"=f\"(v.y), \"=f\"(v.z), \"=f\"(v.w) : \"r\"(r) : \"memory\");")
    w:line("return v;")
    w:close()
    w:blank()
  end
  emit_kernel(w, cfg, d)
  if cfg.splitk > 1 and not d.cl then emit_beta_kernel(w, d) end
  if d.sk then emit_sk_beta_kernel(w, cfg, d) end
  if cfg.pack == 1 then emit_pack_kernel(w, d) end
  local grid = { { dim = "N", div = cfg.bn, mul = 1 }, { dim = "M", div = cfg.bm, mul = 1 },
                 { dim = "1", div = 1, mul = cfg.splitk } }
  if d.sk then -- one block per resident slot: the runtime's "P"
    grid = { { dim = "P", div = 1, mul = 1 }, { dim = "1", div = 1, mul = 1 }, { dim = "1", div = 1, mul = 1 } }
  end
  local result = {
    source = w:text(),
    entry = d.entry,
    block = { d.threads, 1, 1 },
    grid = grid,
    smem_static = d.dynamic and 0 or d.smem,
    smem_dynamic = d.dynamic and d.smem or 0,
    requires = {
      m_multiple = cfg.bounds == 1 and 1 or cfg.bm,
      n_multiple = cfg.bounds == 1 and 1 or cfg.bn,
      k_multiple = cfg.bounds == 1 and 1 or cfg.bk,
      -- pack = 1: any lda, ldb and float-aligned pointers; the runtime packs
      ld_multiple = cfg.pack == 1 and 1 or cfg.vec,
      align = cfg.pack == 1 and 4 or 4 * cfg.vec,
    },
    layout = cfg.layout,
  }
  if cfg.pack == 1 then
    result.pack = { entry = d.entry .. "_pack", multiple = 4 }
  end
  if cfg.splitk > 1 and not d.cl then
    result.pre = {
      entry = d.entry .. "_beta",
      block = { 128, 1, 1 },
      overlap = true,
      grid = { { dim = "N", div = 128, mul = 1 }, { dim = "M", div = 64, mul = 1 }, { dim = "1", div = 1, mul = 1 } },
      smem_static = 0, smem_dynamic = 0,
      layout = cfg.layout,
    }
  elseif d.sk then
    result.pre = {
      entry = d.entry .. "_beta",
      block = { 256, 1, 1 },
      overlap = true,
      grid = grid,
      smem_static = 0, smem_dynamic = 0,
      layout = cfg.layout,
    }
  end
  return result
end

-- Every load and store statement with its addresses, for kgen explain
-- (lib/warp_access.lua says how).
function T.accesses(cfg, shape)
  return access.list(cfg, derive(cfg), shape)
end

return T
