-- The ends of a tile of C: the store of the accumulators (C = alpha * acc
-- + beta * C, or an atomic addition for split-K and stream-K), the sum of
-- the warp groups' partial tiles (wk > 1) and cluster split-K's sum through
-- distributed shared memory (cl = 1).

local emit = require "lib.emit"
local copy = require "lib.warp.copy"

local M = {}

local LANES = { "x", "y", "z", "w" }
local VEC_TYPE = copy.VEC_TYPE

-- red = 4 in a split-K kernel with 4- or 8-byte copies where C's rows are
-- not 16-byte granular (ldc not a multiple of 4, or C not 16-byte
-- aligned): each row has its own alignment, so a thread's run of tn
-- columns straddles 16-byte boundaries and would take tn single atomics. Instead the additions are realigned: with s the floats from the
-- run's start to the row's next boundary (the same for every run of the
-- row: runs start at multiples of 4), a thread adds the 4-float groups that
-- start s, s + 4, ... into its run, the last taking the first s floats of
-- the next run from the lane that owns it (a shuffle: lane + 1, or for the
-- row group's last lane, its first lane's next run). Only the first s
-- floats of the warp's row segment and the last 4 - s go one by one.
-- Single atomics per row segment of wn floats: at most 4, against wn.
local function realigned_red4(w, cfg, d)
  local tn, ln, last = cfg.tn, cfg.ln, d.sub_n - 1
  local function guard_n(col) return cfg.bounds == 1 and string.format(" && %s < N", col) or "" end
  w:line("const int g = lane %% %d;", ln)
  w:linec(string.format("const int src = g == %d ? lane - %d : lane + 1;", ln - 1, ln - 1),
    "the lane whose run follows this one's in the row")
  w:line("#pragma unroll")
  w:open("for (int i = 0; i < %d; ++i)", d.rows)
  w:line("const int r = row0 + a_off + (i / %d) * %d + i %% %d;", cfg.tm, d.pass_m, cfg.tm)
  w:line("float* crow = C + (size_t)r * ldc;")
  w:linec("const int s = (int)((4 - ((reinterpret_cast<unsigned long long>(crow + col0) >> 2) & 3)) & 3);",
    "floats to the row's next 16-byte boundary")
  for q = 0, last do
    local j0 = q * tn
    w:open("")
    w:line("const int c = col0 + b_off + %d;", q * d.pass_n)
    -- the next run's first three floats (every lane takes part, in bounds or not)
    local nb = {}
    for e = 0, 2 do
      local give = q < last and string.format("g == 0 ? acc[i][%d] : acc[i][%d]", j0 + tn + e, j0 + e)
        or string.format("acc[i][%d]", j0 + e)
      nb[e] = "n" .. e
      w:line("const float n%d = __shfl_sync(0xffffffffu, %s, src);", e, give)
    end
    local function x_at(x) return x < tn and string.format("acc[i][%d]", j0 + x) or nb[x - tn] end
    w:open("if (r < M)")
    if q == 0 then
      w:comment("the row segment's first s floats: this warp's alone")
      w:open("if (g == 0)")
      for x = 0, 2 do
        w:line("if (%d < s%s) atomicAdd(&crow[c + %d], alpha * %s);", x, guard_n("c + " .. x), x, x_at(x))
      end
      w:close()
    end
    for t = 0, tn // 4 - 1 do
      local vals = {}
      for e = 0, 3 do
        local b = 4 * t + e
        vals[e] = string.format("s == 0 ? %s : s == 1 ? %s : s == 2 ? %s : %s", x_at(b), x_at(b + 1), x_at(b + 2), x_at(b + 3))
      end
      local tail = q == last and t == tn // 4 - 1
      if tail then
        w:comment("the row segment's last 4 - s floats: the next warp's run is not this warp's")
        w:open("if (g == %d && s != 0)", ln - 1)
        for x = tn - 3, tn - 1 do
          w:line("if (%d >= s + %d%s) atomicAdd(&crow[c + %d], alpha * %s);", x, tn - 4, guard_n("c + " .. x), x, x_at(x))
        end
        w:reopen("else")
      end
      w:open("")
      w:line("const int col = c + s + %d;", 4 * t)
      w:line("const float v0 = %s;", vals[0])
      w:line("const float v1 = %s;", vals[1])
      w:line("const float v2 = %s;", vals[2])
      w:line("const float v3 = %s;", vals[3])
      if cfg.bounds == 1 then
        w:open("if (col + 4 <= N)")
        w:line("kgen_red_add4(&crow[col], alpha * v0, alpha * v1, alpha * v2, alpha * v3);")
        w:reopen("else")
        w:line("if (col < N) atomicAdd(&crow[col], alpha * v0);")
        w:line("if (col + 1 < N) atomicAdd(&crow[col + 1], alpha * v1);")
        w:line("if (col + 2 < N) atomicAdd(&crow[col + 2], alpha * v2);")
        w:close()
      else
        w:line("kgen_red_add4(&crow[col], alpha * v0, alpha * v1, alpha * v2, alpha * v3);")
      end
      w:close()
      if tail then w:close() end
    end
    w:close()
    w:close()
  end
  w:close()
