// Water-equivalent path length on the BEV grid, on the GPU: HU -> SPR conversion, then one
// thread per BEV ray tracing the SPR volume with the shared 3D-DDA core (dda_traversal.hpp) and
// writing the WEPL of all its depth samples (bev_wepl.hpp). The SPR volume stays on the device
// for all beams; the WEPL stays there for the superposition.
#include "core/cuda/cuda_check.cuh"
#include "proton/bev_wepl.hpp"
#include "proton/cuda/proton_cuda.cuh"

namespace penumbra::proton::cuda {

namespace {

__global__ void __launch_bounds__(256)
    huToSprKernel(const std::int16_t* __restrict__ ct, const float* __restrict__ lut,
                  float* __restrict__ spr, std::size_t n) {
  for (std::size_t v = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; v < n;
       v += std::size_t(gridDim.x) * blockDim.x)
    spr[v] = __ldg(&lut[int(ct[v]) + 32768]);
}

// Rays of one block are neighbours on the iso plane (consecutive i of a row), so they cross
// nearly the same voxels: the SPR reads hit L1/L2. Their outputs of one plane are contiguous.
template <DdaVariant V>
__global__ void __launch_bounds__(kWeplBlock)
    bevWeplKernel(dda::Geometry geo, const float* __restrict__ spr, pb::BevGeometry g,
                  float* __restrict__ wepl) {
  const long long rays = (long long)g.nA * g.nB;
  const long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (r >= rays) return;
  const int i = int(r % g.nA), j = int(r / g.nA);
  pb::traceBevRay<V>(geo, spr, g, i, j, wepl + r, rays);
}

}  // namespace

void launchHuToSpr(const std::int16_t* ct, const float* lut, float* spr, std::size_t n,
                   cudaStream_t stream) {
  const int grid = int(std::min<std::size_t>((n + 255) / 256, 65536));
  huToSprKernel<<<grid, 256, 0, stream>>>(ct, lut, spr, n);
  PENUMBRA_CUDA_CHECK_LAUNCH("huToSprKernel");
}

void launchBevWepl(DdaVariant variant, const dda::Geometry& geo, const float* spr,
                   const pb::BevGeometry& g, float* wepl, cudaStream_t stream, KernelStats& st) {
  const long long rays = (long long)g.nA * g.nB;
  const int grid = int((rays + kWeplBlock - 1) / kWeplBlock);
  if (variant == DdaVariant::Classic) {
    bevWeplKernel<DdaVariant::Classic><<<grid, kWeplBlock, 0, stream>>>(geo, spr, g, wepl);
    PENUMBRA_CUDA_CHECK_LAUNCH("bevWeplKernel<Classic>");
    st.fn = (const void*)bevWeplKernel<DdaVariant::Classic>;
  } else {
    bevWeplKernel<DdaVariant::BranchFree><<<grid, kWeplBlock, 0, stream>>>(geo, spr, g, wepl);
    PENUMBRA_CUDA_CHECK_LAUNCH("bevWeplKernel<BranchFree>");
    st.fn = (const void*)bevWeplKernel<DdaVariant::BranchFree>;
  }
  st.grid = grid;
  st.block = kWeplBlock;
  // Traffic model: one WEPL written per sample, the SPR read about once per voxel a ray crosses
  // (~ one per depth step), counted as another 4 bytes per sample.
  st.bytes += 8.0 * double(rays) * g.nD;
}

}  // namespace penumbra::proton::cuda
