/*
 * device.c -- what a GPU can do: the device query and the limits that
 * templates' check() and the analyses use.
 *
 * Everything the driver reports is taken from it: SM count, shared memory,
 * registers, threads, L2, clocks and bus width. What it does not report
 * (FP32 lanes per SM, register and shared-memory allocation granularities,
 * the 255-register ceiling) comes from arch.c's table, from the entry of the
 * device's architecture or, for one newer than the table, of the closest
 * older one. The derived peaks follow the usual datasheet arithmetic:
 *   FP32   SMs x FP32 lanes per SM x 2 (a fused multiply-add) x SM clock
 *   memory 2 (double data rate) x memory clock x bus width / 8
 */
#include <stdio.h>
#include <string.h>

#include "driver.h"
#include "runtime.h"

/* The table entry for `sm`, or the newest older one (same major first). */
static const kgi_limits *base_arch(int sm)
{
    const kgi_limits *best = NULL;
    for (const kgi_limits *l = kgi_arch_table(); l->sm; l++) {
        if (l->sm == sm)
            return l;
        if (l->sm < sm && (!best || l->sm > best->sm))
            best = l;
    }
    return best ? best : kgi_arch_table();
}

static double peak_fp32(int sms, int lanes, double clock_khz) { return sms * (double)lanes * 2.0 * clock_khz * 1e3 / 1e12; }
static double peak_bw(double mem_khz, int bus_bits) { return 2.0 * mem_khz * 1e3 * bus_bits / 8.0 / 1e9; }

kg_status kgi_cu_device_info(kg_context *ctx, const kgi_cu *cu, int ordinal, kg_device_info *info)
{
    memset(info, 0, sizeof *info);
    info->ordinal = ordinal;
    CUdevice dev;
    CUresult rc = cu->DeviceGet(&dev, ordinal);
    if (rc != CUDA_SUCCESS)
        return kgi_cu_fail(ctx, cu, "cuDeviceGet", rc);
    if ((rc = cu->DeviceGetName(info->name, (int)sizeof info->name, dev)) != CUDA_SUCCESS)
        return kgi_cu_fail(ctx, cu, "cuDeviceGetName", rc);
    if ((rc = cu->DeviceTotalMem(&info->total_mem, dev)) != CUDA_SUCCESS)
        return kgi_cu_fail(ctx, cu, "cuDeviceTotalMem", rc);
    int smem_block = 0, smem_optin = 0, smem_sm = 0, l2 = 0;
    static const struct { CUdevice_attribute attr; const char *name; size_t offset; } attrs[] = {
#define ATTR(a, field) {a, #a, offsetof(kg_device_info, field)}
        ATTR(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cc_major),
        ATTR(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cc_minor),
        ATTR(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, sm_count),
        ATTR(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, regs_per_block),
        ATTR(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, regs_per_sm),
        ATTR(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, max_threads_per_block),
        ATTR(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, max_threads_per_sm),
        ATTR(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, max_blocks_per_sm),
        ATTR(CU_DEVICE_ATTRIBUTE_WARP_SIZE, warp_size),
        ATTR(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, sm_clock_khz),
        ATTR(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, mem_clock_khz),
        ATTR(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, bus_width_bits),
#undef ATTR
    };
    for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++) {
        int *dst = (int *)((char *)info + attrs[i].offset);
        if ((rc = cu->DeviceGetAttribute(dst, attrs[i].attr, dev)) != CUDA_SUCCESS)
            return kgi_cu_fail(ctx, cu, attrs[i].name, rc);
    }
    static const CUdevice_attribute sizes[] = {
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE};
    int *size_dst[] = {&smem_block, &smem_optin, &smem_sm, &l2};
    for (size_t i = 0; i < 4; i++) {
        if ((rc = cu->DeviceGetAttribute(size_dst[i], sizes[i], dev)) != CUDA_SUCCESS)
            return kgi_cu_fail(ctx, cu, "cuDeviceGetAttribute (shared memory, L2)", rc);
    }
    info->smem_per_block = (size_t)smem_block;
    info->smem_per_block_optin = (size_t)smem_optin;
    info->smem_per_sm = (size_t)smem_sm;
    info->l2_bytes = (size_t)l2;
    const kgi_limits *base = base_arch(info->cc_major * 10 + info->cc_minor);
    info->peak_fp32_tflops = peak_fp32(info->sm_count, base->fp32_lanes_per_sm, info->sm_clock_khz);
    info->peak_bandwidth_gbs = peak_bw(info->mem_clock_khz, info->bus_width_bits);
    return KG_OK;
}

