-- matmul: the classic shared-memory tiled fp32 matrix multiplication.
--
--   C = alpha * op(A) * op(B) + beta * C        row-major; op from `layout`
--
-- Each block computes a bm x bn tile of C. The K dimension is walked in
-- phases of bk: in each phase the block's threads copy a bm x bk tile of A
-- and a bk x bn tile of B into shared memory (one row of padding against bank
-- conflicts: `pad` extra floats per row), wait, and multiply them out of
-- shared memory. Each thread owns a tm x tn register tile of outputs,
-- strided by the thread grid so that neighbouring threads touch neighbouring
-- columns:
--
--            bn columns of C
--          +----------------+         thread (tx, ty) owns rows
--       bm |  . . . . . . . |           ty, ty + bm/tm, ty + 2 bm/tm, ...
--     rows |  . . . . . . . |         and columns
--          +----------------+           tx, tx + bn/tn, ...
--
-- With tm = tn = 1 and bm = bn = bk = T this is the seeds' T x T tiled kernel,
-- one output per thread.

local params = require "lib.params"
local emit = require "lib.emit"

local T = { name = "matmul", version = 1 }

T.params = {
  { name = "bm", type = "int", default = 64, min = 1, max = 512,
    doc = "block tile: rows of C computed by one block" },
  { name = "bn", type = "int", default = 64, min = 1, max = 512,
    doc = "block tile: columns of C computed by one block" },
  { name = "bk", type = "int", default = 16, min = 1, max = 256,
    doc = "block tile: depth (elements of K) loaded per phase" },
  { name = "tm", type = "int", default = 4, min = 1, max = 16,
    doc = "register tile: rows of C per thread (threads = bm/tm * bn/tn)" },
  { name = "tn", type = "int", default = 4, min = 1, max = 16,
    doc = "register tile: columns of C per thread" },
  { name = "pad", type = "int", default = 1, min = 0, max = 32,
    doc = "extra floats per shared-memory row (bank-conflict padding)" },
  { name = "vec", type = "int", default = 1, values = { 1, 2, 4 },
    doc = "global load width in floats (2, 4: float2/float4 loads; needs aligned pointers and ld)" },
  { name = "bounds", type = "int", default = 1, values = { 0, 1 },
    doc = "1: any M, N, K >= 1; 0: no checks, M, N, K must be multiples of bm, bn, bk" },
  { name = "layout", type = "enum", default = "nn", values = { "nn", "nt", "tn", "tt" },
    doc = "op(A), op(B): n as stored, t transposed (A stored K x M, B stored N x K)" },
}

-- The values the tuner explores (a subset of what params allow); check()
-- prunes the combinations that break a rule or do not fit the device.
T.space = {
  bm = { 16, 32, 64, 128, 256 },
  bn = { 16, 32, 64, 128, 256 },
  bk = { 8, 16, 32 },
  tm = { 1, 2, 4, 8 },
  tn = { 1, 2, 4, 8 },
  pad = { 0, 1, 4 },
  vec = { 1, 4 },
  bounds = { 1 },
}

local STATIC_SMEM_LIMIT = 48 * 1024 -- larger tiles use dynamic shared memory

-- Everything derived from a configuration, computed in one place.
local function derive(cfg)
  local d = {}
  d.tx = cfg.bn // cfg.tn             -- threads along N (blockDim.x)
  d.ty = cfg.bm // cfg.tm             -- threads along M (blockDim.y)
  d.threads = d.tx * d.ty
  d.as_cols = cfg.bk + cfg.pad        -- row length of As (floats)
  d.bs_cols = cfg.bn + cfg.pad        -- row length of Bs
  d.as_floats = cfg.bm * d.as_cols
  d.bs_floats = cfg.bk * d.bs_cols
  d.smem = 4 * (d.as_floats + d.bs_floats)
  d.dynamic = d.smem > STATIC_SMEM_LIMIT
  d.a_trans = cfg.layout:sub(1, 1) == "t"
  d.b_trans = cfg.layout:sub(2, 2) == "t"
  d.loads_a = cfg.bm * cfg.bk         -- floats of A per phase
  d.loads_b = cfg.bk * cfg.bn
  d.flops = 2 * cfg.bm * cfg.bn * cfg.bk
  d.cgma = d.flops / (d.loads_a + d.loads_b)
  d.entry = string.format("kgen_matmul_%s_%dx%dx%d_%dx%d_p%d_v%d_b%d", cfg.layout,
    cfg.bm, cfg.bn, cfg.bk, cfg.tm, cfg.tn, cfg.pad, cfg.vec, cfg.bounds)
  return d
