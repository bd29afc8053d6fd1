// CUDA backend of the proton dose engine: uploads once, then per beam three launches on one
// stream - BEV WEPL (ray tracing), Gaussian superposition, BEV -> patient resampling summed over
// beams - with no host round trip between beams or layers: every intermediate (SPR, WEPL, BEV
// dose, patient dose) stays on the GPU, and only the final dose comes back. Cancel is checked
// before each beam is enqueued. Device outputs are poisoned with NaN (0xFF bytes) first, so an
// unwritten voxel shows up in the tests instead of passing as a zero.
#include <algorithm>
#include <map>
#include <string>

#include "core/cuda/device_attributes.cuh"
#include "core/cuda/device_buffer.cuh"
#include "core/cuda/stream_event.cuh"
#include "core/device.hpp"
#include "proton/cuda/proton_cuda.cuh"
#include "proton/proton_backend.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra::proton {

namespace detail {

namespace {

using penumbra::cuda::DeviceBuffer;
using penumbra::cuda::LaunchTimes;
using penumbra::cuda::launchProfile;
using penumbra::cuda::Stream;

/// Allocates and copies on `stream` (pageable host memory: the call returns once the source is
/// staged, so the host vector may go away; the kernels that follow on the stream see the data).
template <typename T>
void uploadAsync(DeviceBuffer<T>& buf, const T* host, std::size_t n, cudaStream_t stream) {
  buf.allocate(n);
  if (n) PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(buf.get(), host, n * sizeof(T), cudaMemcpyHostToDevice, stream));
}

}  // namespace

