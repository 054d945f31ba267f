-- Test-only: render() returns a malformed geometry (grid is not a list).
local T = { name = "badgrid", version = 1 }
T.params = { { name = "n", type = "int", default = 1, min = 1, max = 2, doc = "unused" } }
function T.check() return true end
function T.resources() return { threads = 1 } end
function T.render() return { source = "x", entry = "e", block = { 1, 1, 1 }, grid = 5 } end
return T
