-- matmul_skinny: fp32 products where one side of C is small (matrix-vector,
-- a few vectors at once): M <= ms (small = m) or N <= ms (small = n).
--
--   C = alpha * op(A) * op(B) + beta * C        row-major; op from `layout`
--
-- Such a product reads one large operand once and does at most 2 * ms
-- FLOPs per float of it: it is bound by DRAM bandwidth, and the kernel's
-- only job is to stream that operand at full speed. Written in the small
-- dimension's terms, every layout is one problem
--
--   R(i, l) = sum_k X(i, k) * Y(k, l)     i < S <= ms, l < L, k < K
--
-- small = m: S = M, L = N, X = op(A), Y = op(B), C(i, l) = C[i][l];
-- small = n: S = N, L = M, X = op(B)^T, Y = op(A)^T, C(i, l) = C[l][i].
-- The large operand Y is stored contiguous along L or along K, and the
-- kernel takes one of two forms accordingly (the layout and `small` decide):
--
--   along L ("rows"): a warp reads rows of Y,       along K ("dots"): a warp
--   lane j the vec floats l0 + vec j ..;            owns rw rows of Y^T (rw
--   the block's 8 warps take rows k, k+8, ..        values of l), its lanes
--   of its slice of K; each thread keeps            read vec consecutive k of
--   ms x vec sums, and the warps add theirs         each, keep rw x ms sums,
--   through shared memory at the end.               added across the warp
--                                                   by shuffles at the end.
--     k |==== warp 0: 32 lanes x vec ====|           l |== lanes along k ==>|
--     k+1 |==== warp 1 ...                           l+1 |== ...
--
-- The small operand X goes through shared memory, a chunk of K at a time
-- (zeros past K and past S), so that every read of it is a broadcast (rows)
-- or a conflict-free vector (dots), whichever way X is stored. Loads of Y
-- are unrolled (rows: 8 rows in flight per warp, 4 for ms x vec >= 32;
-- dots: 4 vectors of each row, 2 for ms >= 8) so that enough bytes are in
-- flight to saturate the memory, and they stream (not kept in L1, 256-byte
-- fetches into L2); pipe = 1 instead issues the next chunk's loads before
-- the current chunk is multiplied, and pipe = 2 stages X for the block's
-- whole slice of K once, after the slice's first batch of loads is issued,
-- so that the memory is busy while X arrives and no barrier interrupts the
-- stream.
--
-- Parallelism: kc > 0 cuts K into slices of kc (grid y = ceil(K / kc)),
-- whose sums are added into C atomically after a first kernel has set
-- C = beta * C; kc = 0 gives each block all of K and it stores C itself
-- (beta == 0: C is never read). cs > 1 (sm_90, with kc = 0) cuts K into cs
-- slices of ceil(K / cs) (grid y = cs) that form one thread-block cluster:
-- each block parks its partial sums in its shared memory, and after a
-- cluster barrier each block adds a share of them over the cluster's
-- blocks (distributed shared memory) and stores C itself; one kernel, no
-- beta pass, no atomics, the sum's order fixed. Rows of Y past L are
-- clamped (loaded, never stored); vectors that straddle the end of a row
-- read only the floats inside. The precondition S <= ms is declared as
-- render().requires' m_max or n_max, and the launcher refuses a larger S;
-- vec = 4's alignment rules bind the large operand alone
-- (requires.vector_operand).

local params = require "lib.params"
local emit = require "lib.emit"
local ptx = require "lib.warp.ptx"

local T = { name = "matmul_skinny", version = 3 }

T.params = {
  { name = "small", type = "enum", default = "m", values = { "m", "n" },
    doc = "which side of C is small: m (M <= ms, a few rows of C) or n (N <= ms, a few columns)" },
  { name = "ms", type = "int", default = 1, values = { 1, 2, 4, 8, 16 },
    doc = "the most rows (small=m) or columns (small=n) of C the kernel takes: each thread keeps ms sums per output" },
  { name = "vec", type = "int", default = 4, values = { 1, 4 },
    doc = "floats per load of the large operand (4: 16-byte loads; its leading dimension a multiple of 4, its pointer 16-byte aligned; the small operand is read by floats)" },
  { name = "kc", type = "int", default = 256, values = { 0, 128, 256, 512, 1024, 2048, 4096 },
    doc = "K per block (grid y = ceil(K / kc)), the slices added into C atomically after a beta pass; 0: one block takes all of K and stores C" },
  { name = "cs", type = "int", default = 1, values = { 1, 2, 4, 8 },
    doc = "K slices that form one thread-block cluster (sm_90; needs kc=0): grid y = cs, each block takes ceil(K / cs) of K, and the cluster sums the blocks' partial sums through distributed shared memory and stores C (no beta pass, no atomics); 1: no cluster" },
  { name = "pipe", type = "int", default = 0, values = { 0, 1, 2 },
    doc = "1: a chunk of K is one batch of loads, and the next chunk's loads of the large operand are issued before the current one is multiplied (two sets of registers); 2 (needs kc > 0): the block's whole slice of K is one chunk, its first batch of loads issued before its X is staged (one barrier); 0: each chunk's loads in batches, issued after its X is staged" },
  { name = "layout", type = "enum", default = "nn", values = { "nn", "nt", "tn", "tt" },
    doc = "op(A), op(B): n as stored, t transposed (A stored K x M, B stored N x K)" },
}

-- The values the tuner explores: 40 configurations per layout here, 114
-- with the groups below. Left out (--space puts them back): pipe = 1,
-- slower than pipe = 0 on 22 of the 24 measured products (H200,
-- bench/skinny.txt in 4 layouts: by 4-26 %), 1 % faster on one, even on
-- the other; kc = 128 and 1024 with pipe = 0, which the kept slices come
-- within 5 % of on every measured product. pipe = 2 is a group of its own
-- below: against pipe = 0 with the same small, ms, vec and kc (H200, 5
-- such twins at 14 products with M or N <= 16 in 4 layouts, 122 pairs;
-- docs/performance.md row 80) it ran faster at 104 pairs, by up to 30 %,
-- and slower at 18, by up to 10 %: both stay, and the tuner keeps
-- whichever measures faster.
T.space = {
  small = { "m", "n" },
  ms = { 1, 2, 4, 8, 16 },
  vec = { 4 },
  kc = { 0, 256, 512, 2048 },
  cs = { 1 },
  pipe = { 0 },
}

-- More of the space, walked after it: the clusters (cs > 1 takes kc = 0),
-- and 4-byte loads (vec = 1), the only kind that takes a large operand
-- whose rows are not 16-byte granular (an odd leading dimension), with
-- one block per column group, K sliced, or a cluster of 8.
T.space_groups = {
  { kc = { 0 }, cs = { 4, 8 } },
  { vec = { 1 }, kc = { 0, 512 } },
  { vec = { 1 }, kc = { 0 }, cs = { 8 } },
  { kc = { 512, 1024, 2048 }, pipe = { 2 } },
}

local THREADS = 256
local WARPS = THREADS // 32
local ROWS_CHUNK = 256 -- rows form: values of k staged per chunk of X
local DOTS_RW = 4      -- dots form: rows of Y^T per warp
local DOTS_UNROLL = 4  -- dots form: vectors of each row in flight per lane (2 for ms >= 8)

-- Everything derived from a configuration, in one place.
local function derive(cfg)
  local d = { ms = cfg.ms, vec = cfg.vec }
  local at, bt = cfg.layout:sub(1, 1) == "t", cfg.layout:sub(2, 2) == "t"
  d.a_trans, d.b_trans = at, bt
  if cfg.small == "m" then
    d.S, d.L, d.Ldim = "M", "N", "N"
    d.X = { ptr = "A", ld = "lda", kcont = not at } -- X(i, k) = op(A)[i][k]
    d.Y = { ptr = "B", ld = "ldb", kcont = bt }     -- Y(k, l) = op(B)[k][l]
  else
    d.S, d.L, d.Ldim = "N", "M", "M"
    d.X = { ptr = "B", ld = "ldb", kcont = bt }     -- X(i, k) = op(B)[k][i]
    d.Y = { ptr = "A", ld = "lda", kcont = not at } -- Y(k, l) = op(A)[l][k]
  end
  d.dots = d.Y.kcont
  if d.dots then
    d.rw = DOTS_RW
    d.unroll = cfg.ms >= 8 and DOTS_UNROLL // 2 or DOTS_UNROLL
    d.kt = cfg.pipe == 2 and cfg.kc or 32 * cfg.vec * d.unroll
    d.bl = WARPS * d.rw                 -- values of l per block
    d.xstride = d.kt + 4                -- xs[i][k], rows 16-byte aligned, banks shifted
    d.xs_floats = cfg.ms * d.xstride
    d.red_floats = 0
    d.outputs = d.rw * cfg.ms
  else
    d.unroll = (cfg.ms * cfg.vec >= 32) and 4 or 8 -- rows in flight per warp
    d.kt = (cfg.kc > 0 and cfg.kc < ROWS_CHUNK) and cfg.kc or ROWS_CHUNK
    if cfg.pipe == 1 then d.kt = WARPS * d.unroll end -- one batch per chunk
    if cfg.pipe == 2 then d.kt = cfg.kc end           -- the whole slice one chunk
    d.bl = 32 * cfg.vec
    d.xstride = cfg.ms                  -- xs[k][i]
    d.xs_floats = d.kt * cfg.ms
    d.red_floats = WARPS * d.bl         -- red[warp][column]
    d.outputs = cfg.ms * cfg.vec
  end
  d.cl = cfg.cs > 1
  d.part_floats = d.cl and cfg.ms * d.bl or 0 -- the block's sums, parked for the cluster
  d.smem = 4 * (d.xs_floats + d.red_floats + d.part_floats)
  d.atomic = cfg.kc > 0
  d.big = d.Y.ptr
  return d
end

function T.check(cfg, limits)
  if cfg.pipe == 2 and cfg.kc == 0 then
    return nil, "pipe=2 stages X for the block's whole slice of K at once: it needs kc > 0 (got kc=0)"
  end
  if cfg.cs > 1 and cfg.kc ~= 0 then
    return nil, string.format("cs=%d makes a cluster of the K slices, each ceil(K / cs) long: it needs kc=0 (got kc=%d)",
      cfg.cs, cfg.kc)
  end
  if cfg.cs > 1 and limits.sm < 90 then
    return nil, string.format("cs=%d uses thread-block clusters and distributed shared memory, which need sm_90 or newer (target %s)",
      cfg.cs, limits.name)
  end
  local d = derive(cfg)
  if THREADS > limits.max_threads_per_block then
    return nil, string.format("matmul_skinny's blocks have %d threads; the limit is %d (%s)",
      THREADS, limits.max_threads_per_block, limits.name)
  end
  if d.smem > limits.smem_per_block then
    return nil, string.format("ms=%d vec=%d kc=%d need %d bytes of static shared memory; the limit is %d (%s)",
      cfg.ms, cfg.vec, cfg.kc, d.smem, limits.smem_per_block, limits.name)
  end
  return true
end

function T.resources(cfg)
  local d = derive(cfg)
  local yfl, xfl = d.kt * d.bl, d.kt * cfg.ms -- floats per chunk of K
  local tile = cfg.small == "m" and { m = cfg.ms, n = d.bl, k = d.kt } or { m = d.bl, n = cfg.ms, k = d.kt }
  local flops = 2 * cfg.ms * d.bl * d.kt
  return {
    threads = THREADS,
    block = { THREADS, 1, 1 },
    smem_static = d.smem,
    smem_dynamic = 0,
    loads_a = d.big == "A" and yfl or xfl,
    loads_b = d.big == "B" and yfl or xfl,
    flops_per_phase = flops,
    cgma = flops / (yfl + xfl),
    outputs_per_thread = d.outputs,
    tile = tile,
    layout = cfg.layout,
    registers = d.outputs + d.unroll * cfg.vec * (d.dots and d.rw or 1) + 32,
    copy_a = d.big == "A" and cfg.vec or 1,
    copy_b = d.big == "B" and cfg.vec or 1,
    kslices = cfg.cs,
    combine = d.cl and "cluster" or d.atomic and "atomic" or "store",
    beta_pass = d.atomic and "all" or "none",
  }
end

---------------------------------------------------------------------------
-- Rendering
---------------------------------------------------------------------------

local function entry_name(cfg)
  return string.format("kgen_mms_%s_%s%d_%s", cfg.layout, cfg.small, cfg.ms, params.id(T.params, cfg))
end

-- Address expressions of X(i, k), Y's row origin and C(i, l), as text.
local function x_at(d, i, k)
  local X = d.X
  return X.kcont and string.format("%s[(size_t)(%s) * %s + (%s)]", X.ptr, i, X.ld, k)
                  or string.format("%s[(size_t)(%s) * %s + (%s)]", X.ptr, k, X.ld, i)
end

local function c_at(cfg, i, l)
  if cfg.small == "m" then return string.format("C[(size_t)(%s) * ldc + (%s)]", i, l) end
  return string.format("C[(size_t)(%s) * ldc + (%s)]", l, i)
end

-- C(i, l) = alpha * s + beta * C(i, l) for sum `s` (an expression).
local function store_c(w, cfg, i, s)
  w:line("float* c = &%s;", c_at(cfg, i, "l"))
  w:linec(string.format("*c = beta == 0.0f ? alpha * %s : alpha * %s + beta * *c;", s, s), "beta == 0: C is not read")
end

-- The store of sum `s` into C(i, l): parked at part[slot] for the cluster
-- (cs > 1), added atomically after the beta pass (kc > 0), else store_c.
local function store_sum(w, cfg, d, i, s, slot)
  if d.cl then
    w:line("part[%s] = %s;", slot, s)
  elseif d.atomic then
    w:line("atomicAdd(&%s, alpha * %s);", c_at(cfg, i, "l"), s)
  else
    store_c(w, cfg, i, s)
  end
end

local function header(w, cfg, d, meta)
  local opa = d.a_trans and "A^T (A stored K x M)" or "A (stored M x K)"
  local opb = d.b_trans and "B^T (B stored N x K)" or "B (stored K x N)"
  w:comment(string.format("Generated by kgen %s from template %s v%d. Regenerate rather than edit.",
    meta.kgen_version, T.name, T.version))
  w:comment("")
  w:comment(string.format("C = alpha * %s * %s + beta * C   (row-major fp32, layout %s)", opa, opb, cfg.layout))
  w:comment("")
  w:comment("Parameters: " .. params.canonical(T.params, cfg))
  w:comment("Derived:")
  w:comment(string.format("  small side          %s <= %d; the large operand %s is read once, contiguous along %s",
    d.S, cfg.ms, d.big, d.dots and "K" or d.L))
  if d.dots then
    w:comment(string.format("  form                dots: a warp owns %d values of %s, lanes along K, %d x %d sums per thread;",
      d.rw, d.L, d.rw, cfg.ms))
    w:comment(string.format("                      %d loads of %d float(s) per row in flight, shuffles sum the warp", d.unroll, cfg.vec))
  else
    w:comment(string.format("  form                rows: lanes along %s (%d float(s) each), warps interleaved along K,", d.L, cfg.vec))
    w:comment(string.format("                      %d x %d sums per thread; %d rows in flight per warp; warps summed in shared memory",
      cfg.ms, cfg.vec, d.unroll))
  end
  if cfg.pipe == 1 then
    w:comment("  pipeline            a chunk of K is one batch of loads; the next chunk's are issued before")
    w:comment("                      this one is multiplied (two sets of registers)")
  elseif cfg.pipe == 2 then
    w:comment("  pipeline            the slice of K is one chunk: its first batch of loads is issued, then")
    w:comment("                      its X is staged (one barrier)")
  end
  w:comment(string.format("  block               %d threads over %d values of %s", THREADS, d.bl, d.L))
  w:comment(string.format("  X chunks            %d values of k at a time in xs (%d floats), zero past K and %s",
    d.kt, d.xs_floats, d.S))
  w:comment(string.format("  shared memory       %d bytes static", d.smem))
  if d.cl then
    w:comment(string.format("  K                   %d slices of ceil(K / %d) (grid y, a multiple of 32), one cluster:", cfg.cs, cfg.cs))
    w:comment(string.format("                      the blocks' sums parked in part (%d floats), each block adds a share", d.part_floats))
    w:comment("                      over the cluster (distributed shared memory) and stores C")
  else
    w:comment(string.format("  K                   %s", d.atomic
      and string.format("slices of %d (grid y), added into C with atomicAdd after the beta pass", cfg.kc)
      or "all of it in each block; C stored directly"))
  end
  w:comment("Launch:")
  w:comment(string.format("  block = (%d, 1, 1), grid = (ceil(%s / %d), %s, 1), no dynamic shared memory",
    THREADS, d.Ldim, d.bl, d.atomic and string.format("ceil(K / %d)", cfg.kc) or tostring(cfg.cs)))
  if d.cl then w:comment(string.format("  cluster = (1, %d, 1), compiled in (__cluster_dims__)", cfg.cs)) end
  if d.atomic then
    w:comment(string.format("  first %s_beta: block (256, 1, 1), grid (ceil(%s / 256), 1, 1): C = beta * C", d.entry, d.Ldim))
    w:comment("  sm_90: this kernel may be launched to overlap the first (programmatic stream")
    w:comment("  serialization); it waits for it (griddepcontrol.wait) before adding into C. The")
    w:comment("  first may overlap the kernel before it: it waits for that one before it starts this.")
  end
  w:comment("Preconditions:")
  w:comment(string.format("  %s <= %d; M, N, K >= 1; lda >= %s, ldb >= %s, ldc >= N.", d.S, cfg.ms,
    d.a_trans and "M" or "K", d.b_trans and "K" or "N"))
  if cfg.vec > 1 then
    w:comment(string.format("  vec=%d: ld%s a multiple of %d; %s aligned to %d bytes.",
      cfg.vec, d.big:lower(), cfg.vec, d.big, 4 * cfg.vec))
  end
end

local function signature(w, entry)
  w:line("%s(int M, int N, int K, float alpha,", entry)
  w:line("    const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,")
  w:line("    float beta, float* __restrict__ C, int ldc)")
end

-- The block's range of K, [kbeg, kend).
local function k_range(w, cfg, d)
  if d.atomic then
    w:line("const int kbeg = blockIdx.y * %d, kend = min(K, kbeg + %d);", cfg.kc, cfg.kc)
  elseif d.cl then
    w:linec(string.format("const int kper = ((K + %d) / %d + 31) / 32 * 32;", cfg.cs - 1, cfg.cs),
      "a multiple of 32: every slice starts 16-byte aligned")
    w:linec("const int kbeg = min(K, (int)blockIdx.y * kper), kend = min(K, kbeg + kper);",
      "a slice past K is empty and still takes part")
  else
    w:line("const int kbeg = 0, kend = K;")
  end
end

-- cs > 1, after the block's sums are parked in part[0 .. ms * bl): each
-- block adds its share of them over the cluster's blocks, rank 0 first,
-- and stores C; the second barrier keeps every block's shared memory alive
-- until the others have read it.
local function cluster_store(w, cfg, d)
  local n = cfg.ms * d.bl
  local share = (n + cfg.cs - 1) // cfg.cs
  w:comment("The cluster's sums: each block adds its share over every block's part.")
  w:linec("kgen_cluster_sync();", "every block's sums are parked (the barrier orders shared memory)")
  w:line("const int rank = (int)kgen_cluster_rank();")
  w:line("const int e_end = min(%d, (rank + 1) * %d);", n, share)
  w:open("for (int e = rank * %d + threadIdx.x; e < e_end; e += %d)", share, THREADS)
  if d.dots then
    w:line("const int i = e %% %d, l = blockIdx.x * %d + e / %d;", cfg.ms, d.bl, cfg.ms)
  else
    w:line("const int i = e / %d, l = blockIdx.x * %d + e %% %d;", d.bl, d.bl, d.bl)
  end
  w:open("if (i < S && l < L)")
  w:line("float s = kgen_dsmem_ld(part + e, 0);")
  for q = 1, cfg.cs - 1 do w:line("s += kgen_dsmem_ld(part + e, %d);", q) end
  store_c(w, cfg, "i", "s")
  w:close()
  w:close()
  w:linec("kgen_cluster_sync();", "no block leaves while another still reads its part")
end

-- Stages X(i, kt + k) for k < KT, i < ms into xs (zero past the slice and
-- past S); consecutive threads walk X's contiguous direction.
local function stage_x(w, cfg, d, first)
  local n = d.kt * cfg.ms
  if not first then w:linec("__syncthreads();", "the previous chunk is consumed") end
  w:open("for (int e = threadIdx.x; e < %d; e += %d)", n, THREADS)
  if cfg.ms == 1 then
    w:line("const int k = e, i = 0;")
  elseif d.X.kcont then
    w:line("const int k = e %% %d, i = e / %d;", d.kt, d.kt)
  else
    w:line("const int i = e %% %d, k = e / %d;", cfg.ms, cfg.ms)
  end
  local slot = d.dots and string.format("i * %d + k", d.xstride) or emit.add(emit.mul("k", cfg.ms), "i")
  w:line("xs[%s] = (k < kn && i < S) ? %s : 0.0f;", slot, x_at(d, "i", "kt + k"))
  w:close()
  w:line("__syncthreads();")
end

-- The loads of the large operand, read once: read-only (nc), not kept in
-- L1 (no_allocate), each L2 miss fetching 256 bytes. Against __ldg (H100,
-- 20 products in 4 layouts, each configuration against itself): the median
-- 1-8 % faster on the 10 products that read 36 MB or more, within 0.2 % on
-- the smaller (docs/performance.md).
local function stream_loads(w)
  w:comment("Loads of the large operand, read once: not kept in L1, 256-byte fetches into L2.")
  w:open("__device__ __forceinline__ float kgen_ldy(const float* p)")
  w:line("float v;")
  w:line("asm(\"ld.global.nc.L1::no_allocate.L2::256B.f32 %0, [%1];\" : \"=f\"(v) : \"l\"(p));")
  w:line("return v;")
  w:close()
  w:open("__device__ __forceinline__ float4 kgen_ldy4(const float* p)")
  w:line("float4 v;")
  w:line("asm(\"ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];\"")
  w:line("    : \"=f\"(v.x), \"=f\"(v.y), \"=f\"(v.z), \"=f\"(v.w) : \"l\"(p));")
  w:line("return v;")
  w:close()
  w:blank()
end

-- The reads of one vector of Y into `v` (float[vec]) from pointer text
-- `p`: a vector load, or with `guard` (floats left, text) scalars inside.
local function load_y(w, cfg, v, p, guard)
  if cfg.vec == 1 then
    w:line("const float %s = %s;", v, guard and string.format("%s > 0 ? kgen_ldy(%s) : 0.0f", guard, p)
      or string.format("kgen_ldy(%s)", p))
  elseif guard then
    w:line("float4 %s;", v)
    for j, c in ipairs({ "x", "y", "z", "w" }) do
      w:line("%s.%s = %s > %d ? kgen_ldy(%s + %d) : 0.0f;", v, c, guard, j - 1, p, j - 1)
    end
  else
    w:line("const float4 %s = kgen_ldy4(%s);", v, p)
  end
end

local COMP = { "x", "y", "z", "w" }
local function comp(cfg, v, j) return cfg.vec == 1 and v or v .. "." .. COMP[j + 1] end

-- rows form: acc[i][j] += xs[k][i] * v[j] for one loaded row `v` at chunk row `krow`.
local function rows_fma(w, cfg, v, krow)
  w:line("const float* xr = xs + (%s) * %d;", krow, cfg.ms)
  for i0 = 0, cfg.ms - 1, 4 do
    local n = math.min(4, cfg.ms - i0)
    if n == 4 then
      w:line("const float4 x%d = *reinterpret_cast<const float4*>(xr + %d);", i0, i0)
    end
    for i = i0, i0 + n - 1 do
      local x = n == 4 and string.format("x%d.%s", i0, COMP[i - i0 + 1]) or string.format("xr[%d]", i)
      for j = 0, cfg.vec - 1 do
        w:line("acc[%d][%d] = fmaf(%s, %s, acc[%d][%d]);", i, j, x, comp(cfg, v, j), i, j)
      end
    end
  end
end

-- The walk of a thread down its rows of the chunk: unrolled, `unroll`
-- loads in flight, then the rows left one at a time; with `guard` (the
-- vector that straddles the end of the rows: one thread) only the latter.
local function rows_body(w, cfg, d, guard)
  local step = WARPS * d.unroll
  w:line("int k = warp;")
  if guard then
    w:open("for (; k < kn; k += %d)", WARPS)
    load_y(w, cfg, "v0", "y + (size_t)k * ldy", guard)
    rows_fma(w, cfg, "v0", "k")
    w:close()
    return
  end
  w:open("for (; k + %d < kn; k += %d)", WARPS * (d.unroll - 1), step)
  for u = 0, d.unroll - 1 do
    load_y(w, cfg, "v" .. u, string.format("y + (size_t)(k + %d) * ldy", WARPS * u), guard)
  end
  for u = 0, d.unroll - 1 do
    w:open("")
    rows_fma(w, cfg, "v" .. u, string.format("k + %d", WARPS * u))
    w:close()
  end
  w:close()
  w:open("for (; k < kn; k += %d)", WARPS)
  load_y(w, cfg, "v0", "y + (size_t)k * ldy", guard)
  rows_fma(w, cfg, "v0", "k")
  w:close()
end

local function zero(cfg) return cfg.vec == 1 and "0.0f" or "make_float4(0.0f, 0.0f, 0.0f, 0.0f)" end
local function vtype(cfg) return cfg.vec == 1 and "float" or "float4" end
local function vload(cfg, p)
  return cfg.vec == 1 and string.format("kgen_ldy(%s)", p)
                       or string.format("kgen_ldy4(%s)", p)
end

-- pipes 1 and 2, rows form: where l0's vector straddles the end of the row
-- (vec > 1), the rows of its slice from `from` (a for-loop's start) loaded
-- by floats into register `v` from `y`, after the line `setup` if any.
local function rows_straddle(w, cfg, setup, from, v, y)
  if cfg.vec == 1 then return end
  w:reopen("else if (l0 < L)")
  w:linec("const int left = L - l0;", "the vector straddles the end of the row")
  if setup then w:line(setup) end
  w:open("for (%s; k < kn; k += %d)", from, WARPS)
  load_y(w, cfg, v, y .. " + (size_t)k * ldy", "left")
  rows_fma(w, cfg, v, "k")
  w:close()
end

-- pipe = 1, rows form: registers v (this chunk's rows warp + 8 u) and n
-- (the next chunk's), a chunk one batch; `base` the chunk's first k.
local function rows_batch(w, cfg, d, v, base)
  w:open("if (%s + %d <= kend)", base, d.kt)
  for u = 0, d.unroll - 1 do
    w:line("%s%d = %s;", v, u, vload(cfg, string.format("y + (size_t)(%s + warp + %d) * ldy", base, WARPS * u)))
  end
  w:reopen("else")
  for u = 0, d.unroll - 1 do
    w:line("%s%d = %s + warp + %d < kend ? %s : %s;", v, u, base, WARPS * u,
      vload(cfg, string.format("y + (size_t)(%s + warp + %d) * ldy", base, WARPS * u)), zero(cfg))
  end
  w:close()
end

local function rows_piped(w, cfg, d)
  local full = cfg.vec == 1 and "l0 < L" or string.format("l0 + %d <= L", cfg.vec)
  w:linec(string.format("const bool full = %s;", full), "a whole vector of each row inside L")
  w:line("const float* __restrict__ y = %s + l0;", d.Y.ptr)
  local decl = {}
  for u = 0, d.unroll - 1 do decl[#decl + 1] = "v" .. u end
  w:line("%s %s;", vtype(cfg), table.concat(decl, ", "))
  w:open("if (full)")
  rows_batch(w, cfg, d, "v", "kbeg")
  w:close()
  w:open("for (int kt = kbeg; kt < kend; kt += %d)", d.kt)
  w:line("const int kn = min(%d, kend - kt);", d.kt)
  stage_x(w, cfg, d)
  w:open("if (full)")
  local ndecl = {}
  for u = 0, d.unroll - 1 do ndecl[#ndecl + 1] = "n" .. u end
  w:linec(string.format("%s %s;", vtype(cfg), table.concat(ndecl, ", ")), "the next chunk's rows, in flight meanwhile")
  rows_batch(w, cfg, d, "n", string.format("kt + %d", d.kt))
  w:comment("rows past kn hold zeros (and so does xs): no test")
  for u = 0, d.unroll - 1 do
    w:open("")
    rows_fma(w, cfg, "v" .. u, string.format("warp + %d", WARPS * u))
    w:close()
  end
  for u = 0, d.unroll - 1 do w:line("v%d = n%d;", u, u) end
  rows_straddle(w, cfg, "const float* __restrict__ yk = y + (size_t)kt * ldy;", "int k = warp", "v0", "yk")
  w:close()
  w:close()
end

-- pipe = 2, both forms: the block's first batch of loads (`loads` emits
-- them) issued where the batch is whole, then X staged behind them.
local function first_batch(w, cfg, d, loads)
  w:open("if (batch)")
  w:comment("in flight while X is staged")
  loads()
  w:close()
  stage_x(w, cfg, d, true)
end

-- pipe = 2, both forms: while batches are whole, the batch in registers
-- multiplied (`fmas`), k advanced by `advance`, and the next batch's loads
-- issued unless `stop` (the next batch would not be whole).
local function batch_loop(w, loads, fmas, advance, stop)
  w:open("if (batch)")
  w:open("for (;;)")
  fmas()
  w:line("k += %d;", advance)
  w:line("if (%s) break;", stop)
  loads()
  w:close()
  w:close()
end

-- pipe = 2, rows form: the slice one chunk; the first batch of rows is in
-- flight while X is staged, then the rows in batches, the rest one at a time.
local function rows_slice(w, cfg, d)
  local step = WARPS * d.unroll
  local full = cfg.vec == 1 and "l0 < L" or string.format("l0 + %d <= L", cfg.vec)
  w:line("const int kt = kbeg, kn = kend - kbeg;")
  w:line("const float* __restrict__ y = %s + (size_t)kt * ldy + l0;", d.Y.ptr)
  w:linec(string.format("const bool full = %s;", full), "a whole vector of each row inside L")
  w:line("int k = warp;")
  local decl = {}
  for u = 0, d.unroll - 1 do decl[#decl + 1] = "v" .. u end
  w:line("%s %s;", vtype(cfg), table.concat(decl, ", "))
  w:line("const bool batch = full && k + %d < kn;", WARPS * (d.unroll - 1))
  local function loads()
    for u = 0, d.unroll - 1 do
      w:line("v%d = %s;", u, vload(cfg, string.format("y + (size_t)(k + %d) * ldy", WARPS * u)))
    end
  end
  first_batch(w, cfg, d, loads)
  w:open("if (full)")
  batch_loop(w, loads, function()
    for u = 0, d.unroll - 1 do
      w:open("")
      rows_fma(w, cfg, "v" .. u, string.format("k + %d", WARPS * u))
      w:close()
    end
  end, step, string.format("k + %d >= kn", WARPS * (d.unroll - 1)))
  w:open("for (; k < kn; k += %d)", WARPS)
  load_y(w, cfg, "w0", "y + (size_t)k * ldy", nil)
  rows_fma(w, cfg, "w0", "k")
  w:close()
  rows_straddle(w, cfg, nil, "", "w0", "y")
  w:close()
end

local function rows_kernel(w, cfg, d)
  w:line("__shared__ __align__(16) float xs[%d];    // X chunk: xs[k][i]", d.xs_floats)
  w:line("__shared__ __align__(16) float red[%d];   // the warps' sums: red[warp][column]", d.red_floats)
  if d.cl then w:line("__shared__ __align__(16) float part[%d];  // the block's sums for the cluster: part[i][column]", d.part_floats) end
  w:line("const int S = %s, L = %s;", d.S, d.L)
  w:line("const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;")
  w:line("const int l0 = blockIdx.x * %d + %s;", d.bl, emit.mul("lane", cfg.vec))
  k_range(w, cfg, d)
  w:line("const size_t ldy = (size_t)%s;", d.Y.ld)
  w:line("float acc[%d][%d];", cfg.ms, cfg.vec)
  w:line("#pragma unroll")
  w:open("for (int i = 0; i < %d; ++i)", cfg.ms)
  w:line("#pragma unroll")
  w:line("for (int j = 0; j < %d; ++j) acc[i][j] = 0.0f;", cfg.vec)
  w:close()
  if cfg.pipe == 1 then
    rows_piped(w, cfg, d)
  elseif cfg.pipe == 2 then
    rows_slice(w, cfg, d)
  else
    w:open("for (int kt = kbeg; kt < kend; kt += %d)", d.kt)
    w:line("const int kn = min(%d, kend - kt);", d.kt)
    stage_x(w, cfg, d)
    w:line("const float* __restrict__ y = %s + (size_t)kt * ldy + l0;", d.Y.ptr)
    if cfg.vec == 1 then
      w:open("if (l0 < L)")
      rows_body(w, cfg, d, nil)
      w:close()
    else
      w:open("if (l0 + %d <= L)", cfg.vec)
      rows_body(w, cfg, d, nil)
      w:reopen("else if (l0 < L)")
      w:linec("const int left = L - l0;", "the vector straddles the end of the row")
      rows_body(w, cfg, d, "left")
      w:close()
    end
    w:close()
  end
  if d.atomic then w:linec("kgen_dep_wait();", "the beta pass has set C = beta * C") end
  w:comment("The warps' sums, one row i of R at a time, added by the block's first threads.")
  for i = 0, cfg.ms - 1 do
    w:open(i == 0 and "" or string.format("if (%d < S)", i))
    w:line("__syncthreads();")
    for j = 0, cfg.vec - 1 do
      w:line("red[%s] = acc[%d][%d];", emit.add(string.format("warp * %d", d.bl), emit.add(emit.mul("lane", cfg.vec), j)), i, j)
    end
    w:line("__syncthreads();")
    w:open("if (threadIdx.x < %d)", d.bl)
    if not d.cl then w:line("const int l = blockIdx.x * %d + threadIdx.x;", d.bl) end
    w:line("float s = red[threadIdx.x];")
    w:line("#pragma unroll")
    w:line("for (int q = 1; q < %d; ++q) s += red[q * %d + threadIdx.x];", WARPS, d.bl)
    if d.cl then
      store_sum(w, cfg, d, i, "s", string.format("%d + threadIdx.x", i * d.bl))
    else
      w:open("if (l < L)")
      store_sum(w, cfg, d, i, "s")
      w:close()
    end
    w:close()
    w:close()
  end
  if d.cl then cluster_store(w, cfg, d) end
end

-- dots form: the lane's loads of row r of its warp at chunk offset `k` text.
local function dots_step(w, cfg, d, kk, guard, u)
  for r = 0, d.rw - 1 do
    load_y(w, cfg, string.format("v%d_%d", u, r), string.format("y%d + %s", r, kk), guard)
  end
end

local function dots_fma(w, cfg, d, kk, u)
  for i = 0, cfg.ms - 1 do
    if cfg.vec == 4 then
      w:line("const float4 x%d = *reinterpret_cast<const float4*>(xs + %d + %s);", i, i * d.xstride, kk)
    else
      w:line("const float x%d = xs[%d + %s];", i, i * d.xstride, kk)
    end
    for r = 0, d.rw - 1 do
      for j = 0, cfg.vec - 1 do
        w:line("acc[%d][%d] = fmaf(%s, %s, acc[%d][%d]);", r, i, comp(cfg, "x" .. i, j),
          comp(cfg, string.format("v%d_%d", u, r), j), r, i)
      end
    end
  end
end

-- dots form: the batch of `unroll` vectors in registers multiplied, at k.
local function dots_fmas(w, cfg, d)
  for u = 0, d.unroll - 1 do
    w:open("")
    dots_fma(w, cfg, d, string.format("k + %d", 32 * cfg.vec * u), u)
    w:close()
  end
end

-- dots form: the chunk's vectors left after the batches, one at a time.
local function dots_rest(w, cfg, d)
  w:open("for (; k < kn; k += %d)", 32 * cfg.vec)
  if cfg.vec == 1 then
    dots_step(w, cfg, d, "kt + k", nil, 0)
  else
    w:linec("const int left = kn - k;", "floats of the slice left from k")
    dots_step(w, cfg, d, "kt + k", "left", 0)
  end
  dots_fma(w, cfg, d, "k", 0)
  w:close()
end

-- pipe = 0, dots form: per chunk, X staged, then the lane's vectors of the
-- chunk in batches of `unroll`, the rest one at a time.
local function dots_batched(w, cfg, d)
  local step = 32 * cfg.vec
  w:open("for (int kt = kbeg; kt < kend; kt += %d)", d.kt)
  w:line("const int kn = min(%d, kend - kt);", d.kt)
  stage_x(w, cfg, d)
  w:line("int k = %s;", emit.mul("lane", cfg.vec))
  w:open("for (; k + %d <= kn; k += %d)", step * (d.unroll - 1) + cfg.vec, step * d.unroll)
  for u = 0, d.unroll - 1 do dots_step(w, cfg, d, string.format("kt + k + %d", step * u), nil, u) end
  dots_fmas(w, cfg, d)
  w:close()
  dots_rest(w, cfg, d)
  w:close()
end

-- pipe = 1, dots form: registers v (this chunk's vectors, u along k, r
-- the warp's rows) and n (the next chunk's); `base` the chunk's first k.
local function dots_batch(w, cfg, d, v, base)
  local step = 32 * cfg.vec
  local lanek = emit.mul("lane", cfg.vec)
  w:open("if (%s + %d <= kend)", base, d.kt)
  for u = 0, d.unroll - 1 do
    for r = 0, d.rw - 1 do
      w:line("%s%d_%d = %s;", v, u, r, vload(cfg, string.format("y%d + %s + %s + %d", r, base, lanek, step * u)))
    end
  end
  w:reopen("else")
  for u = 0, d.unroll - 1 do
    w:line("const int left%d = kend - (%s + %s + %d);", u, base, lanek, step * u)
    for r = 0, d.rw - 1 do
      local p = string.format("y%d + %s + %s + %d", r, base, lanek, step * u)
      if cfg.vec == 1 then
        w:line("%s%d_%d = left%d > 0 ? kgen_ldy(%s) : 0.0f;", v, u, r, u, p)
      else
        for j = 0, 3 do
          w:line("%s%d_%d.%s = left%d > %d ? kgen_ldy(%s + %d) : 0.0f;", v, u, r, COMP[j + 1], u, j, p, j)
        end
      end
    end
  end
  w:close()
end

local function dots_piped(w, cfg, d)
  local step = 32 * cfg.vec
  local function decl(v)
    local t = {}
    for u = 0, d.unroll - 1 do
      for r = 0, d.rw - 1 do t[#t + 1] = string.format("%s%d_%d", v, u, r) end
    end
    return table.concat(t, ", ")
  end
  w:line("%s %s;", vtype(cfg), decl("v"))
  dots_batch(w, cfg, d, "v", "kbeg")
  w:open("for (int kt = kbeg; kt < kend; kt += %d)", d.kt)
  w:line("const int kn = min(%d, kend - kt);", d.kt)
  stage_x(w, cfg, d)
  w:linec(string.format("%s %s;", vtype(cfg), decl("n")), "the next chunk's, in flight meanwhile")
  dots_batch(w, cfg, d, "n", string.format("kt + %d", d.kt))
  w:comment("vectors past kn hold zeros (and so does xs): no test")
  for u = 0, d.unroll - 1 do
    w:open("")
    dots_fma(w, cfg, d, string.format("%s + %d", emit.mul("lane", cfg.vec), step * u), u)
    w:close()
  end
  for u = 0, d.unroll - 1 do
    for r = 0, d.rw - 1 do w:line("v%d_%d = n%d_%d;", u, r, u, r) end
  end
  w:close()
end

-- pipe = 2, dots form: the slice one chunk; the lane's first batch of
-- vectors is in flight while X is staged, then batches, the rest one at a time.
local function dots_slice(w, cfg, d)
  local step = 32 * cfg.vec
  w:line("const int kt = kbeg, kn = kend - kbeg;")
  w:line("int k = %s;", emit.mul("lane", cfg.vec))
  local t = {}
  for u = 0, d.unroll - 1 do
    for r = 0, d.rw - 1 do t[#t + 1] = string.format("v%d_%d", u, r) end
  end
  w:line("%s %s;", vtype(cfg), table.concat(t, ", "))
  w:line("const bool batch = k + %d <= kn;", step * (d.unroll - 1) + cfg.vec)
  local function loads()
    for u = 0, d.unroll - 1 do
      for r = 0, d.rw - 1 do
        w:line("v%d_%d = %s;", u, r, vload(cfg, string.format("y%d + kt + k + %d", r, step * u)))
      end
    end
  end
  first_batch(w, cfg, d, loads)
  batch_loop(w, loads, function() dots_fmas(w, cfg, d) end, step * d.unroll,
    string.format("k + %d > kn", step * (d.unroll - 1) + cfg.vec))
  dots_rest(w, cfg, d)
end

-- dots form, the end: the rw x ms sums of each lane added across the warp.
-- A reduce-scatter: at each lane offset o = 16, 8, .. a lane keeps half of
-- its sums (the upper half where its bit o is set) and adds its partner's
-- copy of that half, which it receives for the half it gives away, so that
-- V = rw * ms sums cost V/2 + V/4 + .. shuffles instead of 5 V; once one
-- sum is left (V < 32) the offsets left add it whole. Sum v then ends in the
-- lanes whose top bits are v's, complete in every lane of the group.
local function dots_reduce(w, cfg, d)
  local V = d.rw * cfg.ms
  local vals = {}
  for r = 0, d.rw - 1 do
    for i = 0, cfg.ms - 1 do vals[#vals + 1] = string.format("acc[%d][%d]", r, i) end
  end
  w:comment(string.format("The %d sums of each lane added across the warp (reduce-scatter, then butterfly).", V))
  local o, h = 16, 0
  while #vals > 1 and o >= 1 do
    local half = #vals // 2
    w:open("")
    w:line("const bool up = (lane & %d) != 0;", o)
    local kept = {}
    for j = 1, half do
      local lo, hi = vals[j], vals[j + half]
      w:line("const float g%d = up ? %s : %s;", j - 1, lo, hi)
    end
    for j = 1, half do
      local lo, hi = vals[j], vals[j + half]
      w:line("%s = (up ? %s : %s) + __shfl_xor_sync(0xffffffffu, g%d, %d);", lo, hi, lo, j - 1, o)
      kept[j] = lo
    end
    w:close()
    vals = kept
    o = o // 2
    h = h + 1
  end
  local R = #vals                       -- sums left per lane
  if o >= 1 then
    w:line("#pragma unroll")
    w:line("for (int o = %d; o > 0; o >>= 1) %s += __shfl_xor_sync(0xffffffffu, %s, o);", o, vals[1], vals[1])
  end
  local low = 32 >> h                    -- lanes holding the same sums
  w:comment(string.format("Lane group g = lane / %d holds sums v = g * %d + t, t < %d; its first lane stores them.", low, R, R))
  w:open("if ((lane & %d) == 0)", low - 1)
  w:line("const int g = lane / %d;", low)
  for t = 0, R - 1 do
    w:open("")
    w:line("const int v = g * %d + %d, r = v / %d, i = v %% %d, l = lw + r;", R, t, cfg.ms, cfg.ms)
    w:open("if (i < S && l < L)")
    store_sum(w, cfg, d, "i", vals[t + 1], string.format("warp * %d + v", d.rw * cfg.ms))
    w:close()
    w:close()
  end
  w:close()
end

local function dots_kernel(w, cfg, d)
  w:line("__shared__ __align__(16) float xs[%d];    // X chunk: xs[i][k], rows of %d floats", d.xs_floats, d.xstride)
  if d.cl then w:line("__shared__ __align__(16) float part[%d];  // the block's sums for the cluster: part[l][i]", d.part_floats) end
  w:line("const int S = %s, L = %s;", d.S, d.L)
  w:line("const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;")
  w:linec(string.format("const int lw = blockIdx.x * %d + warp * %d;", d.bl, d.rw), "the warp's first value of l")
  k_range(w, cfg, d)
  w:comment("Rows past L are clamped to the last: loaded, never stored.")
  for r = 0, d.rw - 1 do
    w:line("const float* __restrict__ y%d = %s + (size_t)min(lw + %d, L - 1) * %s;", r, d.Y.ptr, r, d.Y.ld)
  end
  w:line("float acc[%d][%d];", d.rw, cfg.ms)
  w:line("#pragma unroll")
  w:open("for (int r = 0; r < %d; ++r)", d.rw)
  w:line("#pragma unroll")
  w:line("for (int i = 0; i < %d; ++i) acc[r][i] = 0.0f;", cfg.ms)
  w:close()
  if cfg.pipe == 1 then
    dots_piped(w, cfg, d)
  elseif cfg.pipe == 2 then
    dots_slice(w, cfg, d)
  else
    dots_batched(w, cfg, d)
  end
  if d.atomic then w:linec("kgen_dep_wait();", "the beta pass has set C = beta * C") end
  dots_reduce(w, cfg, d)
  if d.cl then cluster_store(w, cfg, d) end
end

-- kc > 0: the first kernel, C = beta * C (zero when beta == 0, C unread).
local function beta_kernel(w, cfg, d)
  w:blank()
  w:comment("kc > 0, launched first: C = beta * C, so that the slices can add into it.")
  w:line("extern \"C\" __global__ void __launch_bounds__(256)")
  signature(w, d.entry .. "_beta")
  w:open("")
  w:linec("kgen_dep_wait();", "the kernel before this pass has finished (a no-op unless launched to overlap it)")
  w:linec("kgen_dep_launch();", "the main kernel may start: it waits for this one before adding")
  w:line("const int l = blockIdx.x * 256 + threadIdx.x;")
  w:line("if (l >= %s) return;", d.L)
  w:open("for (int i = 0; i < %s; ++i)", d.S)
  w:line("float* c = &%s;", c_at(cfg, "i", "l"))
  w:line("*c = beta == 0.0f ? 0.0f : beta * *c;")
  w:close()
  w:close()
end

function T.render(cfg, meta)
  local d = derive(cfg)
  d.entry = entry_name(cfg)
  local w = emit.writer()
  header(w, cfg, d, meta)
  w:blank()
  if d.atomic then ptx.dep_launch(w) end
  if d.cl then ptx.cluster(w, "f32") end
  stream_loads(w)
  w:line("extern \"C\" __global__ void %s__launch_bounds__(%d)",
    d.cl and string.format("__cluster_dims__(1, %d, 1) ", cfg.cs) or "", THREADS)
  signature(w, d.entry)
  w:open("")
  if d.dots then dots_kernel(w, cfg, d) else rows_kernel(w, cfg, d) end
  w:close()
  if d.atomic then beta_kernel(w, cfg, d) end
  local result = {
    source = w:text(),
    entry = d.entry,
    block = { THREADS, 1, 1 },
    grid = { { dim = d.Ldim, div = d.bl, mul = 1 },
             d.atomic and { dim = "K", div = cfg.kc, mul = 1 } or { dim = "1", div = 1, mul = cfg.cs },
             { dim = "1", div = 1, mul = 1 } },
    smem_static = d.smem,
    smem_dynamic = 0,
    requires = {
      m_max = cfg.small == "m" and cfg.ms or nil,
      n_max = cfg.small == "n" and cfg.ms or nil,
      ld_multiple = cfg.vec,       -- of the large operand alone: the small one is read by floats
      align = 4 * cfg.vec,
      vector_operand = d.big,
    },
    layout = cfg.layout,
  }
  if d.atomic then
    result.pre = {
      entry = d.entry .. "_beta",
      block = { 256, 1, 1 },
      overlap = true, waits = true,
      grid = { { dim = d.Ldim, div = 256, mul = 1 }, { dim = "1", div = 1, mul = 1 }, { dim = "1", div = 1, mul = 1 } },
      smem_static = 0, smem_dynamic = 0,
      layout = cfg.layout,
    }
  end
  return result
end

return T