void computeCuda(const ResolvedRequest& r, ProtonDoseResult& result, const JobControl& job) {
  // The caller (computeProtonDose) chose this backend through selectBackend(), which checked
  // for a usable device; here only the cheap count, for direct callers.
  penumbra::cuda::requireCudaDevice();
  const ProtonDoseRequest& req = *r.request;
  Stream stream;
  const cudaStream_t s = stream.s;

  // ---- SPR on the device ----------------------------------------------------------------
  const Grid& inGrid = req.spr ? req.spr->grid : req.ct->grid;
  const std::size_t nIn = inGrid.voxelCount();
  DeviceBuffer<float> dSpr;
  LaunchTimes tSpr;
  if (req.spr) {
    uploadAsync(dSpr, req.spr->data.data(), nIn, s);
  } else {
    DeviceBuffer<std::int16_t> dCt;
    DeviceBuffer<float> dLut;
    uploadAsync(dCt, req.ct->data.data(), nIn, s);
    uploadAsync(dLut, r.sprLut.data(), r.sprLut.size(), s);
    dSpr.allocate(nIn);
    tSpr.begin(s);
    cuda::launchHuToSpr(dCt.get(), dLut.get(), dSpr.get(), nIn, s);
    tSpr.end(s);
    PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));  // before dCt and dLut are freed
  }
  const dda::Geometry geo = makeDdaGeometry(inGrid);

  // ---- tables, layers, spots, tile lists of all beams: one upload each --------------------
  std::map<const LayerTable*, int> tableOffset;
  std::vector<float> hIdd, hSigma;
  std::vector<cuda::DevLayer> hLayers;
  std::vector<float4> hSpots;
  std::vector<int> hTileBegin, hTileSpots;
  struct BeamOffsets { std::size_t layers, spots, tileBegin, tileSpots; };
  std::vector<BeamOffsets> offsets;
  std::size_t bevMax = 0;
  for (const PreparedBeam& b : r.beams) {
    offsets.push_back({hLayers.size(), hSpots.size(), hTileBegin.size(), hTileSpots.size()});
    if (b.layout.empty) continue;
    bevMax = std::max(bevMax, b.layout.bevSamples());
    for (const PreparedLayer& l : b.layers) {
      auto it = tableOffset.find(l.table.get());
      if (it == tableOffset.end()) {
        it = tableOffset.emplace(l.table.get(), int(hIdd.size())).first;
        for (double v : l.table->idd) hIdd.push_back(float(v));
        for (double v : l.table->sigmaMm) hSigma.push_back(float(v));
      }
      hLayers.push_back({it->second, int(l.table->idd.size()), float(1.0 / l.table->dzMm), 0});
    }
    for (std::size_t i = 0; i < b.spotA.size(); ++i)
      hSpots.push_back(make_float4(float(b.spotA[i]), float(b.spotB[i]), float(b.spotW[i]), 0.f));
    hTileBegin.insert(hTileBegin.end(), b.tileLayerBegin.begin(), b.tileLayerBegin.end());
    hTileSpots.insert(hTileSpots.end(), b.tileSpots.begin(), b.tileSpots.end());
  }
  DeviceBuffer<float> dIdd, dSigma;
  DeviceBuffer<cuda::DevLayer> dLayers;
  DeviceBuffer<float4> dSpots;
  DeviceBuffer<int> dTileBegin, dTileSpots;
  uploadAsync(dIdd, hIdd.data(), hIdd.size(), s);
  uploadAsync(dSigma, hSigma.data(), hSigma.size(), s);
  uploadAsync(dLayers, hLayers.data(), hLayers.size(), s);
  uploadAsync(dSpots, hSpots.data(), hSpots.size(), s);
  uploadAsync(dTileBegin, hTileBegin.data(), hTileBegin.size(), s);
  uploadAsync(dTileSpots, hTileSpots.data(), hTileSpots.size(), s);

  // ---- working buffers, poisoned -----------------------------------------------------------
  const Grid& dg = r.doseGrid;
  const std::size_t nDose = dg.voxelCount();
  DeviceBuffer<float> dWepl(bevMax), dBev(bevMax), dDose(nDose);
  if (bevMax) {
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(dWepl.get(), 0xFF, bevMax * sizeof(float), s));
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(dBev.get(), 0xFF, bevMax * sizeof(float), s));
  }
  PENUMBRA_CUDA_CHECK(cudaMemsetAsync(dDose.get(), 0xFF, nDose * sizeof(float), s));
  int dims[3] = {dg.dims[0], dg.dims[1], dg.dims[2]};
  double origin[3] = {dg.origin.x, dg.origin.y, dg.origin.z};
  double axes[3][3];
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c) axes[a][c] = dg.direction.m[a][c] * dg.spacing[c];

  // ---- per beam: WEPL, superposition, resampling -----------------------------------------
  cuda::KernelStats stWepl, stSuper, stResample;
  LaunchTimes tWepl, tSuper, tResample;
  bool written = false;
  const double cutoff = req.params.sampling.cutoffSigmas;
  for (std::size_t bi = 0; bi < r.beams.size(); ++bi) {
    job.checkCancel();
    job.report(double(bi) / double(r.beams.size()), "proton dose (GPU): beam " + std::to_string(bi + 1));
    const PreparedBeam& b = r.beams[bi];
    if (b.layout.empty) continue;
    const pb::BevGeometry& g = b.layout.bev;
    tWepl.begin(s);
    cuda::launchBevWepl(req.variant, geo, dSpr.get(), g, dWepl.get(), s, stWepl);
    tWepl.end(s);

    cuda::SuperpositionArgs A{};
    A.wepl = dWepl.get();
    A.bevDose = dBev.get();
    A.tableIdd = dIdd.get();
    A.tableSigma = dSigma.get();
    A.layers = dLayers.get() + offsets[bi].layers;
    A.nLayers = int(b.layers.size());
    A.spots = dSpots.get() + offsets[bi].spots;
    A.tileLayerBegin = dTileBegin.get() + offsets[bi].tileBegin;
    A.tileSpots = dTileSpots.get() + offsets[bi].tileSpots;
    A.tilesA = b.layout.tilesA;
    A.nA = g.nA; A.nB = g.nB; A.nD = g.nD;
    A.a0 = float(g.a0); A.b0 = float(g.b0); A.da = float(g.da); A.db = float(g.db);
    A.d0 = float(g.d0); A.dd = float(g.dd); A.invSad = float(1.0 / g.sad);
    A.cut2 = float(cutoff * cutoff);
    A.normK = float(gaussianNormalisation(cutoff));
    tSuper.begin(s);
    cuda::launchSuperposition(A, s, stSuper);
    tSuper.end(s);

    tResample.begin(s);
    cuda::launchBevToPatient(g, dBev.get(), dims, origin, axes, dDose.get(), written, s, stResample);
    tResample.end(s);
    written = true;
  }
  if (!written) PENUMBRA_CUDA_CHECK(cudaMemsetAsync(dDose.get(), 0, nDose * sizeof(float), s));
  result.dose = Volume<float>(dg);
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(result.dose.data.data(), dDose.get(), nDose * sizeof(float),
                                      cudaMemcpyDeviceToHost, s));
  PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));
  job.checkCancel();

  result.device = penumbra::cuda::currentDeviceName();
  const std::string& device = result.device;
  const char* variant = toString(req.variant);
  if (!tSpr.start.empty()) {
    cuda::KernelStats st;
    st.grid = int(std::min<std::size_t>((nIn + 255) / 256, 65536));
    st.block = 256;
    st.bytes = 6.0 * double(nIn);
    KernelProfile p = launchProfile("hu_to_spr", "lut", st, tSpr.totalMs(), 1, device);
    result.profiles.push_back(p);
  }
  const int launches = int(tWepl.start.size());
  if (launches) {
    result.profiles.push_back(
        launchProfile("bev_wepl_dda", variant, stWepl, tWepl.totalMs(), launches, device));
    result.profiles.push_back(launchProfile("gaussian_superposition", "tile-gather", stSuper,
                                            tSuper.totalMs(), launches, device));
    result.profiles.push_back(launchProfile("bev_to_patient_trilinear", "sum-beams", stResample,
                                            tResample.totalMs(), launches, device));
  }
  result.backend = Backend::Cuda;
  job.report(1.0, "proton dose: done");
}

}  // namespace detail
}  // namespace penumbra::proton
