-- Test-only: a params list whose entry is not a declaration.
local T = { name = "badparams", version = 1 }
T.params = { 5 }
function T.check() return true end
function T.resources() return {} end
function T.render() return {} end
return T
