-- matmul_warp's memory accesses, for analysis (kgen explain). Each entry
-- mirrors one load or store statement of the generated kernel for block
-- (0, 0), the first tile of K and shared buffer 0: addr(tid, i) gives the
-- float offset that linear thread `tid` touches in unrolled repetition i
-- (shared: from the start of shared memory; global: from the matrix's base
-- for `shape` = { M, N, K, lda, ldb, ldc }), or nil when the thread does
-- not execute it. The addresses come from lib/warp/plan, like the code's.

local plan = require "lib.warp.plan"

local M = {}

-- The copies of one operand: the global read, then the shared write(s).
local function copies(list, cfg, d, op, shape)
  local lim = op.limit == "M" and shape.M or shape.N
  local ld = op.ld == "lda" and shape.lda or shape.ldb
  local function element(tid, i, e)
    local l, c = plan.copy_coords(d, op, tid, i)
    if l == nil then return nil end
    return plan.outer_k(op, l, c + e)
  end
  list[#list + 1] = {
    name = string.format("%s %s tile from %s", op.async and "cp.async" or "load", op.name, op.ptr),
    space = "global", op = "load", array = op.ptr, width = 4 * op.cvec, iters = op.per_thread,
    addr = function(tid, i)
      local o, k = element(tid, i, 0)
      if o == nil or k >= shape.K then return nil end
      if op.gcont then
        if o >= lim then
          if cfg.bounds == 0 or op.cvec > 1 then return nil end -- not read
          o = lim - 1                                           -- clamped
        end
        return k * ld + o
      end
      return math.min(o, lim - 1) * ld + k -- rows past the edge are clamped
    end,
  }
  local stores = op.svec > 1 and 1 or op.cvec
  for e = 0, stores - 1 do
    list[#list + 1] = {
      name = string.format("store %s tile to %s%s", op.name, op.smem,
        stores > 1 and string.format(" (element %d)", e) or ""),
      space = "shared", op = "store", array = op.smem, width = 4 * (op.svec > 1 and op.cvec or 1),
      iters = op.per_thread,
      addr = function(tid, i)
        local o, k = element(tid, i, e)
        if o == nil then return nil end
        return op.base + plan.smem_off(op, o, k)
      end,
    }
  end
end

