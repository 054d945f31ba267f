-- Test-only: render() returns preconditions the host must refuse: a vector
-- operand that is neither A nor B (how=1) or a largest M below 1 (how=2).
local T = { name = "badrequires", version = 1 }
T.params = { { name = "how", type = "int", default = 1, min = 1, max = 2, doc = "which field is broken" } }
function T.check() return true end
function T.resources() return { threads = 1 } end
function T.render(cfg)
  local req = cfg.how == 1 and { vector_operand = "C" } or { m_max = 0 }
  return { source = "x", entry = "e", block = { 1, 1, 1 },
           grid = { { dim = "1", div = 1, mul = 1 }, { dim = "1", div = 1, mul = 1 }, { dim = "1", div = 1, mul = 1 } },
           requires = req }
end
return T
