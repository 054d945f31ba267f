-- broken: a test template that renders CUDA which does not compile, so that
-- tests can check that the compile error carries NVRTC's whole log.

local T = { name = "broken", version = 1 }

T.params = {
  { name = "x", type = "int", default = 1, min = 1, max = 8, doc = "unused" },
}

function T.check(cfg, limits) return true end

function T.resources(cfg) return { threads = 32, block = { 32, 1, 1 }, smem_static = 0, smem_dynamic = 0 } end

function T.render(cfg, meta)
  return {
    source = "// broken on purpose\n" ..
             "extern \"C\" __global__ void broken_kernel(float* out)\n" ..
             "{\n" ..
             "    out[threadIdx.x] = undefined_identifier_kgen_test_42 + " .. cfg.x .. ";\n" ..
             "}\n",
    entry = "broken_kernel", block = { 32, 1, 1 },
    grid = { { dim = "1", div = 1, mul = 1 }, { dim = "1", div = 1, mul = 1 }, { dim = "1", div = 1, mul = 1 } },
    smem_static = 0, smem_dynamic = 0,
  }
end

return T
