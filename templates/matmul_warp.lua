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
-- whole 32-byte sectors (lib/warp/plan.lua).
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
-- piece before its whole tiles). skw = 1 adds a variant that the runtime
-- runs where C's rows are not 16-byte granular: the shared tiles' pieces
-- add into a workspace in 16-byte reductions and a post kernel adds it
-- into C (there red = 4 would add one float at a time). xb = 1 (register
-- path) loads the next tile's first fragments right after the barrier, behind the current
-- tile's last step of FFMAs. cc = 1 makes single-float copies
-- share one source pointer per line (lib/warp/copy.lua); walk = 1, 2 then
-- advance those pointers by a tile of K (bk floats, or bk rows of ld) in the
-- K loop instead of rebuilding each copy's address from k. spread = 1
-- (cp.async ring, stages >= 3) issues the next tile's copies a few before
-- each step of k's fragment reads instead of in one burst after the
-- barrier (lib/warp/ring.lua). raster > 1 walks the blocks in groups of
-- `raster` block rows, so that the blocks running together share tiles of A
-- and B in L2. minb > 1 caps the registers (__launch_bounds__' second argument) so
-- that minb blocks fit an SM.
--
-- What each technique bought on an H200, and why: docs/performance.md.
--
-- The code: this file declares the parameters, the tuner's space, check()
-- and resources(), and assembles render() from lib/warp/: plan (everything
-- derived from a configuration), header (the source's opening comment), ptx
-- (inline-PTX helpers), schedule (which tile of C a block computes and which
-- tiles of K, in which order), kernel (the main kernel's body), ring and
-- prefetch (the K loop's two pipelines: cp.async stages, register
-- prefetch), compute (the multiplication of one tile), copy (global ->
-- shared copies), store (the epilogues), side (the beta passes and the
-- packing kernel) and access (accesses() for kgen explain).

local params = require "lib.params"
local emit = require "lib.emit"
local plan = require "lib.warp.plan"
local copy = require "lib.warp.copy"
local access = require "lib.warp.access"
local header = require "lib.warp.header"
local ptx = require "lib.warp.ptx"
local schedule = require "lib.warp.schedule"
local kernel = require "lib.warp.kernel"
local side = require "lib.warp.side"

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
    doc = "split-K and stream-K: floats per atomic addition into C (4: sm_90 red.global.add.v4.f32; needs tn % 4 == 0; with splitk > 1 and vec < 4, where C's rows are not 16-byte aligned, each row's additions are regrouped at its 16-byte boundaries through warp shuffles)" },
  { name = "skw", type = "int", default = 0, values = { 0, 1 }, omit_default = true,
    doc = "stream-K with red=4: 1 gives the kernel a variant that the runtime launches where C's rows are not whole 16-byte vectors (ldc or the pointer): the shared tiles' pieces add into a zeroed workspace in 16-byte reductions and a post kernel adds it into C, instead of one float at a time into C" },
  { name = "cst", type = "int", default = 0, values = { 0, 1 }, omit_default = true,
    doc = "1: where C's rows are not whole 16-byte vectors (ldc or the pointer), the store of C (C = alpha * acc + beta * C) goes through shared memory after the K loop, so that each warp's stores cover consecutive floats of a row; 0: each lane stores its run of tn floats one float at a time" },
  { name = "cva", type = "int", default = 0, values = { 0, 1 }, omit_default = true,
    doc = "1: where C's rows are not whole 16-byte vectors (ldc or the pointer), a lane's run of 4 floats goes to C in the widest pieces its address allows (one 16-byte vector, two 8-byte ones, or a float, an 8-byte vector and a float), in the stores and reads of C and in red=4's atomic additions; 0: one float at a time" },
  { name = "walk", type = "int", default = 0, values = { 0, 1, 2 }, omit_default = true,
    doc = "cp.async single-float copies with cc=1: 1 the K loop's source pointers advance by a step each tile (bk, or bk * ld along a contiguous M or N) instead of being rebuilt from k; 2 as 1, and a copy that reads nothing keeps its pointer (cp.async reads no byte of it) instead of the operand's base" },
  { name = "spread", type = "int", default = 0, values = { 0, 1 }, omit_default = true,
    doc = "cp.async ring (stages >= 3, pred=1, mid=0): 1 issues the next tile's copies a few at a time, before each step of k's fragment reads, instead of all at once after the barrier, so that their address arithmetic and issue interleave with the FFMAs" },
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
-- and lane shapes tied or lost: docs/performance.md); --space puts them back.
-- walk (left out: 0) made the 64 x 64 single-float kernel 2-3 % faster on
-- geometric mean at nine shapes (up to 15 % in tn), but the 128 x 128 and 256 x 64
-- ones 0.5-3.5 % slower (H200, docs/performance.md row 112); with spread = 1
-- (left out: 0) and 3 stages, the 128 x 128 one 2-7 % faster (row 113). The
-- analytic model has no term for the copies' address work or their schedule,
-- so in the space they would only add tied twins: the catalogue's build
-- times them (KGEN_CATALOGUE_ADD), and kgen tune's auto strategy adds the
-- catalogue's kernels that have them to its candidates (autotune/README.md).
-- So does cva (left out: 0): C's odd rows in pieces by their alignment made
-- kernels 0.38-0.98x as slow there and left 16-byte rows within 1-4 % (row
-- 116); the model counts C's single stores but not the pieces.
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
  xb = { 0, 1 },
  raster = { 1, 8 },
  splitk = { 1, 2, 4, 8, 64 },
  cl = { 0, 1 },
  cc = { 0, 1 },
  sk = { 0, 1, 2 },
  red = { 1, 4 },
  skw = { 0, 1 },
  minb = { 1, 2 },
  bounds = { 1 },
}

