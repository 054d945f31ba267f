/*
 * matmul_example.c -- multiply two matrices on the GPU with libkgen.
 *
 * The program owns its memory through the CUDA runtime (cudaMalloc, a
 * stream of its own); libkgen works in the same (primary) context, picks a
 * kernel for the device and the shape, compiles it once (cached on disk
 * for the next run) and launches it on the program's stream. The result
 * is checked against a plain double-precision loop.
 *
 *   C = alpha * A * B + beta * C,  A: M x K, B: K x N, C: M x N, row-major
 *
 * Exit status: 0 right, 1 wrong or an error, 77 no GPU (CTest's "skipped").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>

#include "kgen.h"

#define CUDA_CHECK(call)                                                                           \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* Uniform values in [-1, 1). */
static void fill(float *x, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)((seed >> 8) / 8388608.0 - 1.0);
    }
}

int main(void)
{
    const int M = 1000, N = 700, K = 500; /* any sizes >= 1 */
    const float alpha = 1.5f, beta = 0.5f;
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("no CUDA device: nothing to run\n");
        return 77;
    }
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N);
    float *c = malloc(sizeof(float) * M * N), *out = malloc(sizeof(float) * M * N);
    fill(a, (size_t)M * K, 1);
    fill(b, (size_t)K * N, 2);
    fill(c, (size_t)M * N, 3);

    float *da, *db, *dc;
    cudaStream_t stream;
    CUDA_CHECK(cudaMalloc((void **)&da, sizeof(float) * M * K));
    CUDA_CHECK(cudaMalloc((void **)&db, sizeof(float) * K * N));
    CUDA_CHECK(cudaMalloc((void **)&dc, sizeof(float) * M * N));
    CUDA_CHECK(cudaStreamCreate(&stream));
    CUDA_CHECK(cudaMemcpy(da, a, sizeof(float) * M * K, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db, b, sizeof(float) * K * N, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dc, c, sizeof(float) * M * N, cudaMemcpyHostToDevice));

    kg_context *ctx;
    kg_status st = kg_context_open(&ctx, 0);
    if (st != KG_OK) {
        fprintf(stderr, "kg_context_open: %s\n", kg_last_error(ctx));
        kg_context_close(ctx);
        return 1;
    }
    /* "nn": neither operand transposed; leading dimensions K, N, N */
    st = kg_matmul(ctx, "nn", M, N, K, alpha, da, K, db, N, beta, dc, N, stream);
    if (st != KG_OK) {
        fprintf(stderr, "kg_matmul: %s\n", kg_last_error(ctx));
        kg_context_close(ctx);
        return 1;
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(out, dc, sizeof(float) * M * N, cudaMemcpyDeviceToHost));
    char config[512], why[1024];
    if (kg_matmul_explain(ctx, "nn", M, N, K, config, sizeof config, why, sizeof why) == KG_OK)
        printf("kernel: %s\n  (%s)\n", config, why);

    /* the same in double precision; the error relative to the size of the
     * terms: |alpha| sum |a b| + |beta c| */
    double worst = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0, mag = 0;
            for (int p = 0; p < K; p++) {
                s += (double)a[i * K + p] * b[p * N + j];
                mag += fabs((double)a[i * K + p] * b[p * N + j]);
            }
            double ref = alpha * s + beta * (double)c[i * N + j];
            double bound = fabs(alpha) * mag + fabs(beta * (double)c[i * N + j]);
            double e = fabs(out[i * N + j] - ref) / bound;
            if (!(e <= worst))
                worst = e; /* NaN makes it NaN: fails below */
        }
    int ok = worst < 1e-5;
    printf("C = %.1f * A(%dx%d) * B(%dx%d) + %.1f * C: max relative error %.3g: %s\n", alpha, M, K, K, N, beta, worst,
           ok ? "right" : "WRONG");

    kg_context_close(ctx);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    cudaStreamDestroy(stream);
    free(a);
    free(b);
    free(c);
    free(out);
    return ok ? 0 : 1;
}
