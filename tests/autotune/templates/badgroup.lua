-- badgroup: a test-only template whose space group names no parameter
-- (tests/autotune/test_walk.c). Never compiled.
local T = { name = "badgroup", version = 1 }
T.params = { { name = "a", type = "int", default = 1, values = { 1, 2 }, doc = "the only one" } }
T.space = { a = { 1 } }
T.space_groups = { { z = { 1 } } }
function T.check(cfg, limits) return true end
function T.resources(cfg)
  return { threads = 32, smem_static = 0, smem_dynamic = 0, outputs_per_thread = 1, loads_a = 1, loads_b = 1,
           flops_per_phase = 2, tile = { m = 1, n = 1, k = 1 } }
end
function T.render(cfg, meta)
  return { source = "// badgroup\n", entry = "kgen_badgroup", block = { 32, 1, 1 },
           grid = { { dim = "M" }, { dim = "N" }, { dim = "1" } } }
end
return T
