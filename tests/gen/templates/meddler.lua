-- Test-only: tries to change what other templates see, then renders nothing useful.
local T = { name = "meddler", version = 1 }
T.params = { { name = "how", type = "enum", default = "global", doc = "which trick",
               values = { "global", "string", "module", "metatable", "bytecode", "loop", "memory" } } }
function T.check() return true end
function T.resources() return {} end
function T.render(cfg)
  if cfg.how == "global" then
    tostring = function() return "HIJACKED" end   -- lands in this module's own environment
    require = nil
  elseif cfg.how == "string" then
    string.format = function() return "HIJACKED" end
  elseif cfg.how == "module" then
    require("lib.emit").writer = function() error("HIJACKED") end
  elseif cfg.how == "metatable" then
    local w = require("lib.emit").writer()
    getmetatable(w).line = function() error("HIJACKED") end
  elseif cfg.how == "bytecode" then
    return load(string.dump(function() end))
  elseif cfg.how == "loop" then
    while true do end
  elseif cfg.how == "memory" then
    local t = {}
    for i = 1, 1 << 40 do t[i] = i end
  end
  return { source = "x", entry = "e", block = { 1, 1, 1 },
           grid = { { dim = "1" }, { dim = "1" }, { dim = "1" } } }
end
return T
