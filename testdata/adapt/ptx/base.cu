// Tile copy with a shared-memory stage: base kernel.
#define TILE 32
__global__ void tile_scale(const float* __restrict__ in, float* __restrict__ out, float alpha, int n) {
  __shared__ float stage[TILE][TILE + 1];
  int col = blockIdx.x * TILE + threadIdx.x;
  int row = blockIdx.y * TILE + threadIdx.y;
  if (row < n && col < n) stage[threadIdx.y][threadIdx.x] = in[row * n + col];
  __syncthreads();
  int out_col = blockIdx.y * TILE + threadIdx.x;
  int out_row = blockIdx.x * TILE + threadIdx.y;
  if (out_row < n && out_col < n) out[out_row * n + out_col] = alpha * stage[threadIdx.x][threadIdx.y];
}
