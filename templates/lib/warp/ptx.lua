-- The inline-PTX helper functions a matmul_warp kernel calls, each group
-- emitted only when the kernel uses it: cp.async copies (sm_80), the vector
-- reduction red.global.add.v4.f32, programmatic dependent launch and
-- thread-block clusters with distributed shared memory (sm_90).

local M = {}

-- cp.async: the copy sizes the operands use, and the commit.
function M.cp_async(w, d)
  if not (d.A.async or d.B.async) then return end
  w:comment("Asynchronous copies global -> shared (sm_80+): `bytes` of the copy are read, the rest zero-filled.")
  w:open("__device__ __forceinline__ unsigned kgen_smem(const float* p)")
  w:line("return static_cast<unsigned>(__cvta_generic_to_shared(p));")
  w:close()
  local sizes = {}
  for _, op in ipairs({ d.A, d.B }) do
    if op.async then sizes[4 * op.cvec] = true end
  end
  for _, size in ipairs({ 4, 8, 16 }) do
    if sizes[size] then
      w:open("__device__ __forceinline__ void kgen_cp_async%d(float* dst, const float* src, int bytes)", size)
      w:line("asm volatile(\"cp.async.%s.shared.global [%%0], [%%1], %d, %%2;\\n\" :: \"r\"(kgen_smem(dst)), \"l\"(src), \"r\"(bytes));",
        size == 16 and "cg" or "ca", size)
      w:close()
    end
  end
  w:open("__device__ __forceinline__ void kgen_cp_async_commit()")
  w:line("asm volatile(\"cp.async.commit_group;\\n\" ::);")
  w:close()
  w:blank()
end

-- red = 4: four floats added into C by one reduction; with `pairs` (cva = 1)
-- also two (8-byte aligned).
function M.red_add4(w, pairs)
  w:comment("C[p..p+3] += (a, b, c, d), each element atomically (sm_90 vector reduction).")
  w:open("__device__ __forceinline__ void kgen_red_add4(float* p, float a, float b, float c, float d)")
  w:line("asm volatile(\"red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\\n\" :: \"l\"(p), \"f\"(a), \"f\"(b), \"f\"(c), \"f\"(d) : \"memory\");")
  w:close()
  if pairs then
    w:comment("C[p..p+1] += (a, b), p 8-byte aligned.")
    w:open("__device__ __forceinline__ void kgen_red_add2(float* p, float a, float b)")
    w:line("asm volatile(\"red.global.add.v2.f32 [%0], {%1, %2};\\n\" :: \"l\"(p), \"f\"(a), \"f\"(b) : \"memory\");")
    w:close()
  end
  w:blank()
end

-- A beta pass the main kernel may overlap: launch_dependents in the pass,
-- wait in the main kernel before it adds into C. The pass itself waits for
-- the kernel before it first, then lets the main kernel start, so that it
-- too may be launched to overlap that kernel.
function M.dep_launch(w)
  w:comment("Programmatic dependent launch (sm_90): the beta pass waits for the kernel before it")
  w:comment("(whatever the stream ran last) and then lets this kernel's blocks start")
  w:comment("(launch_dependents); they wait for the pass to finish, and for its stores to be")
  w:comment("visible, only before they add into C. Without the launch attribute both are no-ops:")
  w:comment("the stream has already ordered the kernels.")
  w:open("__device__ __forceinline__ void kgen_dep_launch()")
  w:line("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900")
  w:line("asm volatile(\"griddepcontrol.launch_dependents;\\n\" ::: \"memory\");")
  w:line("#endif")
  w:close()
  w:open("__device__ __forceinline__ void kgen_dep_wait()")
  w:line("#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900")
  w:line("asm volatile(\"griddepcontrol.wait;\\n\" ::: \"memory\");")
  w:line("#endif")
  w:close()
  w:blank()
end

-- Thread-block clusters: the block's rank in its cluster, the cluster
-- barrier and a read of another block's shared memory, 16 bytes
-- (kgen_dsmem_ld4) or with `width` "f32" one float (kgen_dsmem_ld).
function M.cluster(w, width)
  local one = width == "f32"
  w:comment("Thread-block clusters (sm_90): this block's rank, a cluster-wide barrier, and a")
  w:comment(string.format("%s read of another block's shared memory at the address p has in ours.",
    one and "4-byte" or "16-byte"))
  w:open("__device__ __forceinline__ unsigned kgen_cluster_rank()")
  w:line("unsigned r;")
  w:line("asm volatile(\"mov.u32 %0, %%cluster_ctarank;\\n\" : \"=r\"(r));")
  w:line("return r;")
  w:close()
  w:open("__device__ __forceinline__ void kgen_cluster_sync()")
  w:line("asm volatile(\"barrier.cluster.arrive.release.aligned;\\nbarrier.cluster.wait.acquire.aligned;\\n\" ::: \"memory\");")
  w:close()
  if one then
    w:open("__device__ __forceinline__ float kgen_dsmem_ld(const float* p, int rank)")
    w:line("unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p)), r;")
    w:line("asm volatile(\"mapa.shared::cluster.u32 %0, %1, %2;\\n\" : \"=r\"(r) : \"r\"(a), \"r\"(rank));")
    w:line("float v;")
    w:line("asm volatile(\"ld.shared::cluster.f32 %0, [%1];\\n\" : \"=f\"(v) : \"r\"(r) : \"memory\");")
    w:line("return v;")
    w:close()
    w:blank()
    return
  end
  w:open("__device__ __forceinline__ float4 kgen_dsmem_ld4(const float* p, int rank)")
  w:line("unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p)), r;")
  w:line("asm volatile(\"mapa.shared::cluster.u32 %0, %1, %2;\\n\" : \"=r\"(r) : \"r\"(a), \"r\"(rank));")
  w:line("float4 v;")
  w:line("asm volatile(\"ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\\n\" : \"=f\"(v.x), \"=f\"(v.y), \"=f\"(v.z), \"=f\"(v.w) : \"r\"(r) : \"memory\");")
  w:line("return v;")
  w:close()
  w:blank()
end

return M
