-- The main kernel of matmul_warp: its signature and shared memory, each
-- lane's place in the block's tile, and per tile of C the accumulators,
-- the K loop (lib/warp/ring.lua or lib/warp/prefetch.lua), the sum of the
-- warp groups and the store (lib/warp/store.lua), in the order
-- lib/warp/schedule.lua sets.

local plan = require "lib.warp.plan"
local copy = require "lib.warp.copy"
local store = require "lib.warp.store"
local schedule = require "lib.warp.schedule"
local ring = require "lib.warp.ring"
local prefetch = require "lib.warp.prefetch"

local M = {}

-- The K loop over the tiles [kt0, kt0 + ktiles). With bound checks the
-- range's last tile, the only one that can end inside K, is multiplied
-- first: its copy (with K checks) is issued in the prologue and every copy
-- inside the loop runs unchecked: the t-th tile multiplied (t >= 1) is tile
-- kt0 + t - 1.
local function main_loop(w, cfg, d)
  if cfg.bounds == 1 then
    w:comment("The last tile of K (the only one that may be partial) is multiplied first, so that")
    w:comment("only its copy checks K and the loop's copies run without checks.")
  end
  if d.async then ring.emit(w, cfg, d) else prefetch.emit(w, cfg, d) end
end

-- ws: stream-K's workspace variant (d.skw), <entry>_ws with a last
-- argument W: every shared tile's pieces add into W (lib/warp/store.lua's
-- workspace), whole tiles store into C as in the main kernel.
function M.emit(w, cfg, d, ws)
  local cluster = d.cl and string.format("__cluster_dims__(1, 1, %d) ", cfg.splitk) or ""
  if cfg.minb > 1 then
    w:line("extern \"C\" __global__ void %s__launch_bounds__(%d, %d)", cluster, d.threads, cfg.minb)
  else
    w:line("extern \"C\" __global__ void %s__launch_bounds__(%d)", cluster, d.threads)
  end
  w:line("%s%s(int M, int N, int K, float alpha,", d.entry, ws and "_ws" or "")
  w:line("    const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,")
  w:line("    float beta, float* __restrict__ C, int ldc%s)", ws and ", float* __restrict__ W" or "")
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
  -- one tile of C: copies' setup, accumulators, K loop, then finish() stores it
  local function tile_work(finish)
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
    main_loop(w, cfg, d)
    if d.cl then w:close() end
    w:blank()
    if cfg.wk > 1 then
      store.group_sum(w, cfg, d)
      finish()
      w:close()
    else
      finish()
    end
  end
  if d.sk then
    lane_offsets()
    w:blank()
    schedule.stream_k(w, cfg, function()
      w:linec("__syncthreads();", "the previous tile's reads of shared memory are done")
      w:blank()
      tile_work(function()
        w:open("if (shared)")
        if ws then
          store.workspace(w, cfg, d)
        else
          store.emit(w, cfg, d, true, d.red4 and d.cv or 1)
        end
        w:reopen("else")
        store.emit(w, cfg, d, false, plan.vwidth(cfg.tn))
        w:close()
      end)
    end, ws)
    w:close()
    return
  end
  schedule.block_origin(w, cfg)
  lane_offsets()
  w:blank()
  schedule.k_range(w, cfg, d)
  w:blank()
  if d.cl then
    tile_work(function() store.cluster(w, cfg, d) end)
  else
    tile_work(function() store.emit(w, cfg, d, cfg.splitk > 1, d.cv) end)
  end
  w:close()
end

return M