-- More of the space: each group replaces the lists of the parameters it
-- names and is walked after the space (what an earlier walk had is not
-- added twice; --space walks its own space alone). Small tiles, for
-- products whose C has too few 64 x 64 tiles to fill the GPU even cut
-- along K: a 127 x 129 x 131 product ran 4-9 % faster on 32 x 32 tiles
-- than on any 64 x 64 kernel of the space, in three of four layouts
-- (H200, docs/performance.md). Tiles 16 wide, for products whose M or N
-- is 9 to 16 (a few vectors at once over a large operand, too many for
-- matmul_skinny's sums per thread, too few for 32-wide tiles, which waste
-- half their multiply-adds): in nt a 128 x 16 tile ran 14345 x 11 x 5907
-- 1.52x and a 16 x 128 one 12 x 8192 x 4096 1.08x faster than the best of
-- kgen tune's default search in the space before them (H200,
-- docs/performance.md row 78).
T.space_groups = {
  { bm = { 32 }, bn = { 32, 64 }, wm = { 16, 32 }, tm = { 2, 4 }, ba = { 0 }, xb = { 0 }, raster = { 1 } },
  { bn = { 16 }, wn = { 16 }, ln = { 4 }, tn = { 2, 4 }, wm = { 32, 64 }, raster = { 1 } },
  { bm = { 16 }, wm = { 16 }, tm = { 2, 4 }, bn = { 128, 256 }, raster = { 1 } },
}

