-- Test fixture for `kgen explain`: a complete template (a naive kernel, one
-- output per thread) that provides no accesses(). explain must say that it
-- cannot analyse loads and stores and still report everything else.
local T = { name = "noaccess", version = 1 }

T.params = {
  { name = "bs", type = "int", default = 8, values = { 8, 16 }, doc = "block side in threads" },
}

function T.check(cfg, limits)
  if cfg.bs * cfg.bs > limits.max_threads_per_block then
    return nil, string.format("bs=%d gives %d threads; the limit is %d", cfg.bs, cfg.bs * cfg.bs,
      limits.max_threads_per_block)
  end
  return true
end

-- Per thread and k step: one float of A, one of B, one multiply-add.
function T.resources(cfg)
  return { threads = cfg.bs * cfg.bs, block = { cfg.bs, cfg.bs, 1 }, smem_static = 0, smem_dynamic = 0,
           loads_a = 1, loads_b = 1, flops_per_phase = 2, cgma = 1, tile = { m = 1, n = 1, k = 1 },
           outputs_per_thread = 1 }
end

function T.render(cfg, meta)
  local entry = string.format("fixture_naive_%d", cfg.bs)
  local src = table.concat({
    "// Test fixture: a naive matmul without accesses(); nn layout only.",
    string.format("extern \"C\" __global__ void __launch_bounds__(%d)", cfg.bs * cfg.bs),
    entry .. "(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,",
    "    float beta, float* C, int ldc)",
    "{",
    string.format("    const int r = blockIdx.y * %d + threadIdx.y, c = blockIdx.x * %d + threadIdx.x;", cfg.bs, cfg.bs),
    "    if (r >= M || c >= N) return;",
    "    float acc = 0.0f;",
    "    for (int k = 0; k < K; ++k) acc += A[(size_t)r * lda + k] * B[(size_t)k * ldb + c];",
    "    C[(size_t)r * ldc + c] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[(size_t)r * ldc + c];",
    "}",
    "" }, "\n")
  return { source = src, entry = entry, block = { cfg.bs, cfg.bs, 1 },
           grid = { { dim = "N", div = cfg.bs, mul = 1 }, { dim = "M", div = cfg.bs, mul = 1 },
                    { dim = "1", div = 1, mul = 1 } },
           smem_static = 0, smem_dynamic = 0, layout = "nn" }
end

return T
