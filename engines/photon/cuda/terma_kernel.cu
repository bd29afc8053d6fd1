// TERMA on the GPU: one thread per voxel of the dose grid (i fastest, so a warp is a row of
// neighbouring voxels whose source rays cross nearly the same voxels: the density reads hit
// L1/L2). The open fraction over the voxel's lateral footprint is computed first, in double as
// the CPU reference does (aperture.cpp: voxelOpenFraction), after a quick reject against the
// box of open map pixels that gives the same 0; a voxel outside the field writes 0 and is
// done, so the ray tracing runs only for voxels with an open fraction > 0. The ray from the
// source to the voxel centre is set up in double and stepped in float with the shared 3D-DDA
// core (dda_traversal.hpp, either variant); the spectrum sum uses __expf (float, well inside
// the 0.5 % agreement the tests ask of the GPU).
//
// Every voxel is written (the terma buffer is poisoned before the launch), and each block
// leaves a Partial: the TERMA energy (sum T rho V), the index box of the voxels with TERMA > 0
// (the transport culls its lines against it) and the ray segments traced.
#include "core/cuda/cuda_check.cuh"
#include "photon/cuda/partial_sum.cuh"
#include "photon/cuda/photon_cuda.cuh"

namespace penumbra::photon::cuda {

namespace {

__constant__ TermaConst c_terma;

__device__ double openAt(const float* __restrict__ map, double a, double b) {
  const TermaConst& c = c_terma;
  const double x = (a - c.mapU0) / c.mapPitch, y = (b - c.mapV0) / c.mapPitch;
  if (!(x > -1 && y > -1 && x < c.mapNu && y < c.mapNv)) return 0;
  const int i0 = int(floor(x)), j0 = int(floor(y));
  const double fx = x - i0, fy = y - j0;
  auto at = [&](int i, int j) -> double {
    if (i < 0 || j < 0 || i >= c.mapNu || j >= c.mapNv) return 0;
    return double(__ldg(&map[j * c.mapNu + i]));
  };
  return (1 - fy) * ((1 - fx) * at(i0, j0) + fx * at(i0 + 1, j0)) +
         fy * ((1 - fx) * at(i0, j0 + 1) + fx * at(i0 + 1, j0 + 1));
}

/// aperture.cpp's voxelOpenFraction: the mean over 3 x 3 points of the footprint at the
/// isocentre plane; 0 behind the source.
__device__ double voxelOpen(const float* __restrict__ map, const double rel[3]) {
  const TermaConst& c = c_terma;
  const double d = rel[0] * c.w[0] + rel[1] * c.w[1] + rel[2] * c.w[2];
  if (d <= 0) return 0;
  const double scale = c.sad / d;
  const double a = (rel[0] * c.u[0] + rel[1] * c.u[1] + rel[2] * c.u[2]) * scale;
  const double b = (rel[0] * c.v[0] + rel[1] * c.v[1] + rel[2] * c.v[2]) * scale;
  const double du = c.footU * scale / 3, dv = c.footV * scale / 3;
  // Most voxels lie outside the field: when every sample's bilinear stencil misses the box of
  // open pixels (with a pixel to spare for rounding), all nine samples are exactly 0.
  const double x = (a - c.mapU0) / c.mapPitch, y = (b - c.mapV0) / c.mapPitch;
  const double ex = fabs(du) / c.mapPitch + 2, ey = fabs(dv) / c.mapPitch + 2;
  if (x + ex < c.openLo[0] || x - ex > c.openHi[0] || y + ey < c.openLo[1] ||
      y - ey > c.openHi[1])
    return 0;
  double sum = 0;
  for (int j = -1; j <= 1; ++j)
    for (int i = -1; i <= 1; ++i) sum += openAt(map, a + i * du, b + j * dv);
  return sum / 9;
}

struct PathAccumulator {
  const float* __restrict__ density;
  int nx, nxy;
  float sum;
  int segments;
  __device__ void operator()(int i, int j, int k, float len) {
    sum += len * __ldg(&density[k * nxy + j * nx + i]);
    ++segments;
  }
};

template <DdaVariant V>
__global__ void __launch_bounds__(kTermaBlock)
    termaKernel(const float* __restrict__ density, const float* __restrict__ map,
                float* __restrict__ terma, Partial* __restrict__ partials, TermaBox box) {
  const TermaConst& c = c_terma;
  const int b = blockIdx.x * kTermaBlock + threadIdx.x;  // voxel of the box, i fastest
  Partial mine = emptyPartial();
  if (b < box.voxels) {
    const int nx = c.geo.dims[0], ny = c.geo.dims[1];
    const int i = box.lo[0] + b % box.dims[0], j = box.lo[1] + (b / box.dims[0]) % box.dims[1],
              k = box.lo[2] + b / (box.dims[0] * box.dims[1]);
    const int v = (k * ny + j) * nx + i;
    const int idx[3] = {i, j, k};
    double rel[3];
    for (int a = 0; a < 3; ++a) {
      double p = c.geo.origin[a];
      for (int b = 0; b < 3; ++b) p += c.geo.toLocal[b][a] * (idx[b] * c.geo.spacing[b]);
      rel[a] = p - c.source[a];
    }
    float T = 0.f;
    const double open = voxelOpen(map, rel);
    if (open > 0) {
      const double dist = sqrt(rel[0] * rel[0] + rel[1] * rel[1] + rel[2] * rel[2]);
      dda::RayData ray;
      for (int a = 0; a < 3; ++a) {
        ray.origin[a] = c.source[a];
        ray.direction[a] = rel[a];
      }
      ray.tMax = dist;
      PathAccumulator acc{density, nx, nx * ny, 0.f, 0};
      dda::Start<float> s;
      if (dda::setupRay(c.geo, ray, s)) dda::traverse<V>(s, c.geo.dims, acc);
      float scale = 1.f;
      if (c.softeningPerDeg != 0) {
        const double cw = (rel[0] * c.w[0] + rel[1] * c.w[1] + rel[2] * c.w[2]) / dist;
        scale = float(1.0 + c.softeningPerDeg * acos(fmin(fmax(cw, -1.0), 1.0)) *
                                (180.0 / 3.14159265358979323846));
      }
      const float path = acc.sum * scale;  // water-equivalent mm
      float sum = 0.f;
      for (int e = 0; e < c.nE; ++e) sum += c.released[e] * __expf(-c.muMm[e] * path);
      const float inv = float(c.sad / dist);
      T = float(open) * inv * inv * sum;
      mine.count = (unsigned long long)acc.segments;
    }
    terma[v] = T;
    if (T > 0.f) {
      mine.sum[0] = double(T) * double(__ldg(&density[v])) * c.voxelCm3;
      for (int a = 0; a < 3; ++a) mine.lo[a] = mine.hi[a] = idx[a];
    }
  }
  writeBlockPartial<kTermaBlock>(mine, partials + blockIdx.x);
}

}  // namespace

void uploadTermaConst(const TermaConst& c, cudaStream_t stream) {
  PENUMBRA_CUDA_CHECK(
      cudaMemcpyToSymbolAsync(c_terma, &c, sizeof c, 0, cudaMemcpyHostToDevice, stream));
}

void launchTerma(DdaVariant variant, const TermaLaunch& a, cudaStream_t stream, KernelStats& st) {
  if (variant == DdaVariant::Classic) {
    termaKernel<DdaVariant::Classic>
        <<<a.blocks, kTermaBlock, 0, stream>>>(a.density, a.map, a.terma, a.partials, a.box);
    PENUMBRA_CUDA_CHECK_LAUNCH("termaKernel<Classic>");
    st.fn = (const void*)termaKernel<DdaVariant::Classic>;
  } else {
    termaKernel<DdaVariant::BranchFree>
        <<<a.blocks, kTermaBlock, 0, stream>>>(a.density, a.map, a.terma, a.partials, a.box);
    PENUMBRA_CUDA_CHECK_LAUNCH("termaKernel<BranchFree>");
    st.fn = (const void*)termaKernel<DdaVariant::BranchFree>;
  }
  st.grid = a.blocks;
  st.block = kTermaBlock;
}

}  // namespace penumbra::photon::cuda