void kgi_limits_from_device(const kg_device_info *info, kgi_limits *lim)
{
    int sm = info->cc_major * 10 + info->cc_minor;
    *lim = *base_arch(sm);
    snprintf(lim->name, sizeof lim->name, "sm_%d", sm);
    lim->sm = sm;
    lim->max_threads_per_block = info->max_threads_per_block;
    lim->max_threads_per_sm = info->max_threads_per_sm;
    lim->max_blocks_per_sm = info->max_blocks_per_sm;
    lim->warp_size = info->warp_size;
    lim->max_warps_per_sm = info->warp_size > 0 ? info->max_threads_per_sm / info->warp_size : 0;
    lim->regs_per_sm = info->regs_per_sm;
    lim->regs_per_block = info->regs_per_block;
    lim->smem_per_sm = info->smem_per_sm;
    lim->smem_per_block = info->smem_per_block;
    lim->smem_per_block_optin = info->smem_per_block_optin;
    /* the reference part is the device itself */
    snprintf(lim->ref_gpu, sizeof lim->ref_gpu, "%.*s", (int)sizeof lim->ref_gpu - 1, info->name);
    lim->ref_sm_count = info->sm_count;
    lim->ref_clock_ghz = info->sm_clock_khz / 1e6;
    lim->ref_bandwidth_gbs = info->peak_bandwidth_gbs;
    lim->ref_l2_bytes = info->l2_bytes;
}

/* A CPU-only context: the figures of the target architecture's reference
 * part, from the table (memory clock and bus width are not in it). */
static void table_info(const kgi_limits *l, kg_device_info *info)
{
    memset(info, 0, sizeof *info);
    info->ordinal = KG_DEVICE_NONE;
    snprintf(info->name, sizeof info->name, "%s (reference part of %s; no device)", l->ref_gpu, l->name);
    info->cc_major = l->sm / 10;
    info->cc_minor = l->sm % 10;
    info->sm_count = l->ref_sm_count;
    info->smem_per_block = l->smem_per_block;
    info->smem_per_block_optin = l->smem_per_block_optin;
    info->smem_per_sm = l->smem_per_sm;
    info->regs_per_block = l->regs_per_block;
    info->regs_per_sm = l->regs_per_sm;
    info->max_threads_per_block = l->max_threads_per_block;
    info->max_threads_per_sm = l->max_threads_per_sm;
    info->max_blocks_per_sm = l->max_blocks_per_sm;
    info->warp_size = l->warp_size;
    info->l2_bytes = l->ref_l2_bytes;
    info->sm_clock_khz = (int)(l->ref_clock_ghz * 1e6 + 0.5);
    info->peak_bandwidth_gbs = l->ref_bandwidth_gbs;
    info->peak_fp32_tflops = peak_fp32(l->ref_sm_count, l->fp32_lanes_per_sm, info->sm_clock_khz);
}

kg_status kg_device_count(kg_context *ctx, int *count)
{
    if (!ctx || !count)
        return KG_ERR_INVALID_ARG;
    *count = 0;
    const kgi_cu *cu;
    kg_status st = kgi_cu_load(ctx, &cu);
    if (st == KG_ERR_NO_DEVICE)
        return KG_OK; /* a driver, but cuInit found no device */
    if (st != KG_OK)
        return st;
    CUresult rc = cu->DeviceGetCount(count);
    if (rc != CUDA_SUCCESS)
        return kgi_cu_fail(ctx, cu, "cuDeviceGetCount", rc);
    return KG_OK;
}

kg_status kg_device_query(kg_context *ctx, int device, kg_device_info *info)
{
    if (!ctx || !info)
        return KG_ERR_INVALID_ARG;
    if (device < 0 && device != KG_DEVICE_NONE)
        return kgi_fail(ctx, KG_ERR_INVALID_ARG, "device ordinal %d is negative", device);
    if (device == KG_DEVICE_NONE && !ctx->drv) {
        table_info(&ctx->limits, info);
        return KG_OK;
    }
    if (device == KG_DEVICE_NONE)
        device = ctx->device;
    const kgi_cu *cu;
    kg_status st = kgi_cu_for_device(ctx, device, &cu);
    if (st != KG_OK)
        return st;
    return kgi_cu_device_info(ctx, cu, device, info);
}
