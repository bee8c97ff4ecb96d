#include "supervisor/device/output_snapshot.h"

#include <cstring>

#include "cuda/cuda_check.h"

namespace ptxb::gpu {
namespace {

struct BlockRef {
  const unsigned char* src;
  std::uint32_t bytes;  // ≤ kBlockBytes
};

// One CTA per block. Cache-volatile loads (ld.global.cv): the data was written by another
// context's kernels; read it from memory as it is now, never from a line this SM kept.
__global__ void gather_blocks(const BlockRef* blocks, unsigned char* out) {
  const BlockRef block = blocks[blockIdx.x];
  unsigned char* dst = out + static_cast<std::size_t>(blockIdx.x) * OutputSnapshot::kBlockBytes;
  const std::uint32_t words = block.bytes / 16;
  for (std::uint32_t i = threadIdx.x; i < words; i += blockDim.x)
    reinterpret_cast<uint4*>(dst)[i] = __ldcv(reinterpret_cast<const uint4*>(block.src) + i);
  for (std::uint32_t i = words * 16 + threadIdx.x; i < block.bytes; i += blockDim.x)
    dst[i] = *static_cast<const volatile unsigned char*>(block.src + i);
}

std::uint64_t splitmix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The blocks of one region: the whole region when it is small, else kBlocksPerRegion blocks at
// 16-byte aligned offsets drawn from the secret (cudaMalloc'd regions are 256-byte aligned).
void pick_blocks(const OutputSnapshot::Region& region, std::uint64_t& state,
                 std::vector<BlockRef>& out) {
  const auto* base = static_cast<const unsigned char*>(region.data);
  constexpr std::uint64_t kBlock = OutputSnapshot::kBlockBytes;
  if (region.bytes <= kBlock * OutputSnapshot::kBlocksPerRegion) {
    for (std::uint64_t offset = 0; offset < region.bytes; offset += kBlock)
      out.push_back({base + offset, static_cast<std::uint32_t>(
                                        std::min<std::uint64_t>(kBlock, region.bytes - offset))});
    return;
  }
  const std::uint64_t slots = (region.bytes - kBlock) / 16 + 1;
  for (int i = 0; i < OutputSnapshot::kBlocksPerRegion; ++i)
    out.push_back({base + (splitmix(state) % slots) * 16, static_cast<std::uint32_t>(kBlock)});
}

}  // namespace

Status OutputSnapshot::prepare(const std::vector<Region>& regions, std::uint64_t secret,
                               cudaStream_t stream) {
  std::vector<BlockRef> blocks;
  std::uint64_t state = secret;
  for (const auto& region : regions) pick_blocks(region, state, blocks);
  blocks_ = blocks.size();
  if (blocks_ == 0) return ok_status();
  if (list_.bytes() < blocks_ * sizeof(BlockRef)) {
    PTXB_ASSIGN_OR_RETURN(list_, DeviceBuffer::create(blocks_ * sizeof(BlockRef)));
    PTXB_ASSIGN_OR_RETURN(first_, DeviceBuffer::create(blocks_ * kBlockBytes));
    PTXB_ASSIGN_OR_RETURN(second_, DeviceBuffer::create(blocks_ * kBlockBytes));
  }
  PTXB_CUDA_CHECK(cudaMemcpyAsync(list_.data(), blocks.data(), blocks_ * sizeof(BlockRef),
                                  cudaMemcpyHostToDevice, stream));
  // Both copies start equal, so a block shorter than kBlockBytes compares only its own bytes.
  PTXB_CUDA_CHECK(cudaMemsetAsync(first_.data(), 0, blocks_ * kBlockBytes, stream));
  PTXB_CUDA_CHECK(cudaMemsetAsync(second_.data(), 0, blocks_ * kBlockBytes, stream));
  PTXB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return ok_status();
}

Status OutputSnapshot::gather(DeviceBuffer& into, cudaStream_t stream) {
  if (blocks_ == 0) return ok_status();
  gather_blocks<<<static_cast<unsigned>(blocks_), 256, 0, stream>>>(list_.as<const BlockRef>(),
                                                                    into.as<unsigned char>());
  PTXB_CUDA_CHECK(cudaGetLastError());
  PTXB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return ok_status();
}

Status OutputSnapshot::take(cudaStream_t stream) {
  return gather(first_, stream);
}

Result<std::int64_t> OutputSnapshot::changed(cudaStream_t stream) {
  PTXB_RETURN_IF_ERROR(gather(second_, stream));
  const std::size_t bytes = blocks_ * kBlockBytes;
  std::vector<unsigned char> a(bytes), b(bytes);
  PTXB_CUDA_CHECK(cudaMemcpy(a.data(), first_.data(), bytes, cudaMemcpyDeviceToHost));
  PTXB_CUDA_CHECK(cudaMemcpy(b.data(), second_.data(), bytes, cudaMemcpyDeviceToHost));
  std::int64_t differing = 0;
  for (std::size_t i = 0; i < blocks_; ++i)
    if (std::memcmp(a.data() + i * kBlockBytes, b.data() + i * kBlockBytes, kBlockBytes) != 0)
      ++differing;
  return differing;
}

}  // namespace ptxb::gpu