-- This lane's first row (A) and column (B) in the block tile, and its
-- group's first k in a tile of K (wk > 1).
local function offsets(cfg, d, tid)
  local warp, lane = (tid // 32) % d.tile_warps, tid % 32
  return (warp // d.warps_n) * cfg.wm + (lane // cfg.ln) * cfg.tm,
    (warp % d.warps_n) * cfg.wn + (lane % cfg.ln) * cfg.tn,
    (tid // d.tile_threads) * d.kslice
end

-- The fragment reads of the inner loop (its first group of k values).
local function fragments(list, cfg, d, op, t, sub, pass, which)
  -- each entry covers one group of kg values of k: the loop runs bk / kg times a phase
  local entry = { name = string.format("load %s fragment from %s (inner loop)", op.name, op.smem),
                  space = "shared", op = "load", array = op.smem, per_phase = d.kslice // d.kg }
  if op.scont then
    local chunks = t // op.fvec
    entry.width, entry.iters = 4 * op.fvec, d.kg * sub * chunks
    entry.addr = function(tid, it)
      local q, rest = it // (sub * chunks), it % (sub * chunks)
      local off = select(which, offsets(cfg, d, tid))
      local kq = select(3, offsets(cfg, d, tid))
      return op.base + (kq + q) * op.stride + off + (rest // chunks) * pass + (rest % chunks) * op.fvec
    end
  else
    entry.width, entry.iters = 4 * d.kg, sub * t
    entry.addr = function(tid, it)
      local off = select(which, offsets(cfg, d, tid))
      local kq = select(3, offsets(cfg, d, tid))
      return op.base + (off + (it // t) * pass + it % t) * op.stride + kq
    end
  end
  list[#list + 1] = entry
end

function M.list(cfg, d, shape)
  local list = {}
  copies(list, cfg, d, d.A, shape)
  copies(list, cfg, d, d.B, shape)
  fragments(list, cfg, d, d.A, cfg.tm, d.sub_m, d.pass_m, 1)
  fragments(list, cfg, d, d.B, cfg.tn, d.sub_n, d.pass_n, 2)
  if cfg.wk > 1 then -- the groups' partial tiles, parked and summed (thread-major vectors)
    local per = d.rows * d.cols // d.pv
    local function slot(g, tid, it) return ((g * per + it) * d.tile_threads + tid % d.tile_threads) * d.pv end
    list[#list + 1] = {
      name = "park a partial tile in shared memory (groups 1.. along K)", space = "shared", op = "store",
      array = "smem", width = 4 * d.pv, iters = per,
      addr = function(tid, it)
        local g = tid // d.tile_threads
        if g == 0 then return nil end
        return slot(g - 1, tid, it)
      end,
    }
    list[#list + 1] = {
      name = "sum the parked partial tiles (group 0)", space = "shared", op = "load",
      array = "smem", width = 4 * d.pv, iters = per * (cfg.wk - 1),
      addr = function(tid, it)
        if tid >= d.tile_threads then return nil end
        return slot(it // per, tid, it % per)
      end,
    }
  end
  -- C as the kernel finds it (its c_vec test): vectors of cv floats where
  -- ldc allows them (C itself sits 256-byte aligned here), else single
  -- floats; split-K's atomics with copies under 16 bytes then add in
  -- 16-byte groups realigned to each row's boundaries (store.lua's
  -- realigned_red4), the row segment's first s and last 4 - s floats one
  -- by one (not listed).
  local atomic = cfg.splitk > 1 and cfg.cl ~= 1
  local cv = (d.cv > 1 and shape.ldc % d.cv ~= 0) and 1 or d.cv
  local realign = atomic and d.cv == 4 and cfg.vec < 4 and cv == 1
  if cfg.cst == 1 and not atomic and cv == 1 then
    -- cst = 1 (store.lua's staged): each warp's tile through its rows of
    -- shared memory, pass_m rows at a time, then C row by row, 32 lanes on
    -- consecutive floats
    local stride, wn, prow = d.cst_stride, cfg.wn, d.pass_m
    local per_pass = prow * wn // 32
    list[#list + 1] = {
      name = "stage C tile in shared memory", space = "shared", op = "store", array = "smem", width = 16,
      iters = d.rows * d.cols // 4,
      addr = function(tid, it)
        local warp, lane = tid // 32, tid % 32
        local i, j = it // (d.cols // 4), (it % (d.cols // 4)) * 4
        local sr = (lane // cfg.ln) * cfg.tm + i % cfg.tm
        local sc = (lane % cfg.ln) * cfg.tn + (j // cfg.tn) * d.pass_n + j % cfg.tn
        return warp * prow * stride + sr * stride + sc
      end,
    }
    local function at(tid, t)
      local warp, lane = tid // 32, tid % 32
      local f = lane + 32 * (t % per_pass)
      return warp, t // per_pass, f // wn, f % wn
    end
    list[#list + 1] = {
      name = "read staged C tile", space = "shared", op = "load", array = "smem", width = 4, iters = d.sub_m * per_pass,
      addr = function(tid, t)
        local warp, _, rr, cc = at(tid, t)
        return warp * prow * stride + rr * stride + cc
      end,
    }
    for _, kind in ipairs({ "load", "store" }) do
      list[#list + 1] = {
        name = kind == "load" and "load C (beta != 0)" or "store C", space = "global", op = kind, array = "C",
        width = 4, iters = d.sub_m * per_pass,
        addr = function(tid, t)
          local warp, pass, rr, cc = at(tid, t)
          local r, c = (warp // d.warps_n) * cfg.wm + pass * prow + rr, (warp % d.warps_n) * wn + cc
          if r >= shape.M or c >= shape.N then return nil end
          return r * shape.ldc + c
        end,
      }
    end
    return list
  end
  local kinds = atomic and { "store" } or { "load", "store" }
  if cfg.cva == 1 and d.cv == 4 and cv == 1 and not realign then
    -- cva = 1 (store.lua's pieces): each run of 4 floats by its alignment s
    -- (floats past a 16-byte boundary): s = 0 one 16-byte piece, s = 2 two
    -- 8-byte ones, s odd a float, 8 bytes and a float; a run past N one
    -- float at a time. Three entries per kind, by the pieces' width: a
    -- "request" of one then holds lanes of different instructions (s = 2's
    -- first 8 bytes beside s odd's middle ones), so its sector count is
    -- approximate; the floats each entry touches are exact.
    local runs = d.cols // 4
    local function run_of(tid, it)
      if tid >= d.tile_threads then return nil end -- only group 0 stores
      local a_off, b_off = offsets(cfg, d, tid)
      local i, j = it // runs, (it % runs) * 4
      local r = a_off + (i // cfg.tm) * d.pass_m + i % cfg.tm
      local c = b_off + (j // cfg.tn) * d.pass_n + j % cfg.tn
      if r >= shape.M or c >= shape.N then return nil end
      return r * shape.ldc + c, (r * shape.ldc + c) % 4, c + 4 <= shape.N, c
    end
    -- the piece's first float within the run, or nil: (s, whole run in N, piece number)
    local pieces = {
      { width = 16, per = 1, at = function(s, whole) return whole and s == 0 and 0 or nil end },
      { width = 8, per = 2, at = function(s, whole, p)
        if not whole or s == 0 then return nil end
        if s == 2 then return 2 * p end
        return p == 0 and 1 or nil
      end },
      { width = 4, per = 4, at = function(s, whole, e, c)
        if not whole then return c + e < shape.N and e or nil end
        return s % 2 == 1 and (e == 0 or e == 3) and e or nil
      end },
    }
    for _, kind in ipairs(kinds) do
      for _, pc in ipairs(pieces) do
        list[#list + 1] = {
          name = string.format("%s: %d-byte pieces", atomic and "atomicAdd to C"
            or (kind == "load" and "load C (beta != 0)" or "store C"), pc.width),
          space = "global", op = kind, array = "C", width = pc.width, iters = d.rows * runs * pc.per,
          addr = function(tid, it)
            local base, s, whole, c = run_of(tid, it // pc.per)
            if base == nil then return nil end
            local e = pc.at(s, whole, it % pc.per, c)
            return e and base + e or nil
          end,
        }
      end
    end
    return list
  end
  local per_row = realign and d.cols // 4 or d.cols // cv
  for _, kind in ipairs(kinds) do
    list[#list + 1] = {
      name = atomic and (realign and "atomicAdd to C (realigned)" or "atomicAdd to C")
        or (kind == "load" and "load C (beta != 0)" or "store C"),
      space = "global", op = kind, array = "C", width = 4 * (realign and 4 or cv), iters = d.rows * per_row,
      addr = function(tid, it)
        if tid >= d.tile_threads then return nil end -- only group 0 stores
        local a_off, b_off = offsets(cfg, d, tid)
        local i = it // per_row
        local r = a_off + (i // cfg.tm) * d.pass_m + i % cfg.tm
        if r >= shape.M then return nil end
        if realign then
          local q, t = (it % per_row) // (cfg.tn // 4), (it % per_row) % (cfg.tn // 4)
          local s = (4 - (r * shape.ldc) % 4) % 4
          local col = b_off + q * d.pass_n + s + 4 * t
          local tail = q == d.sub_n - 1 and t == cfg.tn // 4 - 1 and (tid % 32) % cfg.ln == cfg.ln - 1 and s ~= 0
          if tail or col + 4 > shape.N then return nil end -- single additions
          return r * shape.ldc + col
        end
        local j = (it % per_row) * cv
        local c = b_off + (j // cfg.tn) * d.pass_n + j % cfg.tn
        if c >= shape.N then return nil end
        return r * shape.ldc + c
      end,
    }
  end
  return list
end

return M
