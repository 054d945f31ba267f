-- A small writer for generated CUDA: lines, indentation and blocks.
-- Templates build their text with it so the emitted code stays flat and
-- readable, and the template code stays close to the text it produces.

local M = {}

local Writer = {}
Writer.__index = Writer
Writer.__metatable = false -- shared by every template: not to be modified through an instance

function M.writer()
  return setmetatable({ lines = {}, depth = 0 }, Writer)
end

-- Appends one line at the current indentation; extra arguments format it.
function Writer:line(s, ...)
  if select("#", ...) > 0 then s = string.format(s, ...) end
  if s == "" then
    self.lines[#self.lines + 1] = ""
  else
    self.lines[#self.lines + 1] = string.rep("    ", self.depth) .. s
  end
  return self
end

function Writer:blank()
  if self.lines[#self.lines] ~= "" then self.lines[#self.lines + 1] = "" end
  return self
end

-- Opens a brace block: `s {`, and indents what follows until close().
function Writer:open(s, ...)
  if select("#", ...) > 0 then s = string.format(s, ...) end
  self:line(s == "" and "{" or (s .. " {"))
  self.depth = self.depth + 1
  return self
end

function Writer:close(suffix)
  self.depth = self.depth - 1
  self:line("}" .. (suffix or ""))
  return self
end

-- Closes the current block and opens the next on the same line: "} else {".
function Writer:reopen(s, ...)
  if select("#", ...) > 0 then s = string.format(s, ...) end
  self.depth = self.depth - 1
  self:line("} " .. s .. " {")
  self.depth = self.depth + 1
  return self
end

-- A line of code with a trailing comment, comments aligned at one column.
function Writer:linec(code, comment)
  local indent = string.rep("    ", self.depth)
  local pad = math.max(1, 44 - #indent - #code)
  self.lines[#self.lines + 1] = indent .. code .. string.rep(" ", pad) .. "// " .. comment
  return self
end

-- Appends several lines of comment text, each prefixed with "// ".
function Writer:comment(text)
  for l in (text .. "\n"):gmatch("(.-)\n") do
    if l == "" then self:line("//") else self:line("// " .. l) end
  end
  return self
end

function Writer:text()
  return table.concat(self.lines, "\n") .. "\n"
end

-- "a * b" helpers that fold constants, so generated index math has no "* 1".
function M.mul(a, b)
  if a == 1 or a == "1" then return tostring(b) end
  if b == 1 or b == "1" then return tostring(a) end
  return tostring(a) .. " * " .. tostring(b)
end

function M.add(a, b)
  if a == 0 or a == "0" then return tostring(b) end
  if b == 0 or b == "0" then return tostring(a) end
  return tostring(a) .. " + " .. tostring(b)
end

return M
