// GPU build of the dose-deposition matrix (the CPU reference is cpu/dose_matrix.cpp): uploads the
// CT (or SPR), traces every beam's WEPL in double and keeps it, uploads the tables in double and
// the tile lists with the spots' positions, then three passes over the rows (column maxima,
// kept counts, kept entries; dose_matrix_kernels.cu) with an exclusive scan of the counts
// between the last two. Memory is checked twice, before anything is allocated (working arrays)
// and once the entries are counted (the CSR, allocated exactly); cancel is checked between the
// launches, each pass being split in kChunksPerPass launches.
#include <algorithm>
#include <chrono>
#include <map>
#include <string>

#include "core/cpu_stage.hpp"
#include "core/cuda/device_attributes.cuh"
#include "core/cuda/stream_event.cuh"
#include "proton/cuda/dose_matrix_cuda.cuh"
#include "proton/cuda/proton_cuda.cuh"
#include "raytrace/raytrace.hpp"

namespace penumbra::proton::detail {

namespace {

using penumbra::cuda::DeviceBuffer;
using penumbra::cuda::KernelStats;
using penumbra::cuda::LaunchTimes;
using penumbra::cuda::Stream;
using penumbra::cuda::launchProfile;

// Launches per pass: cancel and progress between them. A pass of hn-2field is tens of ms, so
// eight keeps a cancel within a few ms at a cost of eight stream synchronisations.
constexpr int kChunksPerPass = 8;

/// Copies on `stream` from pageable memory (staged before the call returns).
template <typename T, typename A>
void uploadAsync(DeviceBuffer<T>& buf, const std::vector<T, A>& host, cudaStream_t stream) {
  buf.allocate(host.size());
  if (!host.empty())
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(buf.get(), host.data(), host.size() * sizeof(T),
                                        cudaMemcpyHostToDevice, stream));
}

DoseMatrixDeviceSizes deviceSizes(const ResolvedRequest& r) {
  requireHostTileLists(r, "dose matrix (GPU)");
  const ProtonDoseRequest& req = *r.request;
  DoseMatrixDeviceSizes s;
  s.inputVoxels = double(req.spr ? req.spr->grid.voxelCount() : req.ct->grid.voxelCount());
  s.fromCt = !req.spr;
  s.rows = double(r.doseGrid.voxelCount());
  s.cols = double(totalSpotCount(req.beams));
  std::map<const LayerTable*, bool> seen;
  for (const PreparedBeam& b : r.beams) {
    if (b.layout.empty) continue;
    s.bevSamples += double(b.layout.bevSamples());
    s.tileBegins += double(b.tileLayerBegin.size());
    s.tileEntries += double(b.tileSpots.size());
    for (const PreparedLayer& l : b.layers)
      if (!seen[l.table.get()]) {
        seen[l.table.get()] = true;
        s.tableValues += 2.0 * double(l.table->idd.size());
      }
  }
  return s;
}

double freeDeviceBytes() {
  std::size_t freeB = 0, totalB = 0;
  PENUMBRA_CUDA_CHECK(cudaMemGetInfo(&freeB, &totalB));
  return double(doseMatrixFreeBytes(freeB));
}

KernelProfile wallProfile(const std::string& kernel, const std::string& variant, double ms,
                          const std::string& device) {
  KernelProfile p = cpuProfile(kernel, variant, ms, 1);
  p.backend = "cuda";
  p.device = device;
  p.blockX = 0;
  return p;
}

}  // namespace