local MAX_OUTPUTS = 128 -- accumulators per thread the register file can hold
local derive = plan.derive

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
  if cfg.skw == 1 and (cfg.sk == 0 or cfg.red ~= 4) then
    return fail("skw=1 is stream-K's workspace for its 16-byte additions: it needs sk=1 or 2 and red=4 (got sk=%d red=%d)",
      cfg.sk, cfg.red)
  end
  if cfg.splitk == 1 and cfg.sk == 0 and cfg.red ~= 1 then
    return fail("red=%d sets how split-K or stream-K adds into C; with splitk=1 and sk=0 nothing is added: use red=1", cfg.red)
  end
  if cfg.red == 4 and (cfg.tn % 4 ~= 0 or limits.sm < 90) then
    return fail("red=4 adds 4 consecutive floats of a lane's patch at once: it needs tn %% 4 == 0 (tn=%d) and sm_90 or newer (target %s)",
      cfg.tn, limits.name)
  end
  if cfg.cva == 1 and cfg.tn % 4 ~= 0 then
    return fail("cva=1 writes a lane's runs of 4 floats of C in pieces by their alignment: it needs tn %% 4 == 0 (tn=%d)",
      cfg.tn)
  end
  if cfg.cst == 1 and (cfg.splitk > 1 or cfg.wk > 1 or cfg.tn % 4 ~= 0) then
    return fail("cst=1 stores C's rows that are not 16-byte vectors through shared memory, a warp's sub-tile row at a time: it needs splitk=1, wk=1 and tn %% 4 == 0 (splitk=%d, wk=%d, tn=%d)",
      cfg.splitk, cfg.wk, cfg.tn)
  end
  -- cva = 1 where none of C's writes would be pieced: a twin of the kernel without it
  if cfg.cva == 1 and cfg.splitk > 1 and (cfg.red ~= 4 or cfg.vec < 4) then
    return fail("cva=1 changes nothing here: split-K only adds into C, and with %s; use cva=0",
      cfg.red ~= 4 and string.format("red=%d (cl=%d) its additions are single floats or sums in shared memory", cfg.red, cfg.cl)
        or string.format("vec=%d and red=4 it regroups them at each row's 16-byte boundaries already", cfg.vec))
  end
  if cfg.cva == 1 and cfg.cst == 1 and (cfg.sk == 0 or cfg.skw == 1) then
    return fail("cva=1 changes nothing here: cst=1 stages the stores of C's rows that are not 16-byte vectors, and %s; use cva=0",
      cfg.sk == 0 and "without stream-K nothing is added into C" or "with skw=1 stream-K's pieces go to the workspace there")
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
  if cfg.spread == 1 and (not d.async or cfg.stages < 3 or cfg.pred ~= 1 or cfg.mid ~= 0) then
    return fail("spread=1 issues the next tiles' cp.async copies across the steps of k: it needs stages >= 3 (with 2 the next trip waits at once for the copies of this one's last steps), pred=1 (copies past the last tile predicated, not branched around) and mid=0 (stages=%d, pred=%d, mid=%d)",
      cfg.stages, cfg.pred, cfg.mid)
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
  if cfg.walk > 0 and not (d.async and cfg.cc == 1 and (copy.compact(cfg, d, d.A) or copy.compact(cfg, d, d.B))) then
    return fail("walk=%d advances the shared source pointers of single-float cp.async copies (cc=1, stages >= 2): there are none here (cc=%d, stages=%d, vec=%d); use walk=0",
      cfg.walk, cfg.cc, cfg.stages, cfg.vec)
  end
  return true
end

-- Registers a thread needs (no cap): the accumulators, two k steps of
-- fragments (the next read while the current is multiplied), the copies a
-- register prefetch holds across the multiplication, and about 32 for
-- addresses, indices and loop state. An estimate for the model before
-- compiling; ptxas's count replaces it once known.
local function estimate_registers(cfg, d)
  local held = 0
  if not d.async then
    for _, op in ipairs({ d.A, d.B }) do
      if not op.async then held = held + op.per_thread * op.cvec end
    end
  end
  return d.rows * d.cols + 2 * (d.rows + d.cols) + held + 32
end

function T.resources(cfg)
  local d = derive(cfg)
  local atomic = cfg.splitk > 1 and not d.cl or d.sk
  -- shared-memory reads per thread per tile of K: fragments of fvec floats
  -- along m (n) per value of k, or of kg values of k per row (column)
  local function frag(op, t) return op.scont and t // op.fvec * d.kslice or t * (d.kslice // d.kg) end
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
    -- For the tuner's model (templates/README.md, "resources() for the model")
    layout = cfg.layout,
    registers = estimate_registers(cfg, d),
    min_blocks = cfg.minb,               -- __launch_bounds__' second argument
    stages = cfg.stages,                 -- tiles of K in flight (register prefetch: 1)
    async_copy = d.async and 1 or 0,     -- 1: cp.async ring; 0: copies through registers
    copy_a = d.A.cvec,                   -- floats per global load instruction
    copy_b = d.B.cvec,
    smem_reads = (d.rows + d.cols) * d.kslice, -- floats per thread per tile of K
    smem_loads = frag(d.A, d.rows) + frag(d.B, d.cols), -- the instructions that read them
    raster = cfg.raster,                 -- block rows walked together (L2 reuse)
    kslices = cfg.splitk,                -- slices of K per tile of C (grid z)
    combine = d.cl and "cluster" or atomic and "atomic" or "store",
    atomic_width = d.red4 and 4 or 1,    -- floats per atomic addition into C
    beta_pass = (cfg.splitk > 1 and not d.cl) and "all" or d.sk and "spread" or "none",
    persistent = d.sk and 1 or 0,        -- grid: SMs x resident blocks, looping over tiles
    spread_waves = d.sk and (cfg.sk == 1 and 2 or 1) or 0, -- trailing waves of tiles cut along K
    pack = cfg.pack == 1 and 4 or 0,     -- operands whose rows are not multiples of this are copied first
  }
