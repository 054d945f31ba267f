-- Configuration text <-> configuration table, shared by every template.
--
-- A configuration is a flat set of named integer or enum parameters, written
-- as text "bm=128 bn=128 bk=16". Parsing is strict: unknown names, repeated
-- names, malformed or out-of-range values are errors that name the parameter.
-- Rules that tie parameters together live in each template's check().
--
-- A parameter declaration (one entry of a template's `params` list):
--   { name = "bm", type = "int", default = 64, min = 1, max = 512, doc = "..." }
--   { name = "vec", type = "int", default = 1, values = {1, 2, 4}, doc = "..." }
--   { name = "layout", type = "enum", default = "nn", values = {"nn", ...}, doc = "..." }

local M = {}

-- Checks a template's parameter declarations; raises an error naming the
-- first bad entry, so that the C side may walk the list without checks.
function M.validate(params)
  if type(params) ~= "table" or getmetatable(params) ~= nil then
    error("params must be a plain list of parameter declarations", 0)
  end
  local seen = {}
  for i, p in ipairs(params) do
    local function bad(why) error(string.format("params[%d]: %s", i, why), 0) end
    if type(p) ~= "table" then bad("not a table") end
    if type(p.name) ~= "string" or not p.name:match("^[%a_][%w_]*$") then bad("name must be an identifier") end
    if seen[p.name] then bad("'" .. p.name .. "' declared twice") end
    seen[p.name] = true
    if type(p.doc) ~= "string" then bad("'" .. p.name .. "' needs a doc string") end
    if p.type == "enum" then
      if type(p.values) ~= "table" or #p.values == 0 then bad("enum '" .. p.name .. "' needs values") end
      for _, v in ipairs(p.values) do
        if type(v) ~= "string" then bad("enum '" .. p.name .. "' values must be strings") end
      end
    elseif p.type == "int" then
      if p.values then
        if type(p.values) ~= "table" or #p.values == 0 then bad("'" .. p.name .. "' values must be a list") end
        for _, v in ipairs(p.values) do
          if math.type(v) ~= "integer" then bad("'" .. p.name .. "' values must be integers") end
        end
      elseif math.type(p.min) ~= "integer" or math.type(p.max) ~= "integer" or p.min > p.max then
        bad("int '" .. p.name .. "' needs integer min <= max, or values")
      end
    else
      bad("'" .. p.name .. "' has type " .. tostring(p.type) .. " (int or enum)")
    end
    local ok, why = pcall(M.convert, p, tostring(p.default))
    if p.default == nil or not ok or why == nil then bad("'" .. p.name .. "' has no valid default") end
  end
  return true
end

local function find(params, name)
  for _, p in ipairs(params) do
    if p.name == name then return p end
  end
  return nil
end
M.find = find

local function allowed_text(p)
  if p.values then
    local t = {}
    for i, v in ipairs(p.values) do t[i] = tostring(v) end
    return table.concat(t, ", ")
  end
  return string.format("%d..%d", p.min, p.max)
end
M.allowed_text = allowed_text

local function contains(list, v)
  for _, x in ipairs(list) do
    if x == v then return true end
  end
  return false
end

-- Converts one textual value for parameter p; returns value or nil, message.
function M.convert(p, text)
  if text == nil or text == "" then
    return nil, string.format("%s: missing value (allowed: %s)", p.name, allowed_text(p))
  end
  if p.type == "enum" then
    if not contains(p.values, text) then
      return nil, string.format("%s: unknown value '%s' (allowed: %s)", p.name, text, allowed_text(p))
    end
    return text
  end
  if not text:match("^[+-]?%d+$") then
    return nil, string.format("%s: '%s' is not an integer", p.name, text)
  end
  -- More than 9 digits cannot be a sensible tile parameter and could overflow
  -- the C side's 32-bit integers; reject before converting.
  local digits = text:gsub("^[+-]?0*", "")
  local v = math.tointeger(tonumber(text))
  if #digits > 9 or v == nil then
    return nil, string.format("%s: '%s' is out of range (allowed: %s)", p.name, text, allowed_text(p))
  end
  if p.values then
    if not contains(p.values, v) then
      return nil, string.format("%s must be one of %s (got %d)", p.name, allowed_text(p), v)
    end
  elseif v < p.min or v > p.max then
    return nil, string.format("%s must be %d..%d (got %d)", p.name, p.min, p.max, v)
  end
  return v
end

-- Parses "name=value name=value ..." into a table of given values.
-- Returns cfg, or nil and a message naming the parameter.
function M.parse_given(params, text)
  local given = {}
  for item in text:gmatch("%S+") do
    local name, value = item:match("^([^=]*)=(.*)$")
    if not name then
      return nil, string.format("'%s' is not of the form name=value", item)
    end
    local p = find(params, name)
    if not p then
      return nil, string.format("unknown parameter '%s'", name)
    end
    local v, err = M.convert(p, value)
    if v == nil then return nil, err end
    if given[name] ~= nil then
      return nil, string.format("%s given twice (%s and %s)", name, tostring(given[name]), value)
    end
    given[name] = v
  end
  return given
end

-- Fills defaults for every parameter not given.
function M.complete(params, given)
  local cfg = {}
  for _, p in ipairs(params) do
    if given[p.name] ~= nil then cfg[p.name] = given[p.name] else cfg[p.name] = p.default end
  end
  return cfg
end

-- The canonical text of a configuration: every parameter, in declaration
-- order, except one declared `omit_default` that is at its default (a
-- parameter added to a template after its kernels were tuned and catalogued
-- leaves the text, the id and the kernel of every configuration that does
-- not set it as they were).
function M.canonical(params, cfg)
  local t = {}
  for _, p in ipairs(params) do
    if not (p.omit_default and cfg[p.name] == p.default) then
      t[#t + 1] = p.name .. "=" .. tostring(cfg[p.name])
    end
  end
  return table.concat(t, " ")
end

-- A short identifier of a configuration: the 64-bit FNV-1a hash of its
-- canonical text, as 16 hex digits. Templates append it to their kernels'
-- names, so that every configuration's kernel has a name of its own.
function M.id(params, cfg)
  local text = M.canonical(params, cfg)
  local h = 0xcbf29ce484222325 -- the offset basis; integers wrap around at 64 bits
  for i = 1, #text do
    h = (h ~ text:byte(i)) * 0x100000001b3
  end
  return string.format("%016x", h)
end

return M
