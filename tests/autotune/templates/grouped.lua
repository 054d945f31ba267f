-- grouped: a test-only template with `space_groups` (tests/autotune/
-- test_walk.c): two groups that reach values outside the space and overlap
-- it and each other, so that the walk must add each combination once.
-- It renders nothing useful: it is never compiled.

local T = { name = "grouped", version = 1 }

T.params = {
  { name = "a", type = "int", default = 1, values = { 1, 2, 3, 4 }, doc = "first" },
  { name = "b", type = "int", default = 1, values = { 1, 2, 3 }, doc = "second" },
  { name = "mode", type = "enum", default = "x", values = { "x", "y" }, doc = "a mode" },
  { name = "c", type = "int", default = 0, values = { 0, 1 }, doc = "third" },
}

T.space = { a = { 1, 2 }, b = { 1, 2 }, mode = { "x", "y" }, c = { 0, 1 } }

T.space_groups = {
  { a = { 3, 4 } },
  { a = { 2, 3 }, b = { 2, 3 }, mode = { "y" } },
}

function T.check(cfg, limits)
  if cfg.a * cfg.b > 6 then return nil, "a*b must be at most 6" end
  if cfg.mode == "y" and cfg.c == 1 and cfg.a % 2 == 1 then return nil, "mode=y with c=1 needs an even a" end
  return true
end

function T.resources(cfg)
  return { threads = 32 * cfg.a, smem_static = 16, smem_dynamic = 0, outputs_per_thread = 1,
           loads_a = cfg.b, loads_b = 1, flops_per_phase = 2, tile = { m = cfg.a, n = cfg.b, k = 1 } }
end

function T.render(cfg, meta)
  return { source = "// grouped: never compiled\n", entry = "kgen_grouped", block = { 32, 1, 1 },
           grid = { { dim = "M" }, { dim = "N" }, { dim = "1" } } }
end

return T
