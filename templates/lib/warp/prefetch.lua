-- The K loop with stages = 1: register prefetch into two buffers. Each
-- trip loads the next tile into registers (with ba = 1 only A, while B's
-- copies go into the other buffer with cp.async), multiplies the current
-- tile and then (or halfway through it with mid = 1) stores the registers
-- into the other buffer; with xb = 1 the next tile's first fragments are
-- read right after the barrier, behind the current tile's last FFMAs.

local copy = require "lib.warp.copy"
local compute = require "lib.warp.compute"
local schedule = require "lib.warp.schedule"

local M = {}

local VEC_TYPE = copy.VEC_TYPE

function M.emit(w, cfg, d)
  local A, B = d.A, d.B
  local checked = cfg.bounds == 1
  local function open_next(ahead, why) return schedule.open_next(w, cfg, ahead, why) end
  local staged = B.async and { A } or { A, B } -- operands through registers
  for _, op in ipairs(staged) do
    for i = 0, op.per_thread - 1 do w:line("%s %s_reg%d;", VEC_TYPE[op.cvec], op.p, i) end
  end
  -- bdst: with ba = 1 B's tile goes straight into that buffer (cp.async)
  local function fetch(k0, kcheck, bdst, gate)
    w:line("const int k0 = %s;", k0)
    copy.emit_fetch(w, cfg, d, A, kcheck, gate)
    if B.async then
      w:line("float* bs = %s;", bdst)
      copy.emit_async(w, cfg, d, B, "bs", kcheck, gate)
      w:line("kgen_cp_async_commit();")
    else
      copy.emit_fetch(w, cfg, d, B, kcheck, gate)
    end
  end
  w:open("")
  fetch(schedule.first_k0(cfg), checked, string.format("smem + %d", B.base))
  w:close()
  copy.emit_stash(w, d, A, "smem")
  if B.async then
    w:linec("asm volatile(\"cp.async.wait_group 0;\\n\" ::);", "B's first tile has landed (this thread's copies)")
  else
    copy.emit_stash(w, d, B, string.format("(smem + %d)", B.base))
  end
  w:line("__syncthreads();")
  if cfg.xb == 1 then
    w:line("float a_n[%d][%d], b_n[%d][%d];", d.kg, d.rows, d.kg, d.cols)
    compute.first_fragments(w, cfg, d, "smem", string.format("(smem + %d)", B.base))
  end
  w:open("for (int t = 0; t < ktiles; ++t)")
  w:line("const int cur = t & 1;")
  local gate = open_next(1, "after the last tile the loads read nothing (no branch)")
  if B.async then
    w:comment("Prefetch the next tile: A into registers, B with cp.async into the other buffer (its")
    w:comment("readers passed the last barrier); both fly during the multiplication.")
  else
    w:comment("Prefetch the next tile into registers; the loads fly during the multiplication.")
  end
  fetch(checked and string.format("(kt0 + t) * %d", cfg.bk) or string.format("(kt0 + t + 1) * %d", cfg.bk), false,
    string.format("smem + (cur ^ 1) * %d + %d", d.stage_floats, B.base), gate)
  w:close()
  w:line("const float* as = smem + cur * %d;", d.stage_floats)
  w:line("const float* bs = smem + cur * %d + %d;", d.stage_floats, B.base)
  local function stash()
    if cfg.mid == 1 then
      w:comment("Store the next tile halfway: the other buffer's readers passed the last barrier.")
    end
    if cfg.pred == 1 then
      w:open("")
      w:comment("Unconditional: after the last tile this stores zeros into the idle buffer.")
    else
      w:open("if (t + 1 < ktiles)")
    end
    w:line("float* nas = smem + (cur ^ 1) * %d;", d.stage_floats)
    copy.emit_stash(w, d, A, "nas")
    if not B.async then
      w:line("float* nbs = smem + (cur ^ 1) * %d + %d;", d.stage_floats, B.base)
      copy.emit_stash(w, d, B, "nbs")
    end
    w:close()
  end
  local function barrier()
    if B.async then
      w:linec("asm volatile(\"cp.async.wait_group 0;\\n\" ::);", "B's next tile has landed (this thread's copies)")
    end
    w:linec("__syncthreads();", "stores visible; reads of `cur` done")
  end
  if cfg.xb == 1 then
    compute.emit(w, cfg, d, "as", "bs", nil, function()
      stash()
      barrier()
      w:comment("The next tile's first fragments (past the last tile: unused reads of the idle buffer).")
      compute.first_fragments(w, cfg, d, string.format("(smem + (cur ^ 1) * %d)", d.stage_floats),
        string.format("(smem + (cur ^ 1) * %d + %d)", d.stage_floats, B.base))
    end)
  elseif cfg.mid == 1 then
    compute.emit(w, cfg, d, "as", "bs", stash)
    barrier()
  else
    compute.emit(w, cfg, d, "as", "bs")
    stash()
    barrier()
  end
  w:close()
end

return M
