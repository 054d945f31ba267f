-- Test fixture for `kgen explain`: accesses() that break the contract in
-- three ways (mode 0: a 16-byte access at a misaligned address; 1: an
-- address that is not a number; 2: an unknown memory space). explain must
-- reject each with an error naming the template line or the rule.
local T = { name = "badaccess", version = 1 }

T.params = {
  { name = "mode", type = "int", default = 0, values = { 0, 1, 2 }, doc = "which rule to break" },
}

function T.check(cfg, limits) return true end

function T.resources(cfg)
  return { threads = 64, block = { 64, 1, 1 }, smem_static = 0, smem_dynamic = 0, loads_a = 1, loads_b = 1,
           flops_per_phase = 2, cgma = 1, tile = { m = 1, n = 1, k = 1 }, outputs_per_thread = 1 }
end

function T.render(cfg, meta)
  local src = "extern \"C\" __global__ void fixture_bad(int M, int N, int K, float alpha, const float* A, int lda, "
    .. "const float* B, int ldb, float beta, float* C, int ldc) {}\n"
  return { source = src, entry = "fixture_bad", block = { 64, 1, 1 },
           grid = { { dim = "N", div = 64, mul = 1 }, { dim = "M", div = 1, mul = 1 }, { dim = "1", div = 1, mul = 1 } },
           smem_static = 0, smem_dynamic = 0, layout = "nn" }
end

function T.accesses(cfg, shape)
  if cfg.mode == 1 then
    return { { name = "load A", space = "global", op = "load", array = "A", width = 4, iters = 1,
               addr = function(tid, i) return "x" .. tid end } }
  elseif cfg.mode == 2 then
    return { { name = "load A", space = "texture", op = "load", array = "A", width = 4, iters = 1,
               addr = function(tid, i) return tid end } }
  end
  return { { name = "load A as float4", space = "global", op = "load", array = "A", width = 16, iters = 1,
             addr = function(tid, i) return tid end } }
end

return T