end

-- cst = 1, where C's rows are not 16-byte vectors (c_vec false): the
-- store of C through shared memory. Each lane's run of tn floats would
-- otherwise go out as tn single stores, each spread over the warp's row
-- segment (ln lanes tn floats apart), so every 32-byte sector of C is
-- written tn times (docs/performance.md row 109: at a short K that cost
-- a 64 x 64 kernel up to 2-3x its time). Here each warp writes its
-- accumulators, one sub-tile row of pass_m x wn at a time, to its own rows
-- of shared memory (d.cst_stride floats apart, 16-byte writes) and stores
-- them back row by row, the warp's 32 lanes on 32 consecutive floats of C. The K loop's buffers are free once
-- every warp has passed the barrier (and, with cp.async, every copy has
-- landed); stream-K's next tile starts with a barrier of its own.
local function staged(w, cfg, d)
  local stride, wn, rows = d.cst_stride, cfg.wn, d.pass_m
  if d.async or cfg.ba == 1 then
    w:linec("asm volatile(\"cp.async.wait_group 0;\\n\" ::);", "no copy still lands in shared memory")
  end
  w:linec("__syncthreads();", "every warp is done with the K loop's buffers")
  w:line("float* stg = smem + warp * %d;", rows * stride)
  w:line("const int wr0 = row0 + (warp / %d) * %d, wc0 = col0 + (warp %% %d) * %d;", d.warps_n, cfg.wm, d.warps_n, wn)
  w:comment(string.format("%d pass%s of %d rows: the lanes' patches of one sub-tile row each", d.sub_m,
    d.sub_m > 1 and "es" or "", rows))
  w:line("#pragma unroll")
  w:open("for (int p = 0; p < %d; ++p)", d.sub_m)
  w:line("#pragma unroll")
  w:open("for (int i = 0; i < %d; ++i)", cfg.tm)
  w:line("const int sr = (lane / %d) * %d + i;", cfg.ln, cfg.tm)
  w:line("#pragma unroll")
  w:open("for (int j = 0; j < %d; j += 4)", d.cols)
  w:line("const int sc = (lane %% %d) * %d + (j / %d) * %d + j %% %d;", cfg.ln, cfg.tn, cfg.tn, d.pass_n, cfg.tn)
  w:line("const int a = p * %d + i;", cfg.tm)
  w:line("*reinterpret_cast<float4*>(&stg[sr * %d + sc]) = make_float4(acc[a][j], acc[a][j + 1], acc[a][j + 2], acc[a][j + 3]);", stride)
  w:close()
  w:close()
  w:linec("__syncwarp();", "the pass's rows are in shared memory")
  w:linec("#pragma unroll 1", "a rolled loop keeps registers for the accumulators still to store")
  w:open("for (int t = 0; t < %d; ++t)", rows * wn // 32)
  w:line("const int rr = (lane + t * 32) / %d, cc = (lane + t * 32) %% %d;", wn, wn)
  w:line("const int r = wr0 + p * %d + rr, c = wc0 + cc;", rows)
  if cfg.bounds == 1 then w:open("if (r < M && c < N)") else w:open("") end
  w:line("float* dst = C + (size_t)r * ldc + c;")
  w:line("const float x = stg[rr * %d + cc];", stride)
  w:line("*dst = beta == 0.0f ? alpha * x : alpha * x + beta * *dst;")
  w:close()
  w:close()
  w:linec("__syncwarp();", "the pass's rows are stored: the next may overwrite them")
  w:close()
end

-- Epilogue: C = alpha * acc + beta * C (C not read when beta == 0), or
-- (atomic: split-K, stream-K's shared tiles) an atomic addition of
-- alpha * acc. Vectors where C allows them: `cv` floats per store; with
-- red = 4 (atomic, cv = 4), split-K and copies under 16 bytes, realigned
-- where C's rows are not 16-byte granular (realigned_red4).
function M.emit(w, cfg, d, atomic, cv)
  if atomic then
    w:comment("Add this share of the tile: C was multiplied by beta by the first kernel.")
    w:linec("kgen_dep_wait();", "that kernel has finished (a no-op unless launched to overlap it)")
  else
    w:comment("C = alpha * acc + beta * C; C is not read when beta == 0 (BLAS convention).")
  end
  if cv > 1 then
    w:line("const bool c_vec = (ldc %% %d == 0) && (reinterpret_cast<unsigned long long>(C) %% %d == 0);", cv, 4 * cv)
  end
  -- Split-K only: there every tile is added, once per slice, and single
  -- atomics were most of the time (a 64-slice kernel 2.4x faster at 999^3).
  -- Stream-K adds only its shared tiles, and the path's registers cost the
  -- main loop more than it saved (128x128 tiles, nn: 3-5 % slower at odd
  -- squares of 2000-5000). 16-byte-copy kernels stay as they were: 2 %
  -- slower at aligned shapes with it. Measured on an H100 and an H200
  -- (docs/performance.md). Those were chosen only where A's and B's rows
  -- are 16-byte granular; since row 84 a vec=4 kernel whose copies of an
  -- operand transpose through cp.async also runs where that operand's rows
  -- are not (nt at any shape), and there its atomics into an odd C are
  -- single: not measured with this path.
  local realign = atomic and cv == 4 and cfg.vec < 4 and cfg.splitk > 1
  -- cst = 1 (check: tn % 4 == 0, so cv = 4 here)
  local stage = not atomic and cfg.cst == 1 and cv == 4
  if realign or stage then
    w:open("if (!c_vec)")
    if realign then realigned_red4(w, cfg, d) else staged(w, cfg, d) end
    w:reopen("else")
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
    -- the vector of n floats from c + e (C's address a multiple of 4 n bytes there)
    local function piece(e, n)
      local vt = VEC_TYPE[n]
      local comps = {}
      for x = e, e + n - 1 do comps[#comps + 1] = string.format("alpha * acc[i][j + %d]", x) end
      local at = emit.add("c", e)
      if atomic then
        w:line("kgen_red_add%d(&crow[%s], %s);", n, at, table.concat(comps, ", "))
        return
      end
      w:line("%s v = make_%s(%s);", vt, vt, table.concat(comps, ", "))
      w:open("if (beta != 0.0f)")
      w:line("const %s old = *reinterpret_cast<const %s*>(&crow[%s]);", vt, vt, at)
      for x = 1, n do w:line("v.%s += beta * old.%s;", LANES[x], LANES[x]) end
      w:close()
      w:line("*reinterpret_cast<%s*>(&crow[%s]) = v;", vt, at)
    end
    local function scalars()
      w:line("#pragma unroll")
      w:open("for (int e = 0; e < %d; ++e)", cv)
      if cfg.bounds == 1 then w:line("if (c + e >= N) break;") end
      w:line(one("e"))
      w:close()
    end
    if cfg.cva == 1 and cv == 4 and not (realign or stage) then
      -- cva = 1: by the run's alignment, one 16-byte piece, two 8-byte ones,
      -- or a float, 8 bytes and a float (past realign's and stage's test
      -- of c_vec, C's rows are 16-byte vectors: nothing to piece)
      if cfg.bounds == 1 then w:open("if (c + 4 <= N)") else w:open("") end
      w:linec("const int s = c_vec ? 0 : (int)((reinterpret_cast<unsigned long long>(&crow[c]) >> 2) & 3);",
        "floats past a 16-byte boundary")
      w:open("if (s == 0)")
      piece(0, 4)
      w:reopen("else if (s == 2)")
      w:open("")
      piece(0, 2)
      w:close()
      w:open("")
      piece(2, 2)
      w:close()
      w:reopen("else")
      w:line(one(0))
      w:open("")
      piece(1, 2)
      w:close()
      w:line(one(3))
      w:close()
      if cfg.bounds == 1 then
        w:reopen("else")
        scalars()
      end
      w:close()
    else
      w:open("if (c_vec%s)", cfg.bounds == 1 and string.format(" && c + %d <= N", cv) or "")
      piece(0, cv)
      w:reopen("else")
      scalars()
      w:close()
    end
  end
  w:close()
  w:close()
  if realign or stage then w:close() end
end

-- Stream-K's workspace variant (d.skw; launched where C's rows are not
-- 16-byte granular): this piece of a shared tile adds alpha * acc into
-- the tile's slot of W, bm x bn floats row-major (16-byte aligned rows), in
-- 4-float reductions; the post kernel adds the slots to C
-- (lib/warp/side.lua). Rows and columns past M and N add what the edge
-- copies gave them into the slot's own floats, which the post kernel skips.
function M.workspace(w, cfg, d)
  w:comment("Add this share of the tile into its slot of the workspace (zeroed before the launch).")
  w:line("float* slot = W + (size_t)(tile - dp_tiles) * %d;", cfg.bm * cfg.bn)
  w:line("#pragma unroll")
  w:open("for (int i = 0; i < %d; ++i)", d.rows)
  w:line("float* wrow = slot + (a_off + (i / %d) * %d + i %% %d) * %d;", cfg.tm, d.pass_m, cfg.tm, cfg.bn)
  w:line("#pragma unroll")
  w:open("for (int j = 0; j < %d; j += 4)", d.cols)
  w:line("kgen_red_add4(&wrow[b_off + (j / %d) * %d + j %% %d], alpha * acc[i][j], alpha * acc[i][j + 1], "
    .. "alpha * acc[i][j + 2], alpha * acc[i][j + 3]);", cfg.tn, d.pass_n, cfg.tn)
  w:close()
  w:close()
end

-- wk > 1: groups 1 .. wk-1 park their partial tiles in shared memory, each
-- thread's accumulators as vectors of pv floats, thread-major (consecutive
-- threads, consecutive vectors: no bank conflicts); group 0 adds them to
-- its own, in group order (deterministic), and then stores the tile: the
-- `if (kgrp == 0)` block is left open for the store.
function M.group_sum(w, cfg, d)
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
function M.cluster(w, cfg, d)
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

return M
