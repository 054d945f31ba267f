-- The ends of a tile of C: the store of the accumulators (C = alpha * acc
-- + beta * C, or an atomic addition for split-K and stream-K), the sum of
-- the warp groups' partial tiles (wk > 1) and cluster split-K's sum through
-- distributed shared memory (cl = 1).

local emit = require "lib.emit"
local copy = require "lib.warp.copy"

local M = {}

local LANES = { "x", "y", "z", "w" }
local VEC_TYPE = copy.VEC_TYPE

-- Epilogue: C = alpha * acc + beta * C (C not read when beta == 0), or
-- (atomic: split-K, stream-K's shared tiles) an atomic addition of
-- alpha * acc. Vectors where C allows them: `cv` floats per store.
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
