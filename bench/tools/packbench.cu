// packbench.cu -- bandwidth of a row-padding copy (what pack=1's packing
// kernel does) at the odd shapes' operand sizes, 1 to 8 rows per block.
// Round 17 (bench/NOTES.md technique 29). Build and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o packbench bench/tools/packbench.cu && ./packbench
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
template <int R>
__global__ void __launch_bounds__(256) pack(const float* __restrict__ src, int rows, int cols, int ld, float* __restrict__ dst, int ldp)
{
  int c = (blockIdx.x * 256 + threadIdx.x) * 4;
  if (c >= ldp) return;
  int r0 = blockIdx.y * R;
  float4 v[R];
#pragma unroll
  for (int i = 0; i < R; i++) {
    int r = r0 + i;
    const float* s = src + (size_t)(r < rows ? r : rows - 1) * ld + c;
    v[i].x = c < cols ? __ldg(s) : 0.f;
    v[i].y = c + 1 < cols ? __ldg(s + 1) : 0.f;
    v[i].z = c + 2 < cols ? __ldg(s + 2) : 0.f;
    v[i].w = c + 3 < cols ? __ldg(s + 3) : 0.f;
  }
#pragma unroll
  for (int i = 0; i < R; i++)
    if (r0 + i < rows) *reinterpret_cast<float4*>(dst + (size_t)(r0 + i) * ldp + c) = v[i];
}
template <int R> float run(int rows, int cols) {
  int ld = cols, ldp = (cols + 3) / 4 * 4;
  float *s, *d; cudaMalloc(&s, (size_t)rows * ld * 4); cudaMalloc(&d, (size_t)rows * ldp * 4);
  cudaMemset(s, 1, (size_t)rows * ld * 4);
  dim3 grid((ldp / 4 + 255) / 256, (rows + R - 1) / R);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> t;
  for (int i = 0; i < 60; i++) {
    cudaEventRecord(a); pack<R><<<grid, 256>>>(s, rows, cols, ld, d, ldp); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); if (i >= 10) t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  float ms = t[t.size() / 2];
  double bytes = (double)rows * cols * 4 + (double)rows * ldp * 4;
  printf("R=%d %dx%d -> ld %d: %.1f us, %.0f GB/s (%s)\n", R, rows, cols, ldp, ms * 1e3, bytes / ms / 1e6, cudaGetErrorString(cudaGetLastError()));
  cudaFree(s); cudaFree(d);
  return ms;
}
int main() {
  int sh[3][2] = {{4095, 4095}, {3001, 1531}, {1531, 2999}};
  for (auto& x : sh) { run<1>(x[0], x[1]); run<2>(x[0], x[1]); run<4>(x[0], x[1]); run<8>(x[0], x[1]); }
}