end

-- The two operand tiles, described once for the loader, check and accesses.
-- A tile: As[m][k], bm x bk. B tile: Bs[k][n], bk x bn. `rows`/`cols` are
-- the shared-array axes; `trans` says whether global memory is contiguous
-- along the rows axis (a transposed operand) instead of the cols axis.
local function operands(cfg, d)
  return {
    { name = "A", smem = "As", ptr = "A", ld = "lda", trans = d.a_trans, base = 0,
      rows = { ext = cfg.bm, origin = "row0", limit = "M", pname = "bm" },
      cols = { ext = cfg.bk, origin = "k0", limit = "K", pname = "bk" },
      stride = d.as_cols },
    { name = "B", smem = "Bs", ptr = "B", ld = "ldb", trans = d.b_trans, base = d.as_floats,
      rows = { ext = cfg.bk, origin = "k0", limit = "K", pname = "bk" },
      cols = { ext = cfg.bn, origin = "col0", limit = "N", pname = "bn" },
      stride = d.bs_cols },
  }
end

-- For an operand: the axis along which global memory is contiguous (vector
-- loads run along it, consecutive threads walk it) and the other axis.
local function load_axes(op)
  if op.trans then return op.rows, op.cols end -- contiguous, line
  return op.cols, op.rows
end

local function ceil_div(a, b) return (a + b - 1) // b end

local function load_plan(cfg, d, op)
  local cont, line = load_axes(op)
  local p = { cont = cont, line = line }
  p.vpl = cont.ext // cfg.vec                  -- vectors per line
  p.count = line.ext * p.vpl                   -- vector loads per tile
  p.per_thread = ceil_div(p.count, d.threads)
  p.ragged = p.count % d.threads ~= 0          -- some threads idle in the last round
  return p
end

function T.check(cfg, limits)
  if cfg.bm % cfg.tm ~= 0 then
    return nil, string.format("bm=%d is not a multiple of tm=%d", cfg.bm, cfg.tm)
  end
  if cfg.bn % cfg.tn ~= 0 then
    return nil, string.format("bn=%d is not a multiple of tn=%d", cfg.bn, cfg.tn)
  end
  local d = derive(cfg)
  if d.threads > limits.max_threads_per_block then
    return nil, string.format(
      "bm=%d bn=%d tm=%d tn=%d give %d threads per block (%d x %d); the limit is %d",
      cfg.bm, cfg.bn, cfg.tm, cfg.tn, d.threads, d.tx, d.ty, limits.max_threads_per_block)
  end
  for _, op in ipairs(operands(cfg, d)) do
    local cont = load_axes(op)
    if cont.ext % cfg.vec ~= 0 then
      return nil, string.format(
        "vec=%d needs %s (the contiguous extent of the %s tile in layout %s) to be a multiple of %d; %s=%d",
        cfg.vec, cont.pname, op.name, cfg.layout, cfg.vec, cont.pname, cont.ext)
    end
  end
  if d.smem > limits.smem_per_block_optin then
    return nil, string.format(
      "bm=%d bn=%d bk=%d pad=%d need %d bytes of shared memory per block; the limit is %d (%s)",
      cfg.bm, cfg.bn, cfg.bk, cfg.pad, d.smem, limits.smem_per_block_optin, limits.name)
  end
  return true
end

