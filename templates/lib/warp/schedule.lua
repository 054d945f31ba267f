-- The order of a matmul_warp kernel's work: which tile of C a block
-- computes (one per block, in row order or rasterized; or stream-K's
-- persistent workers), which tiles of K it walks (split-K's slices) and in
-- which order (with bound checks the last, partial one first, so that only
-- its copy checks K).

local M = {}

-- Tile `id` (a linear index) of a grid of tiles_m x tiles_n tiles, as its
-- first row and column: row by row, or with raster > 1 in groups of
-- `raster` tile rows walked column by column, so that the blocks resident
-- together read few distinct tiles of A and B (L2 reuse).
function M.tile_origin(w, cfg, id, tiles_m, tiles_n)
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
function M.block_origin(w, cfg)
  if cfg.raster > 1 then
    w:comment(string.format("Grouped order: consecutive blocks walk down groups of %d block rows (L2 reuse).", cfg.raster))
    w:line("const int bid = blockIdx.y * gridDim.x + blockIdx.x;")
    M.tile_origin(w, cfg, "bid", "(int)gridDim.y", "(int)gridDim.x")
  else
    w:linec(string.format("const int row0 = blockIdx.y * %d;", cfg.bm), "first row of C in this block")
    w:linec(string.format("const int col0 = blockIdx.x * %d;", cfg.bn), "first column")
  end
end

-- Stream-K's division of the tiles, shared by the kernel and its beta pass.
function M.sk_helper(w, cfg)
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

-- Stream-K: this block is a persistent worker; emits its loop over the
-- tiles it takes (whole ones, and its piece of the shared ones: kt0,
-- ktiles, `shared`) with each tile's origin, then body() inside the loop
-- (ws: the workspace variant's).
function M.stream_k(w, cfg, body, ws)
  w:comment("Stream-K: this block is one of gridDim.x resident workers. Whole waves of tiles")
  w:comment("go one tile per worker (data-parallel); the tiles that would leave a wave")
  w:comment("partly idle are cut into K iterations shared out evenly, and their")
  if ws then
    w:comment("pieces add into the workspace atomically (the post kernel adds it to C).")
  else
    w:comment("pieces add into C atomically (the first kernel applied beta to them).")
  end
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
  M.tile_origin(w, cfg, "tile", "tiles_m", "tiles_n")
  body()
  w:close()
end

-- The tiles of K this block multiplies, [kt0, kt0 + ktiles): all of them,
-- or with split-K its slice's.
function M.k_range(w, cfg, d)
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
end

-- k0 of the first tile copied: with bound checks the range's last tile
-- (multiplied first), else its first.
function M.first_k0(cfg)
  if cfg.bounds == 1 then return string.format("(kt0 + ktiles - 1) * %d", cfg.bk) end
  return string.format("kt0 * %d", cfg.bk)
end

-- Opens the block of the next tile's copies, `ahead` tiles on: skipped by
-- a branch past the last tile, or (pred = 1) always entered with `more`
-- false there; returns the gate for the copies (nil: none).
function M.open_next(w, cfg, ahead, why)
  if cfg.pred ~= 1 then
    w:open("if (t + %d < ktiles)", ahead)
    return nil
  end
  w:open("")
  w:linec(string.format("const bool more = t + %d < ktiles;", ahead), why)
  return "more"
end

return M
