-- Test-only: template bodies that try to run without bound where Lua's
-- instruction hook does not reach (finalizers, pattern matching in C).
local T = { name = "hostile", version = 1 }
T.params = { { name = "how", type = "enum", default = "gc", doc = "which trick",
               values = { "gc", "gc_later", "find", "match", "gmatch", "gsub", "plain", "fine" } } }
function T.check() return true end
function T.resources() return {} end
local long = string.rep("a", 40000)
local evil = ".-.-.-.-.-.-.-b"
function T.render(cfg)
  if cfg.how == "gc" then
    setmetatable({}, { __gc = function() while true do end end })
    for i = 1, 100000 do local t = { i } end   -- give the collector work
  elseif cfg.how == "gc_later" then
    local mt = { __gc = false }
    setmetatable({}, mt)
    mt.__gc = function() while true do end end
  elseif cfg.how == "find" then
    string.find(long, evil)
  elseif cfg.how == "match" then
    long:match("^" .. evil)
  elseif cfg.how == "gmatch" then
    for _ in long:gmatch("a-a-a-a-a-a-b") do end
  elseif cfg.how == "gsub" then
    long:gsub(evil, "")
  elseif cfg.how == "plain" then
    local hay = string.rep("a", 1 << 20)
    local needle = string.rep("a", 1 << 16) .. "b"
    for _ = 1, 1000 do hay:find(needle, 1, true) end
  end
  -- "fine": the patterns a real template uses still work
  local lines = {}
  for l in ("one\ntwo\n"):gmatch("(.-)\n") do lines[#lines + 1] = l end
  return { source = table.concat(lines, "+") .. (("a1b22"):gsub("%d+", "#")), entry = "e", block = { 1, 1, 1 },
           grid = { { dim = "1" }, { dim = "1" }, { dim = "1" } } }
end
return T
