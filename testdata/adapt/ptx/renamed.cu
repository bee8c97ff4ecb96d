/* The same kernel as base.cu, renamed and reformatted:
   nothing but names, comments and layout differ. */
#define SIDE 32
__global__ void transpose_scaled(const float* __restrict__ src,
                                 float* __restrict__ dst,
                                 float scale, int size)
{
    __shared__ float buf[SIDE][SIDE + 1];   // padded against bank conflicts
    int x = blockIdx.x * SIDE + threadIdx.x;
    int y = blockIdx.y * SIDE + threadIdx.y;
    if (y < size && x < size)
        buf[threadIdx.y][threadIdx.x] = src[y * size + x];
    __syncthreads();
    int ox = blockIdx.y * SIDE + threadIdx.x;   // transposed block
    int oy = blockIdx.x * SIDE + threadIdx.y;
    if (oy < size && ox < size)
        dst[oy * size + ox] = scale * buf[threadIdx.x][threadIdx.y];
}