end

---------------------------------------------------------------------------
-- Rendering: the header, the PTX helpers the kernel uses, the main kernel,
-- then the side kernels (lib/warp/*.lua)
---------------------------------------------------------------------------

-- The kernel's name: its layout and block tile, readable in a profiler,
-- then the configuration's id (lib/params.lua), which makes it unique; at
-- most 40 characters. The side kernels add _beta and _pack.
local function entry_name(cfg)
  return string.format("kgen_mmw_%s_%dx%dx%d_%s", cfg.layout, cfg.bm, cfg.bn, cfg.bk, params.id(T.params, cfg))
end

function T.render(cfg, meta)
  local d = derive(cfg)
  d.entry = entry_name(cfg)
  local w = emit.writer()
  header.emit(w, T, cfg, d, meta)
  w:blank()
  ptx.cp_async(w, d)
  if d.red4 then ptx.red_add4(w, cfg.cva == 1) end
  if d.sk then schedule.sk_helper(w, cfg) end
  if d.overlap then ptx.dep_launch(w) end
  if d.cl then ptx.cluster(w) end
  kernel.emit(w, cfg, d)
  if d.skw then
    w:blank()
    w:comment("stream-K's workspace variant, launched instead where C's rows are not 16-byte")
    w:comment("granular: the shared tiles' pieces add into W in 16-byte groups.")
    kernel.emit(w, cfg, d, true)
  end
  if cfg.splitk > 1 and not d.cl then side.beta(w, d) end
  if d.sk then side.sk_beta(w, cfg, d) end
  if d.skw then side.sk_post(w, cfg, d) end
  if cfg.pack == 1 then side.pack(w, d) end
  local grid = { { dim = "N", div = cfg.bn, mul = 1 }, { dim = "M", div = cfg.bm, mul = 1 },
                 { dim = "1", div = 1, mul = cfg.splitk } }
  if d.sk then -- one block per resident slot: the runtime's "P"
    grid = { { dim = "P", div = 1, mul = 1 }, { dim = "1", div = 1, mul = 1 }, { dim = "1", div = 1, mul = 1 } }
  end
  local vectored = cfg.pack == 0 and cfg.vec > 1 and (d.A.cvec > 1 or d.B.cvec > 1)
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
      -- pack = 1: any lda, ldb and float-aligned pointers; the runtime packs.
      -- Else the operands copied in vectors (cvec > 1) bind; a transposing
      -- copy through cp.async moves single floats, so in some layouts only
      -- one operand binds, or none
      ld_multiple = vectored and cfg.vec or 1,
      align = vectored and 4 * cfg.vec or 4,
      vector_operand = vectored and (d.A.cvec == 1 and "B" or d.B.cvec == 1 and "A") or nil,
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
      overlap = true, waits = true,
      grid = { { dim = "N", div = 128, mul = 1 }, { dim = "M", div = 64, mul = 1 }, { dim = "1", div = 1, mul = 1 } },
      smem_static = 0, smem_dynamic = 0,
      layout = cfg.layout,
    }
  elseif d.sk then
    result.pre = {
      entry = d.entry .. "_beta",
      block = { 256, 1, 1 },
      overlap = true, waits = true,
      grid = grid,
      smem_static = 0, smem_dynamic = 0,
      layout = cfg.layout,
    }
  end
  if d.skw then
    -- the shared tiles: fewer than two waves of workers (sk = 1), one (sk = 2)
    result.workspace = {
      entry = d.entry .. "_ws",
      tile_m = cfg.bm, tile_n = cfg.bn, waves = cfg.sk == 1 and 2 or 1,
      post = {
        entry = d.entry .. "_post",
        block = { 256, 1, 1 },
        grid = { grid[1], { dim = "1", div = 1, mul = (cfg.bm * cfg.bn + 1023) // 1024 }, grid[3] },
        smem_static = 0, smem_dynamic = 0,
        layout = cfg.layout,
      },
    }
  end
  return result
end

-- Every load and store statement with its addresses, for kgen explain
-- (lib/warp/access.lua says how).
function T.accesses(cfg, shape)
  return access.list(cfg, derive(cfg), shape)
end

return T
