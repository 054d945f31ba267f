-- The plan of a matmul_warp kernel: everything derived from a configuration,
-- computed once and shared by check, render (matmul_warp.lua, lib/warp/*)
-- and accesses (lib/warp/access), so that the analysis mirrors the code.

local emit = require "lib.emit"

local M = {}

M.STATIC_SMEM_LIMIT = 48 * 1024 -- larger buffers use dynamic shared memory

-- a * b as text, folding 0 and 1; a is parenthesised when it is a sum.
function M.mul(a, b)
  if a == 0 or a == "0" or b == 0 or b == "0" then return "0" end
  a = tostring(a)
  if a:find("[+-]") then a = "(" .. a .. ")" end
  return emit.mul(a, b)
end

local function ceil_div(a, b) return (a + b - 1) // b end

-- Largest of `widths` (descending) that divides every further argument.
local function widest(widths, ...)
  for _, w in ipairs(widths) do
    local ok = true
    for _, x in ipairs({ ... }) do
      if x % w ~= 0 then ok = false end
    end
    if ok then return w end
  end
  return 1
end

-- Largest of 4, 2, 1 that divides every argument (a vector width).
function M.vwidth(...) return widest({ 4, 2, 1 }, ...) end

-- The two operands. `outer` is an operand's axis other than K (m for A, n
-- for B). gcont: global memory is contiguous along outer (else along k);
-- scont: shared memory is contiguous along outer (else along k). A copy is
-- direct when the two agree (vector in, vector out) and transposing
-- otherwise. Copies move `cvec` floats each, along the global contiguous
-- axis; a transposing copy through cp.async moves single floats (cvec = 1),
-- grouped so that each warp instruction reads whole 32-byte sectors (chunks
-- of `chunk` floats along the contiguous axis, then lines, then chunks).
local function operands(cfg, d)
  local A = { name = "A", ptr = "A", ld = "lda", smem = "As", p = "a", ext = cfg.bm, origin = "row0",
              limit = "M", pname = "bm", gcont = d.a_trans, scont = cfg.at == 1 }
  local B = { name = "B", ptr = "B", ld = "ldb", smem = "Bs", p = "b", ext = cfg.bn, origin = "col0",
              limit = "N", pname = "bn", gcont = not d.b_trans, scont = cfg.bt == 0 }
  local base = 0
  for _, op in ipairs({ A, B }) do
    op.srows = op.scont and cfg.bk or op.ext
    op.stride = (op.scont and op.ext or cfg.bk) + cfg.pad
    op.floats = ceil_div(op.srows * op.stride, 4) * 4
    op.base = base
    base = base + op.floats
    op.direct = op.gcont == op.scont
    op.cont_ext = op.gcont and op.ext or cfg.bk
    op.line_ext = op.gcont and cfg.bk or op.ext
    op.cont_name = op.gcont and op.pname or "bk"
    -- ba = 1: B through cp.async inside the register-prefetch pipeline
    op.async = d.async or (op.p == "b" and cfg.ba == 1)
    if op.async and not op.direct then
      op.cvec = 1
      op.chunk = widest({ 8, 4, 2, 1 }, op.cont_ext)
    else
      op.cvec = cfg.vec
    end
    op.vpl = op.cont_ext // op.cvec
    op.count = op.line_ext * op.vpl
    op.per_thread = ceil_div(op.count, d.threads)
    op.ragged = op.count % d.threads ~= 0
    -- vector stores into shared memory need aligned rows
    op.svec = op.direct and op.stride % op.cvec == 0 and op.cvec or 1
  end
  return A, B, base
end

-- Everything derived from a configuration (after check's divisibility rules).
function M.derive(cfg)
  local d = {}
  d.lm = 32 // cfg.ln
  d.warps_m, d.warps_n = cfg.bm // cfg.wm, cfg.bn // cfg.wn
  -- wk groups of warps, each covering the whole tile of C, split every
  -- tile of K between them (kslice values of k each); the copies use all
  -- the block's threads
  d.tile_warps = d.warps_m * d.warps_n
  d.tile_threads = 32 * d.tile_warps
  d.threads = d.tile_threads * cfg.wk
  d.kslice = cfg.bk // cfg.wk
  d.pass_m, d.pass_n = d.lm * cfg.tm, cfg.ln * cfg.tn
  d.sub_m, d.sub_n = cfg.wm // d.pass_m, cfg.wn // d.pass_n
  d.rows, d.cols = d.sub_m * cfg.tm, d.sub_n * cfg.tn
  d.a_trans = cfg.layout:sub(1, 1) == "t"
  d.b_trans = cfg.layout:sub(2, 2) == "t"
  d.async = cfg.stages >= 2
  d.nbuf = d.async and cfg.stages or 2
  d.A, d.B, d.stage_floats = operands(cfg, d)
  d.A.fvec = d.A.scont and M.vwidth(cfg.tm, d.A.stride) or nil
  d.B.fvec = d.B.scont and M.vwidth(cfg.tn, d.B.stride) or nil
  -- values of k per fragment read: 1 when both operands are read along
  -- outer, else a vector along k
  if d.A.scont and d.B.scont then
    d.kg = 1
  else
    d.kg = M.vwidth(d.kslice, d.A.scont and 4 or d.A.stride, d.B.scont and 4 or d.B.stride)
  end
  -- floats per store of C; split-K and stream-K add 4 at once with red=4
  -- (sm_90's vector reductions)
  d.sk = cfg.sk > 0
  d.red4 = (cfg.splitk > 1 or d.sk) and cfg.red == 4
  d.cv = (cfg.splitk == 1 or d.red4) and M.vwidth(cfg.tn) or 1
  -- skw = 1 (stream-K, red = 4): a workspace variant of the main kernel
  -- (and a post kernel), launched where C's rows are not 16-byte granular:
  -- the shared tiles' pieces add into the workspace W in 16-byte groups,
  -- the post kernel adds W to C
  d.skw = cfg.skw == 1
  d.smem = 4 * d.nbuf * d.stage_floats
  -- cluster split-K parks a bm x bn partial tile in the same shared memory
  d.cl = cfg.cl == 1
  if d.cl then d.smem = math.max(d.smem, 4 * cfg.bm * cfg.bn) end
  -- a beta pass (split-K through atomics, stream-K) that the main kernel
  -- may overlap: it waits for the pass only before adding into C
  d.overlap = (cfg.splitk > 1 and not d.cl) or d.sk
  -- with wk > 1 groups 1 .. wk-1 park their partial tiles there too, in
  -- vectors of pv floats (thread-major: conflict-free)
  d.pv = M.vwidth(d.cols)
  d.park_floats = (cfg.wk - 1) * cfg.bm * cfg.bn
  d.smem = math.max(d.smem, 4 * d.park_floats)
  -- cst = 1: each warp stages its accumulators in shared memory, pass_m
  -- rows of cst_stride floats at a time, to store C's rows that are not
  -- 16-byte vectors with consecutive addresses (lib/warp/store.lua's staged)
  if cfg.cst == 1 then
    d.cst_stride = M.staging_stride(cfg, d)
    d.smem = math.max(d.smem, 4 * d.tile_warps * d.pass_m * d.cst_stride)
  end
  d.dynamic = d.smem > M.STATIC_SMEM_LIMIT
  d.loads_a, d.loads_b = cfg.bm * cfg.bk, cfg.bk * cfg.bn
  d.flops = 2 * cfg.bm * cfg.bn * cfg.bk
  d.cgma = d.flops / (d.loads_a + d.loads_b)
  return d
end

-- cst = 1: the row stride (floats, a multiple of 4) of a warp's staged tile
-- of C: wn and the least padding with which the lanes' 16-byte writes of
-- their runs (one per row of the patch and run: 8 lanes a phase) meet no
-- bank twice in a phase; the reads, 32 consecutive floats, meet none at
-- any stride.
function M.staging_stride(cfg, d)
  local best, best_conflicts
  for pad = 0, 28, 4 do
    local stride, worst = cfg.wn + pad, 1
    for phase = 0, 3 do
      local hits = {}
      for l = 8 * phase, 8 * phase + 7 do
        local row, col = (l // cfg.ln) * cfg.tm, (l % cfg.ln) * cfg.tn
        for e = 0, 3 do
          local bank = (row * stride + col + e) % 32
          hits[bank] = (hits[bank] or 0) + 1
          if hits[bank] > worst then worst = hits[bank] end
        end
      end
    end
    if best == nil or worst < best_conflicts then best, best_conflicts = stride, worst end
    if worst == 1 then break end
  end
  return best
end

-- Copy i of thread tid: vector index idx = tid + i * threads, its line (the
-- non-contiguous axis) and offset c along the contiguous axis, as numbers
-- (nil when the thread copies nothing in round i) ...
function M.copy_coords(d, op, tid, i)
  local idx = tid + i * d.threads
  if idx >= op.count then return nil end
  if op.chunk then
    local r = idx // op.chunk
    return r % op.line_ext, (r // op.line_ext) * op.chunk + idx % op.chunk
  end
  return idx // op.vpl, (idx % op.vpl) * op.cvec
end

-- ... and as C expressions of `idx` (a variable name or "tid + 256").
function M.copy_exprs(op, idx)
  local p = idx:find(" ") and "(" .. idx .. ")" or idx
  if op.chunk then
    if op.chunk == op.cont_ext then
      return string.format("%s / %d", p, op.chunk), string.format("%s %% %d", p, op.chunk)
    end
    return string.format("%s / %d %% %d", p, op.chunk, op.line_ext),
      string.format("%s / %d * %d + %s %% %d", p, op.chunk * op.line_ext, op.chunk, p, op.chunk)
  end
  if op.vpl == 1 then return idx, "0" end
  return string.format("%s / %d", p, op.vpl), M.mul(string.format("%s %% %d", p, op.vpl), op.cvec)
end

-- (outer, k) of a copy's (line, c).
function M.outer_k(op, l, c)
  if op.gcont then return c, l end
  return l, c
end

-- Shared-memory offset (floats, within the operand's buffer) of element (outer o, k).
function M.smem_off(op, o, k)
  if op.scont then return k * op.stride + o end
  return o * op.stride + k
end

return M
