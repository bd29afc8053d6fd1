// BEV dose -> patient dose grid by trilinear interpolation (pencil_beam_math.hpp sampleBev), on
// the GPU, summed over beams in place: one thread per dose voxel, so no atomics. Coordinates are
// mapped in double (H100/H200 run FP64 at half the FP32 rate, and the mapping is ~40 flops per
// voxel against 8 gathered BEV values): a 2-m source distance in float would put ~1e-4 mm of
// rounding into the BEV indices. The kernel is memory-bound either way.
#include "core/cuda/cuda_check.cuh"
#include "proton/cuda/proton_cuda.cuh"

namespace penumbra::proton::cuda {

namespace {

struct PatientGrid {
  int dims[3];
  double origin[3];
  double axes[3][3];  ///< column c = index axis c times its spacing, patient mm
};

__global__ void __launch_bounds__(kResampleBlock)
    bevToPatientKernel(pb::BevGeometry g, const float* __restrict__ bev, PatientGrid pg,
                       float* __restrict__ dose, bool accumulate) {
  const std::size_t n = std::size_t(pg.dims[0]) * pg.dims[1] * pg.dims[2];
  for (std::size_t v = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; v < n;
       v += std::size_t(gridDim.x) * blockDim.x) {
    const int i = int(v % pg.dims[0]);
    const int j = int((v / pg.dims[0]) % pg.dims[1]);
    const int k = int(v / (std::size_t(pg.dims[0]) * pg.dims[1]));
    double p[3];
    for (int r = 0; r < 3; ++r)
      p[r] = pg.origin[r] + pg.axes[r][0] * i + pg.axes[r][1] * j + pg.axes[r][2] * k;
    const float d = float(pb::sampleBev(bev, g, p[0], p[1], p[2]));
    dose[v] = accumulate ? dose[v] + d : d;
  }
}

}  // namespace

void launchBevToPatient(const pb::BevGeometry& g, const float* bevDose, const int dims[3],
                        const double origin[3], const double axes[3][3], float* dose,
                        bool accumulate, cudaStream_t stream, KernelStats& st) {
  PatientGrid pg;
  for (int a = 0; a < 3; ++a) {
    pg.dims[a] = dims[a];
    pg.origin[a] = origin[a];
    for (int b = 0; b < 3; ++b) pg.axes[a][b] = axes[a][b];
  }
  const std::size_t n = std::size_t(dims[0]) * dims[1] * dims[2];
  const int grid = int(std::min<std::size_t>((n + kResampleBlock - 1) / kResampleBlock, 1 << 20));
  bevToPatientKernel<<<grid, kResampleBlock, 0, stream>>>(g, bevDose, pg, dose, accumulate);
  PENUMBRA_CUDA_CHECK_LAUNCH("bevToPatientKernel");
  st.fn = (const void*)bevToPatientKernel;
  st.grid = grid;
  st.block = kResampleBlock;
  st.bytes += double(n) * (accumulate ? 8.0 : 4.0) + 32.0 * double(n);  // dose + 8 BEV reads
}

}  // namespace penumbra::proton::cuda
