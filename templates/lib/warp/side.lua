-- The kernels a matmul_warp source carries besides the main one: launched
-- before it, split-K's and stream-K's beta passes (C = beta * C where the
-- main kernel adds into C) and pack = 1's packing kernel; after stream-K's
-- workspace variant (<entry>_ws, lib/warp/kernel.lua), its post kernel.
-- Named after the main entry: <entry>_beta, <entry>_pack, <entry>_post.

local schedule = require "lib.warp.schedule"

local M = {}

-- split-K's first kernel: C = beta * C (zero when beta == 0, C unread).
function M.beta(w, d)
  w:blank()
  w:comment("split-K, launched first: C = beta * C, so that the slices can add into it.")
  w:line("extern \"C\" __global__ void __launch_bounds__(128)")
  w:line("%s_beta(int M, int N, int K, float alpha,", d.entry)
  w:line("    const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,")
  w:line("    float beta, float* __restrict__ C, int ldc)")
  w:open("")
  w:linec("kgen_dep_wait();", "the kernel before this pass has finished (a no-op unless launched to overlap it)")
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
-- and the kernel's vectors never straddle the edge (lib/warp/copy.lua).
function M.pack(w, d)
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
function M.sk_beta(w, cfg, d)
  w:blank()
  w:comment("stream-K, launched first with the same grid: C = beta * C on the shared tiles.")
  w:line("extern \"C\" __global__ void __launch_bounds__(256)")
  w:line("%s_beta(int M, int N, int K, float alpha,", d.entry)
  w:line("    const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,")
  w:line("    float beta, float* __restrict__ C, int ldc)")
  w:open("")
  w:linec("kgen_dep_wait();", "the kernel before this pass has finished (a no-op unless launched to overlap it)")
  w:linec("kgen_dep_launch();", "the main kernel may start: it waits for this one before adding")
  w:linec("if (beta == 1.0f) return;", "C = 1 * C")
  w:line("const int tiles_m = (M + %d) / %d, tiles_n = (N + %d) / %d;", cfg.bm - 1, cfg.bm, cfg.bn - 1, cfg.bn)
  w:line("const long long tiles = (long long)tiles_m * tiles_n, workers = gridDim.x;")
  w:open("for (long long tile = kgen_sk_dp_tiles(tiles, workers) + blockIdx.x; tile < tiles; tile += workers)")
  schedule.tile_origin(w, cfg, "tile", "tiles_m", "tiles_n")
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

-- After stream-K's workspace variant (d.skw), on the persistent grid of
-- workers times (bm * bn / 1024) along y: C = W's slot + beta * C over the
-- shared tiles (C not read when beta == 0). Block (x, y) takes 1024 floats
-- of the slots of the shared tiles x, x + workers, ..., a float4 of W per
-- thread (the slots are bm x bn row-major; bn is a multiple of 4).
function M.sk_post(w, cfg, d)
  w:blank()
  w:comment("stream-K's workspace variant, then this on the same workers: C = W's slot + beta * C")
  w:comment("on the shared tiles.")
  w:line("extern \"C\" __global__ void __launch_bounds__(256)")
  w:line("%s_post(int M, int N, int K, float alpha,", d.entry)
  w:line("    const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,")
  w:line("    float beta, float* __restrict__ C, int ldc, const float* __restrict__ W)")
  w:open("")
  w:line("const int tiles_m = (M + %d) / %d, tiles_n = (N + %d) / %d;", cfg.bm - 1, cfg.bm, cfg.bn - 1, cfg.bn)
  w:line("const long long tiles = (long long)tiles_m * tiles_n, workers = gridDim.x;")
  w:line("const long long dp_tiles = kgen_sk_dp_tiles(tiles, workers);")
  w:linec("const int e = blockIdx.y * 1024 + threadIdx.x * 4;", "this thread's 4 floats of a slot")
  if (cfg.bm * cfg.bn) % 1024 ~= 0 then w:line("if (e >= %d) return;", cfg.bm * cfg.bn) end
  w:line("const int lr = e / %d, lc = e %% %d;", cfg.bn, cfg.bn)
  w:open("for (long long tile = dp_tiles + blockIdx.x; tile < tiles; tile += workers)")
  schedule.tile_origin(w, cfg, "tile", "tiles_m", "tiles_n")
  w:line("const int r = row0 + lr, c = col0 + lc;")
  w:line("if (r >= M) continue;")
  w:line("const float4 s = *reinterpret_cast<const float4*>(W + (tile - dp_tiles) * %d + e);", cfg.bm * cfg.bn)
  w:line("const float sv[4] = {s.x, s.y, s.z, s.w};")
  w:line("float* crow = C + (size_t)r * ldc;")
  w:line("#pragma unroll")
  w:open("for (int u = 0; u < 4; ++u)")
  w:line("if (c + u < N) crow[c + u] = beta == 0.0f ? sv[u] : sv[u] + beta * crow[c + u];")
  w:close()
  w:close()
  w:close()
end

return M
