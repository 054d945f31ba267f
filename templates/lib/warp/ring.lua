-- The K loop with stages >= 2: a ring of `stages` shared-memory buffers
-- filled by cp.async. The prologue starts the copies of the first
-- stages - 1 tiles, one commit group each; each trip waits for tile t,
-- starts the copies of tile t + stages - 1 into the buffer tile t - 1 left
-- (before the multiplication, halfway through it with mid = 1, or a few
-- before each step of k with spread = 1) and multiplies tile t.

local emit = require "lib.emit"
local plan = require "lib.warp.plan"
local copy = require "lib.warp.copy"
local compute = require "lib.warp.compute"
local schedule = require "lib.warp.schedule"

local M = {}

local mul = plan.mul

function M.emit(w, cfg, d)
  local A, B = d.A, d.B
  local checked = cfg.bounds == 1
  local function open_next(ahead, why) return schedule.open_next(w, cfg, ahead, why) end
  -- the buffers of A and B in stage `stage` of the ring
  local function bufs(stage)
    local off = mul(stage, d.stage_floats)
    return off == "0" and "smem" or string.format("smem + %s", off),
      string.format("smem + %s", emit.add(off, B.base))
  end
  local function issue(stage, k0, kcheck, gate, walk)
    local as, bs = bufs(stage)
    w:line("const int k0 = %s;", k0)
    w:line("float* as = %s;", as)
    w:line("float* bs = %s;", bs)
    copy.emit_async(w, cfg, d, A, "as", kcheck, gate, walk)
    copy.emit_async(w, cfg, d, B, "bs", kcheck, gate, walk)
    if walk then
      copy.emit_walk_step(w, cfg, d, A)
      copy.emit_walk_step(w, cfg, d, B)
    end
  end
  w:comment(string.format("Prologue: start the copies of the first %d tile%s, one commit group each.",
    cfg.stages - 1, cfg.stages > 2 and "s" or ""))
  w:open("")
  issue("0", schedule.first_k0(cfg), checked)
  w:close()
  w:line("kgen_cp_async_commit();")
  for st = 1, cfg.stages - 2 do
    w:open("if (%d < ktiles)", st)
    issue(tostring(st), checked and string.format("%s * %d", st == 1 and "kt0" or string.format("(kt0 + %d)", st - 1), cfg.bk)
      or string.format("(kt0 + %d) * %d", st, cfg.bk), false)
    w:close()
    w:linec("kgen_cp_async_commit();", "empty groups keep the count")
  end
  -- k0 of the tile the loop's trip t copies, and of trip 0's (the walking pointers' start)
  local ahead = checked and cfg.stages - 2 or cfg.stages - 1
  local loop_k0 = string.format("(kt0 + t + %d) * %d", ahead, cfg.bk)
  copy.emit_walk_setup(w, cfg, d, A, string.format("(kt0 + %d) * %d", ahead, cfg.bk))
  copy.emit_walk_setup(w, cfg, d, B, string.format("(kt0 + %d) * %d", ahead, cfg.bk))
  w:line("int rs = 0, ws = %d;", cfg.stages - 1)
  w:open("for (int t = 0; t < ktiles; ++t)")
  w:linec(string.format("asm volatile(\"cp.async.wait_group %d;\\n\" ::);", cfg.stages - 2), "tile t has landed (this thread's copies)")
  w:linec("__syncthreads();", "... everyone's; and tile t-1 is no longer read")
  -- closes a trip's copies: their commit group, and the ring's next buffer to fill
  local function commit_trip()
    w:line("kgen_cp_async_commit();")
    w:line("ws = ws == %d ? 0 : ws + 1;", cfg.stages - 1)
  end
  local function next_copies()
    if cfg.mid == 1 then
      w:comment("Start the copies of a later tile halfway: its buffer's readers passed the barrier.")
    end
    local gate = open_next(cfg.stages - 1, "past the last tile the copies read nothing (no branch)")
    issue("ws", loop_k0, false, gate, true)
    w:close()
    commit_trip()
  end
  -- spread = 1: the copies of the later tile, A's and B's alternating,
  -- shared out over the steps of k in order and evenly (of n copies over
  -- S steps, step j takes numbers j * n // S + 1 to (j + 1) * n // S, so
  -- a step takes none where there are fewer copies than steps); each
  -- step's go before its fragment reads, so that ptxas interleaves their
  -- address arithmetic with the FFMAs instead of issuing 2 x per_thread
  -- copies in a burst after the barrier, where every warp of the block
  -- stalls on it at once. The trip's commit group closes after the last
  -- step; the tile it copies is waited for at the top of the trip
  -- stages - 1 later, so with 2 stages the next trip would wait at once
  -- for the copies its predecessor's last step issued (check() asks for 3).
  local function spread_copies()
    w:linec(string.format("const bool more = t + %d < ktiles;", cfg.stages - 1),
      "past the last tile the copies read nothing (no branch)")
    w:line("const int k0 = %s;", loop_k0)
    local was, wbs = bufs("ws")
    w:line("float* was = %s;", was)
    w:line("float* wbs = %s;", wbs)
    local ca = copy.async_copies(cfg, d, A, "was", false, "more", true, "a_p")
    local cb = copy.async_copies(cfg, d, B, "wbs", false, "more", true, "b_p")
    if ca.head then ca.head(w) end
    if cb.head then cb.head(w) end
    local all = {}
    for i = 1, math.max(#ca.copies, #cb.copies) do
      all[#all + 1] = ca.copies[i]
      all[#all + 1] = cb.copies[i]
    end
    local steps = d.kslice // d.kg
    return function()
      for j = 0, steps - 1 do
        local lo, hi = (j * #all) // steps + 1, ((j + 1) * #all) // steps
        if hi >= lo then
          w:open("if (kk == %d)", j * d.kg)
          for i = lo, hi do all[i](w) end
          w:close()
        end
      end
    end
  end
  local each
  if cfg.spread == 1 then each = spread_copies()
  elseif cfg.mid ~= 1 then next_copies() end
  local as, bs = bufs("rs")
  w:line("const float* as = %s;", as)
  w:line("const float* bs = %s;", bs)
  compute.emit(w, cfg, d, "as", "bs", cfg.mid == 1 and next_copies or nil, nil, each)
  if each then
    copy.emit_walk_step(w, cfg, d, A)
    copy.emit_walk_step(w, cfg, d, B)
    commit_trip()
  end
  w:line("rs = rs == %d ? 0 : rs + 1;", cfg.stages - 1)
  w:close()
  if cfg.pred == 1 then
    w:linec("asm volatile(\"cp.async.wait_group 0;\\n\" ::);", "the zero-filling copies past the last tile have landed")
  end
end

return M