function T.resources(cfg)
  local d = derive(cfg)
  return {
    threads = d.threads,
    block = { d.tx, d.ty, 1 },
    smem_static = d.dynamic and 0 or d.smem,
    smem_dynamic = d.dynamic and d.smem or 0,
    loads_a = d.loads_a,                 -- floats of A read from global per phase
    loads_b = d.loads_b,
    flops_per_phase = d.flops,
    cgma = d.cgma,                       -- FLOPs per global load (the seeds' ratio)
    outputs_per_thread = cfg.tm * cfg.tn,
    -- Per block: M x N outputs in tiles of bm x bn, K in phases of bk.
    tile = { m = cfg.bm, n = cfg.bn, k = cfg.bk },
    -- For the tuner's model (templates/README.md): one tile of K at a time,
    -- copied through registers, vec floats per global load
    layout = cfg.layout,
    copy_a = cfg.vec,
    copy_b = cfg.vec,
  }
end

---------------------------------------------------------------------------
-- Rendering
---------------------------------------------------------------------------

local function emit_header(w, cfg, d, meta)
  local res = T.resources(cfg)
  local opa = d.a_trans and "A^T (A stored K x M)" or "A (stored M x K)"
  local opb = d.b_trans and "B^T (B stored N x K)" or "B (stored K x N)"
  w:comment(string.format("Generated by kgen %s from template %s v%d. Regenerate rather than edit.",
    meta.kgen_version, T.name, T.version))
  w:comment("")
  w:comment(string.format("C = alpha * %s * %s + beta * C   (row-major fp32, layout %s)", opa, opb, cfg.layout))
  w:comment("")
  w:comment("Parameters: " .. params.canonical(T.params, cfg))
  w:comment("Derived:")
  w:comment(string.format("  threads per block   %d (%d x %d), each computing %d x %d outputs of C",
    d.threads, d.tx, d.ty, cfg.tm, cfg.tn))
  w:comment(string.format("  shared memory       %d bytes %s: As[%d][%d] + Bs[%d][%d] floats",
    d.smem, d.dynamic and "dynamic" or "static", cfg.bm, d.as_cols, cfg.bk, d.bs_cols))
  w:comment(string.format("  global loads        %d floats of A + %d of B per phase of bk=%d",
    d.loads_a, d.loads_b, cfg.bk))
  w:comment(string.format("  CGMA ratio          %.2f FLOP per global load (%.2f FLOP/byte): 2*bm*bn*bk / (bm*bk + bk*bn)",
    res.cgma, res.cgma / 4))
  w:comment("Launch:")
  w:comment(string.format("  block = (%d, %d, 1)", d.tx, d.ty))
  w:comment(string.format("  grid  = (ceil(N / %d), ceil(M / %d), 1)", cfg.bn, cfg.bm))
  w:comment(string.format("  dynamic shared memory = %d bytes%s", d.dynamic and d.smem or 0,
    d.dynamic and " (raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES first)" or ""))
  w:comment("Preconditions:")
  if cfg.bounds == 1 then
    w:comment("  M, N, K >= 1 (bound checks on: any shape).")
  else
    w:comment(string.format("  no bound checks: M %% %d == 0, N %% %d == 0, K %% %d == 0.", cfg.bm, cfg.bn, cfg.bk))
  end
  w:comment(string.format("  lda >= %s, ldb >= %s, ldc >= N.", d.a_trans and "M" or "K", d.b_trans and "K" or "N"))
  if cfg.vec > 1 then
    w:comment(string.format("  vec=%d: lda and ldb multiples of %d; A and B aligned to %d bytes.",
      cfg.vec, cfg.vec, 4 * cfg.vec))
  end
end

local VEC_TYPE = { [2] = "float2", [4] = "float4" }
local LANES = { "x", "y", "z", "w" }

-- Where element (l, c) of the load plan lands in shared memory.
local function smem_ref(op, lexpr, cexpr)
  if op.trans then return string.format("%s[%s][%s]", op.smem, cexpr, lexpr) end
  return string.format("%s[%s][%s]", op.smem, lexpr, cexpr)
end

-- One cooperative copy of an operand tile from global to shared memory.
local function emit_load(w, cfg, d, op)
  local p = load_plan(cfg, d, op)
  local cont, line = p.cont, p.line
  w:comment(string.format("%s tile: %d x %d floats in %d %s, consecutive threads along %s (coalesced).",
    op.name, op.rows.ext, op.cols.ext, p.count,
    cfg.vec > 1 and ("loads of " .. VEC_TYPE[cfg.vec]) or "loads", cont.limit))
  local idx = "tid"
  if p.per_thread > 1 then
    w:line("#pragma unroll")
    w:open("for (int i = 0; i < %d; ++i)", p.per_thread)
    w:line("const int idx = tid + i * %d;", d.threads)
    idx = "idx"
  else
    w:open("")
  end
  if p.ragged then w:open("if (%s < %d)", idx, p.count) end
  if p.vpl == 1 then
    w:line("const int l = %s;", idx)
    w:line("const int c = 0;")
  else
    w:line("const int l = %s / %d;", idx, p.vpl)
    local c = idx .. " % " .. p.vpl
    w:line("const int c = %s;", cfg.vec == 1 and c or ("(" .. c .. ") * " .. cfg.vec))
  end
  w:line("const int gl = %s + l;", line.origin)
  w:line("const int gc = %s + c;", cont.origin)
  local src = string.format("%s[(size_t)gl * %s + gc", op.ptr, op.ld)
  if cfg.vec == 1 then
    local ref = smem_ref(op, "l", "c")
    if cfg.bounds == 1 then
      w:line("%s = (gl < %s && gc < %s) ? %s] : 0.0f;", ref, line.limit, cont.limit, src)
    else
      w:line("%s = %s];", ref, src)
    end
  else
    local vt = VEC_TYPE[cfg.vec]
    if cfg.bounds == 1 then
      w:line("%s v;", vt)
      w:open("if (gl < %s && gc + %d <= %s)", line.limit, cfg.vec, cont.limit)
      w:line("v = *reinterpret_cast<const %s*>(&%s]);", vt, src)
      w:reopen("else")
      w:comment("Edge of the matrix: element by element, zeros outside.")
      for e = 0, cfg.vec - 1 do
        w:line("v.%s = (gl < %s && gc + %d < %s) ? %s + %d] : 0.0f;",
          LANES[e + 1], line.limit, e, cont.limit, src, e)
      end
      w:close()
    else
      w:line("const %s v = *reinterpret_cast<const %s*>(&%s]);", vt, vt, src)
    end
    for e = 0, cfg.vec - 1 do
      w:line("%s = v.%s;", smem_ref(op, "l", emit.add("c", e)), LANES[e + 1])
    end
  end
  if p.ragged then w:close() end
  w:close()
end

local function emit_compute(w, cfg, d)
  w:comment("Multiply the tiles out of shared memory.")
  w:line("#pragma unroll")
  w:open("for (int kk = 0; kk < %d; ++kk)", cfg.bk)
  if cfg.tm == 1 and cfg.tn == 1 then
    w:line("acc += As[ty][kk] * Bs[kk][tx];")
  else
    w:line("float a[%d], b[%d];", cfg.tm, cfg.tn)
    w:line("#pragma unroll")
    w:line("for (int i = 0; i < %d; ++i) a[i] = As[%s][kk];", cfg.tm, emit.add("ty", emit.mul("i", d.ty)))
    w:line("#pragma unroll")
    w:line("for (int j = 0; j < %d; ++j) b[j] = Bs[kk][%s];", cfg.tn, emit.add("tx", emit.mul("j", d.tx)))
    w:line("#pragma unroll")
    w:line("for (int i = 0; i < %d; ++i)", cfg.tm)
    w:line("    #pragma unroll")
    w:line("    for (int j = 0; j < %d; ++j) acc[i][j] += a[i] * b[j];", cfg.tn)
  end
  w:close()
end

local function emit_store(w, cfg, d)
  w:comment("Write C = alpha * acc + beta * C; C is not read when beta == 0 (BLAS convention).")
  local function store(acc, r, c)
    local dst = string.format("C[(size_t)%s * ldc + %s]", r, c)
    w:line("%s = beta == 0.0f ? alpha * %s : alpha * %s + beta * %s;", dst, acc, acc, dst)
  end
  if cfg.tm == 1 and cfg.tn == 1 then
    w:line("const int r = row0 + ty;")
    w:line("const int c = col0 + tx;")
    if cfg.bounds == 1 then w:line("if (r < M && c < N)") ; w.depth = w.depth + 1 end
    store("acc", "r", "c")
    if cfg.bounds == 1 then w.depth = w.depth - 1 end
    return
  end
  w:line("#pragma unroll")
  w:open("for (int i = 0; i < %d; ++i)", cfg.tm)
  w:line("const int r = row0 + %s;", emit.add("ty", emit.mul("i", d.ty)))
  w:line("#pragma unroll")
  w:open("for (int j = 0; j < %d; ++j)", cfg.tn)
  w:line("const int c = col0 + %s;", emit.add("tx", emit.mul("j", d.tx)))
  if cfg.bounds == 1 then w:line("if (r < M && c < N)"); w.depth = w.depth + 1 end
  store("acc[i][j]", "r", "c")
  if cfg.bounds == 1 then w.depth = w.depth - 1 end
  w:close()
  w:close()
end

function T.render(cfg, meta)
  local d = derive(cfg)
  local w = emit.writer()
  emit_header(w, cfg, d, meta)
  w:blank()
  w:line("extern \"C\" __global__ void __launch_bounds__(%d)", d.threads)
  w:line("%s(int M, int N, int K, float alpha,", d.entry)
  w:line("    const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,")
  w:line("    float beta, float* __restrict__ C, int ldc)")
  w:open("")
  if d.dynamic then
    w:line("extern __shared__ float smem[];")
    w:linec(string.format("float (*As)[%d] = reinterpret_cast<float (*)[%d]>(smem);", d.as_cols, d.as_cols),
      string.format("As[%d][%d]", cfg.bm, d.as_cols))
    w:linec(string.format("float (*Bs)[%d] = reinterpret_cast<float (*)[%d]>(smem + %d);",
      d.bs_cols, d.bs_cols, d.as_floats), string.format("Bs[%d][%d]", cfg.bk, d.bs_cols))
  else
    local padnote = cfg.pad > 0 and string.format(", +%d padding", cfg.pad) or ""
    w:linec(string.format("__shared__ float As[%d][%d];", cfg.bm, d.as_cols), "A tile: bm x bk" .. padnote)
    w:linec(string.format("__shared__ float Bs[%d][%d];", cfg.bk, d.bs_cols), "B tile: bk x bn" .. padnote)
  end
  w:blank()
  w:linec("const int tx = threadIdx.x;", string.format("0..%d, along N", d.tx - 1))
  w:linec("const int ty = threadIdx.y;", string.format("0..%d, along M", d.ty - 1))
  w:linec(string.format("const int tid = %s;", emit.add(emit.mul("ty", d.tx), "tx")), "linear thread index")
  w:linec(string.format("const int row0 = blockIdx.y * %d;", cfg.bm), "first row of C in this block")
  w:linec(string.format("const int col0 = blockIdx.x * %d;", cfg.bn), "first column")
  w:blank()
  if cfg.tm == 1 and cfg.tn == 1 then
    w:line("float acc = 0.0f;")
  else
    w:line("float acc[%d][%d];", cfg.tm, cfg.tn)
    w:line("#pragma unroll")
    w:line("for (int i = 0; i < %d; ++i)", cfg.tm)
    w:line("    #pragma unroll")
    w:line("    for (int j = 0; j < %d; ++j) acc[i][j] = 0.0f;", cfg.tn)
  end
  w:blank()
  w:open("for (int k0 = 0; k0 < K; k0 += %d)", cfg.bk)
  for _, op in ipairs(operands(cfg, d)) do emit_load(w, cfg, d, op) end
  w:linec("__syncthreads();", "tiles complete before anyone reads them")
  w:blank()
  emit_compute(w, cfg, d)
  w:linec("__syncthreads();", "all reads done before the next phase overwrites")
  w:close()
  w:blank()
  emit_store(w, cfg, d)
  w:close()

  return {
    source = w:text(),
    entry = d.entry,
    block = { d.tx, d.ty, 1 },
    -- grid dimension i = ceil(dim / div) * mul, dim one of "M", "N", "K", "1"
    grid = { { dim = "N", div = cfg.bn, mul = 1 }, { dim = "M", div = cfg.bm, mul = 1 },
             { dim = "1", div = 1, mul = 1 } },
    smem_static = d.dynamic and 0 or d.smem,
    smem_dynamic = d.dynamic and d.smem or 0,
    -- What the launcher must refuse: shapes the kernel was not built for.
    requires = {
      m_multiple = cfg.bounds == 1 and 1 or cfg.bm,
      n_multiple = cfg.bounds == 1 and 1 or cfg.bn,
      k_multiple = cfg.bounds == 1 and 1 or cfg.bk,
      ld_multiple = cfg.vec,       -- lda and ldb
      align = 4 * cfg.vec,         -- bytes, A and B base pointers
    },
    layout = cfg.layout,
  }
end

---------------------------------------------------------------------------
-- Memory accesses, for analysis (kgen explain). Each entry mirrors one
-- load or store statement of the generated kernel: given a linear thread
-- index in block (0, 0) and the statement's unrolled iteration, addr()
-- returns the float offset it touches (shared: from the start of the
-- block's shared memory; global: from the matrix's base), or nil when that
-- thread does not execute it. `shape` gives M, N, K, lda, ldb, ldc.
---------------------------------------------------------------------------
function T.accesses(cfg, shape)
  local d = derive(cfg)
  local list = {}
  local origin = { row0 = 0, col0 = 0, k0 = 0 }
  local limit = { M = shape.M, N = shape.N, K = shape.K }
  local ld = { lda = shape.lda, ldb = shape.ldb }
  for _, op in ipairs(operands(cfg, d)) do
    local p = load_plan(cfg, d, op)
    local function coords(tid, i)
      local idx = tid + i * d.threads
      if idx >= p.count then return nil end
      return idx // p.vpl, (idx % p.vpl) * cfg.vec
    end
    list[#list + 1] = {
      name = string.format("load %s tile from %s", op.name, op.ptr), space = "global", op = "load",
      array = op.ptr, width = 4 * cfg.vec, iters = p.per_thread,
      addr = function(tid, i)
        local l, c = coords(tid, i)
        if l == nil then return nil end
        local gl, gc = origin[p.line.origin] + l, origin[p.cont.origin] + c
        if cfg.bounds == 1 and (gl >= limit[p.line.limit] or gc >= limit[p.cont.limit]) then return nil end
        return gl * ld[op.ld] + gc
      end,
    }
    for e = 0, cfg.vec - 1 do
      list[#list + 1] = {
        name = string.format("store %s tile to %s%s", op.name, op.smem,
          cfg.vec > 1 and ("." .. LANES[e + 1]) or ""),
        space = "shared", op = "store", array = op.smem, width = 4, iters = p.per_thread,
        addr = function(tid, i)
          local l, c = coords(tid, i)
          if l == nil then return nil end
          c = c + e
          if op.trans then return op.base + c * op.stride + l end
          return op.base + l * op.stride + c
        end,
      }
    end
  end
  local function txy(tid) return tid % d.tx, tid // d.tx end
  list[#list + 1] = {
    name = "load a from As (inner loop)", space = "shared", op = "load", array = "As", width = 4,
    iters = cfg.tm,
    addr = function(tid, i) local _, ty = txy(tid); return (ty + i * d.ty) * d.as_cols end,
  }
  list[#list + 1] = {
    name = "load b from Bs (inner loop)", space = "shared", op = "load", array = "Bs", width = 4,
    iters = cfg.tn,
    addr = function(tid, j) local tx = txy(tid); return d.as_floats + tx + j * d.tx end,
  }
  for _, kind in ipairs({ "load", "store" }) do
    list[#list + 1] = {
      name = (kind == "load") and "load C (beta != 0)" or "store C", space = "global", op = kind,
      array = "C", width = 4, iters = cfg.tm * cfg.tn,
      addr = function(tid, it)
        local tx, ty = txy(tid)
        local r, c = ty + (it // cfg.tn) * d.ty, tx + (it % cfg.tn) * d.tx
        if r >= shape.M or c >= shape.N then return nil end
        return r * shape.ldc + c
      end,
    }
  end
  return list
end

return T