DeviceDoseMatrix buildDoseMatrixOnDevice(
    const ResolvedRequest& r, const JobControl& job, std::vector<KernelProfile>& profiles,
    const std::function<void(std::int64_t, std::int64_t)>& onCounted) {
  penumbra::cuda::requireCudaDevice();
  const auto tStart = std::chrono::steady_clock::now();
  const ProtonDoseRequest& req = *r.request;
  const Grid& dg = r.doseGrid;
  const std::int64_t rows = std::int64_t(dg.voxelCount());
  const std::int64_t cols = std::int64_t(totalSpotCount(req.beams));
  const std::string device = penumbra::cuda::currentDeviceName();

  // ---- check, then run: the working arrays must fit before anything is allocated ----------
  const double work = doseMatrixWorkBytes(deviceSizes(r));
  refuseDoseMatrixIfTooBig(work, freeDeviceBytes(), work, rows, cols, -1, device);
  job.checkCancel();
  job.report(0.0, "dose matrix (GPU): ray tracing");
  Stream stream;
  const cudaStream_t s = stream.s;

  // ---- SPR, then every beam's WEPL in double (kept for all passes) -------------------------
  const Grid& inGrid = req.spr ? req.spr->grid : req.ct->grid;
  const std::size_t nIn = inGrid.voxelCount();
  DeviceBuffer<float> dSpr;
  if (req.spr) {
    uploadAsync(dSpr, req.spr->data, s);
  } else {
    DeviceBuffer<std::int16_t> dCt;
    DeviceBuffer<float> dLut;
    uploadAsync(dCt, req.ct->data, s);
    uploadAsync(dLut, *r.sprLut, s);
    dSpr.allocate(nIn);
    cuda::launchHuToSpr(dCt.get(), dLut.get(), dSpr.get(), nIn, s);  // the CPU's LUT: same floats
    PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));                    // before dCt, dLut go
  }
  const dda::Geometry geo = makeDdaGeometry(inGrid);
  std::vector<DeviceBuffer<double>> dWepl(r.beams.size());
  KernelStats stWepl;
  LaunchTimes tWepl;
  for (std::size_t b = 0; b < r.beams.size(); ++b) {
    const PreparedBeam& beam = r.beams[b];
    if (beam.layout.empty) continue;
    dWepl[b].allocate(beam.layout.bevSamples());
    tWepl.begin(s);
    cuda::launchBevWeplF64(req.variant, geo, dSpr.get(), beam.layout.bev, dWepl[b].get(), s, stWepl);
    tWepl.end(s);
  }
  PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));
  dSpr.release();
  job.checkCancel();

  // ---- tables (double, once per energy), layers, tile lists with the spots' positions ------
  std::map<const LayerTable*, std::size_t> tableOffset;
  std::vector<double> hTables;
  std::vector<std::size_t> layerTable;
  std::vector<int> hTileBegin, hTileCol;
  std::vector<double2> hTileAB;
  struct Offsets { std::size_t layer, tileBegin, tileEntry; };
  std::vector<Offsets> offsets;
  for (const PreparedBeam& b : r.beams) {
    offsets.push_back({layerTable.size(), hTileBegin.size(), hTileAB.size()});
    if (b.layout.empty) continue;
    for (const PreparedLayer& l : b.layers) {
      auto it = tableOffset.find(l.table.get());
      if (it == tableOffset.end()) {
        it = tableOffset.emplace(l.table.get(), hTables.size()).first;
        hTables.insert(hTables.end(), l.table->idd.begin(), l.table->idd.end());
        hTables.insert(hTables.end(), l.table->sigmaMm.begin(), l.table->sigmaMm.end());
      }
      layerTable.push_back(it->second);
    }
    hTileBegin.insert(hTileBegin.end(), b.tileLayerBegin.begin(), b.tileLayerBegin.end());
    for (int spot : b.tileSpots) {
      hTileAB.push_back(make_double2(b.spotA[std::size_t(spot)], b.spotB[std::size_t(spot)]));
      hTileCol.push_back(int(b.firstGlobalSpot + std::size_t(spot)));
    }
  }
  DeviceBuffer<double> dTables;
  DeviceBuffer<int> dTileBegin, dTileCol;
  DeviceBuffer<double2> dTileAB;
  uploadAsync(dTables, hTables, s);
  uploadAsync(dTileBegin, hTileBegin, s);
  uploadAsync(dTileAB, hTileAB, s);
  uploadAsync(dTileCol, hTileCol, s);
  std::vector<cuda::MatrixLayer> hLayers;
  std::vector<cuda::MatrixBeam> hBeams;
  for (std::size_t b = 0; b < r.beams.size(); ++b) {
    const PreparedBeam& beam = r.beams[b];
    cuda::MatrixBeam mb{};
    mb.empty = beam.layout.empty ? 1 : 0;
    if (!beam.layout.empty) {
      mb.g = beam.layout.bev;
      mb.tilesA = beam.layout.tilesA;
      mb.nLayers = int(beam.layers.size());
      mb.firstLayer = int(offsets[b].layer);
      mb.wepl = dWepl[b].get();
      mb.tileLayerBegin = dTileBegin.get() + offsets[b].tileBegin;
      mb.tileSpotAB = dTileAB.get() + offsets[b].tileEntry;
      mb.tileSpotCol = dTileCol.get() + offsets[b].tileEntry;
      for (std::size_t l = 0; l < beam.layers.size(); ++l) {
        const LayerTable& T = *beam.layers[l].table;
        const double* table = dTables.get() + layerTable[offsets[b].layer + l];
        hLayers.push_back({table, table + T.idd.size(), int(T.idd.size()), 1.0 / T.dzMm});
      }
    }
    hBeams.push_back(mb);
  }
  DeviceBuffer<cuda::MatrixLayer> dLayers;
  DeviceBuffer<cuda::MatrixBeam> dBeams;
  uploadAsync(dLayers, hLayers, s);
  uploadAsync(dBeams, hBeams, s);

  // ---- row arrays ---------------------------------------------------------------------------
  DeviceBuffer<unsigned> dColMax(std::size_t(std::max<std::int64_t>(cols, 1)));
  DeviceBuffer<unsigned long long> dCounters(2);
  DeviceBuffer<long long> dCounts(std::size_t(rows) + 1);
  DeviceBuffer<std::int64_t> dRowPtr(std::size_t(rows) + 1);  // the SpMV engine's type
  long long* const rowPtrLL = reinterpret_cast<long long*>(dRowPtr.get());  // the same 64 bits
  PENUMBRA_CUDA_CHECK(cudaMemsetAsync(dColMax.get(), 0, dColMax.size() * sizeof(unsigned), s));
  PENUMBRA_CUDA_CHECK(cudaMemsetAsync(dCounters.get(), 0, 2 * sizeof(unsigned long long), s));
  // Poisoned: a row the counting pass missed would show up as a huge offset, not a zero.
  PENUMBRA_CUDA_CHECK(cudaMemsetAsync(dCounts.get(), 0xFF, std::size_t(rows) * sizeof(long long), s));
  PENUMBRA_CUDA_CHECK(cudaMemsetAsync(dCounts.get() + rows, 0, sizeof(long long), s));
  std::size_t scanBytes = 0;
  cuda::exclusiveScanInt64(nullptr, scanBytes, dCounts.get(), rowPtrLL, rows + 1, s);
  DeviceBuffer<unsigned char> dScan(std::max<std::size_t>(scanBytes, 1));

  cuda::MatrixArgs A{};
  for (int a = 0; a < 3; ++a) {
    A.dims[a] = dg.dims[a];
    A.spacing[a] = dg.spacing[a];
    for (int c = 0; c < 3; ++c) A.dir[a][c] = dg.direction.m[a][c];
  }
  A.origin[0] = dg.origin.x;
  A.origin[1] = dg.origin.y;
  A.origin[2] = dg.origin.z;
  A.bricks[0] = (dg.dims[0] + cuda::kBrickX - 1) / cuda::kBrickX;
  A.bricks[1] = (dg.dims[1] + cuda::kBrickY - 1) / cuda::kBrickY;
  A.bricks[2] = (dg.dims[2] + cuda::kBrickZ - 1) / cuda::kBrickZ;
  A.beams = dBeams.get();
  A.nBeams = int(hBeams.size());
  A.layers = dLayers.get();
  A.cut2 = req.params.sampling.cutoffSigmas * req.params.sampling.cutoffSigmas;
  A.normK = gaussianNormalisation(req.params.sampling.cutoffSigmas);
  A.relativeCutoff = req.params.doseMatrixRelativeCutoff;
  A.colMaxBits = dColMax.get();
  A.counters = dCounters.get();
  A.rowCounts = dCounts.get();
  A.rowPtr = rowPtrLL;

  const long long bricks = A.bricks[0] * A.bricks[1] * A.bricks[2];
  auto runPass = [&](cuda::MatrixPass pass, double lo, double hi, const std::string& stage,
                     LaunchTimes& times, KernelStats& st) {
    const int chunks = int(std::min<long long>(kChunksPerPass, std::max<long long>(bricks, 1)));
    for (int c = 0; c < chunks; ++c) {
      job.checkCancel();
      job.report(lo + (hi - lo) * double(c) / chunks, stage);
      times.begin(s);
      cuda::launchMatrixRows(pass, A, bricks * c / chunks, bricks * (c + 1) / chunks, s, st);
      times.end(s);
      PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));
    }
  };

  // ---- pass 1: column maxima, hence the scale (the CPU's formula on the same floats) --------
  KernelStats stMax, stCount, stWrite;
  LaunchTimes tMax, tCount, tWrite;
  runPass(cuda::MatrixPass::ColumnMax, 0.05, 0.35, "dose matrix (GPU): column maxima", tMax, stMax);
  std::vector<float> colMax(static_cast<std::size_t>(cols));
  unsigned long long counters[2] = {0, 0};
  if (cols)
    PENUMBRA_CUDA_CHECK(cudaMemcpy(colMax.data(), dColMax.get(), colMax.size() * sizeof(float),
                                   cudaMemcpyDeviceToHost));
  PENUMBRA_CUDA_CHECK(cudaMemcpy(counters, dCounters.get(), sizeof counters, cudaMemcpyDeviceToHost));
  const float globalMax = cols ? *std::max_element(colMax.begin(), colMax.end()) : 0.f;
  DeviceDoseMatrix out;
  out.rows = rows;
  out.cols = cols;
  out.relativeCutoff = req.params.doseMatrixRelativeCutoff;
  out.scale = globalMax > 0 ? double(globalMax) / 32768.0 : 1.0;
  A.invScale = 1.0 / out.scale;

  // ---- pass 2: kept entries per row, offsets by an exclusive scan ----------------------------
  runPass(cuda::MatrixPass::CountKept, 0.35, 0.65, "dose matrix (GPU): counting entries", tCount, stCount);
  cuda::exclusiveScanInt64(dScan.get(), scanBytes, dCounts.get(), rowPtrLL, rows + 1, s);
  long long nnz = 0;
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(&nnz, dRowPtr.get() + rows, sizeof nnz, cudaMemcpyDeviceToHost, s));
  PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));
  dCounts.release();
  dScan.release();
  PENUMBRA_REQUIRE(nnz >= 0 && (unsigned long long)nnz <= counters[0], Internal,
                   "dose matrix (GPU): the kept entries (" + std::to_string(nnz) +
                       ") do not fit the non-zero entries (" + std::to_string(counters[0]) + ")");
  out.nnz = nnz;
  out.droppedEntries = std::int64_t(counters[0]) - nnz;
  job.checkCancel();

  // ---- the CSR, allocated exactly, and pass 3 writing it -------------------------------------
  refuseDoseMatrixIfTooBig(doseMatrixEntryBytes(double(nnz)), freeDeviceBytes(), work, rows, cols,
                           nnz, device);
  if (onCounted) onCounted(rows, nnz);
  out.colIdx.allocate(std::size_t(nnz));
  out.values.allocate(std::size_t(nnz));
  if (nnz) {  // poisoned: an entry left unwritten reads as column -1, value NaN
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(out.colIdx.get(), 0xFF, std::size_t(nnz) * sizeof(int), s));
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(out.values.get(), 0xFF, std::size_t(nnz) * 2, s));
  }
  A.colIdx = out.colIdx.get();
  A.values = out.values.get();
  runPass(cuda::MatrixPass::WriteKept, 0.65, 0.95, "dose matrix (GPU): writing entries", tWrite, stWrite);
  PENUMBRA_CUDA_CHECK(cudaMemcpy(counters, dCounters.get(), sizeof counters, cudaMemcpyDeviceToHost));
  PENUMBRA_REQUIRE(counters[1] == 0, Internal,
                   "dose matrix (GPU): " + std::to_string(counters[1]) +
                       " rows were written with another length than counted");
  out.rowPtr = std::move(dRowPtr);

  // ---- profiles -------------------------------------------------------------------------------
  const char* variant = toString(req.variant);
  if (tWepl.launches())
    profiles.push_back(launchProfile("dose_matrix_wepl_f64", variant, stWepl, tWepl.totalMs(),
                                     tWepl.launches(), device));
  // Traffic model of the passes: the row offsets and entries they write (the tables, tile
  // lists and WEPL they read stay in L1/L2); their cost is the Gaussians, counted as entries.
  stWrite.bytes = 6.0 * double(nnz) + 8.0 * double(rows);
  profiles.push_back(launchProfile("dose_matrix_column_max", "brick-warp", stMax, tMax.totalMs(),
                                   tMax.launches(), device));
  profiles.push_back(launchProfile("dose_matrix_count_kept", "brick-warp", stCount,
                                   tCount.totalMs(), tCount.launches(), device));
  profiles.push_back(launchProfile("dose_matrix_write_kept", "brick-warp", stWrite,
                                   tWrite.totalMs(), tWrite.launches(), device));
  profiles.push_back(wallProfile("dose_matrix_build", "on-device", msSince(tStart), device));
  return out;
}

}  // namespace penumbra::proton::detail
