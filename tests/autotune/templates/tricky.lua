-- tricky: a test-only template whose check() makes the space walk's
-- pruning work hard (tests/autotune/test_walk.c compares the walk with a
-- brute-force enumeration): rules that read a parameter only on some
-- branches, a late parameter deciding before an early one, a helper that
-- walks cfg with pairs(), a write into cfg, a rule on the limits, and
-- resources() that read a parameter check() never reads, on one branch.
-- It renders nothing useful: it is never compiled.

local T = { name = "tricky", version = 1 }

T.params = {
  { name = "a", type = "int", default = 1, values = { 1, 2, 3, 4 }, doc = "first" },
  { name = "b", type = "int", default = 1, values = { 1, 2, 3 }, doc = "second" },
  { name = "mode", type = "enum", default = "x", values = { "x", "y", "z" }, doc = "a mode" },
  { name = "c", type = "int", default = 0, values = { 0, 1 }, doc = "third" },
  { name = "d", type = "int", default = 1, values = { 1, 2, 4, 8 }, doc = "fourth" },
  { name = "e", type = "int", default = 0, values = { 0, 1, 2 }, doc = "read by resources() only" },
  { name = "f", type = "int", default = 0, values = { 0, 1 }, doc = "never read" },
}

T.space = { a = { 1, 2, 3, 4 }, b = { 1, 2, 3 }, mode = { "x", "y", "z" }, c = { 0, 1 }, d = { 1, 2, 4, 8 },
            e = { 0, 1, 2 }, f = { 0, 1 } }

-- the sum of every integer parameter, through pairs()
local function total(cfg)
  local s = 0
  for _, v in pairs(cfg) do
    if math.type(v) == "integer" then s = s + v end
  end
  return s
end

function T.check(cfg, limits)
  -- a late parameter first, on one branch only
  if cfg.d == 8 and cfg.a > 2 then return nil, "d=8 needs a <= 2" end
  if cfg.mode == "y" then
    if cfg.b == 3 then return nil, "mode=y needs b < 3" end
  elseif cfg.mode == "z" then
    if cfg.c == 1 and cfg.a % 2 == 0 then return nil, "mode=z with c=1 needs an odd a" end
    -- pairs() reads everything
    if total(cfg) % 5 == 0 then return nil, "mode=z: the parameters must not sum to a multiple of 5" end
  end
  if cfg.a * cfg.d > limits.max_threads_per_block // 128 then return nil, "a*d is over the limit" end
  if cfg.c == 1 then
    cfg.b_next = cfg.b + 1 -- a write (of a field that is no parameter)
    if cfg.b_next > 3 then return nil, "c=1 needs b < 3" end
  end
  return true
end

-- e on one branch only (c = 1), so that one pass's subtree holds several
-- readings of resources() and another one
function T.resources(cfg)
  local k = cfg.c == 1 and cfg.e + 1 or 1
  return { threads = 32 * cfg.a, smem_static = 16 * k, smem_dynamic = 0, outputs_per_thread = cfg.d,
           loads_a = cfg.b, loads_b = 1, flops_per_phase = 2, tile = { m = cfg.a, n = cfg.b, k = k } }
end

function T.render(cfg, meta)
  return { source = "// tricky: never compiled\n", entry = "kgen_tricky", block = { 32, 1, 1 },
           grid = { { dim = "M" }, { dim = "N" }, { dim = "1" } } }
end

return T
