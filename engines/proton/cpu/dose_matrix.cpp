// Dose-deposition matrix on the CPU: row v (dose voxel) holds, per spot s, the dose the engine
// puts in v for unit weight of s. The engine's dose in v is the trilinear interpolation of BEV
// samples, each a sum over spots, so entry (v, s) = sum over the 8 BEV corners c of v of
// trilinear weight(c) x the spot's Gaussian term at c. Same DepthTerms, same tile lists, same
// WEPL as superposeBevCpu: D w reproduces the engine's dose up to fp16 rounding and the cut-off.
//
// Build: one pass computes all entries slice by slice (threads) into (column, float) lists, the
// column maxima give the relative cut-off, then the kept entries are written as fp16 with one
// global scale (the largest entry maps to 2^15, leaving a factor 2 of headroom below the fp16
// maximum 65504 and keeping entries down to 1e-4 of a column maximum in the normal fp16 range).
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/parallel_for.hpp"
#include "proton/dose_matrix_row.hpp"
#include "proton/proton_backend.hpp"

namespace penumbra::proton::detail {

namespace {
struct SliceEntries {
  std::vector<std::int32_t> rowCount;  // per row of the slice
  std::vector<std::int32_t> col;
  std::vector<float> val;
};
}  // namespace

DoseMatrixCsr buildDoseMatrixCpu(const ResolvedRequest& r, const Volume<float>& spr,
                                 const JobControl& job) {
  requireHostTileLists(r, "dose matrix (CPU)");
  const ProtonDoseRequest& req = *r.request;
  const Grid& dg = r.doseGrid;
  const double cut2 = req.params.sampling.cutoffSigmas * req.params.sampling.cutoffSigmas;
  const double normK = gaussianNormalisation(req.params.sampling.cutoffSigmas);
  std::vector<std::vector<double>> wepl;
  for (const PreparedBeam& b : r.beams)
    wepl.push_back(traceBevWeplCpu(spr, b, req.variant, r.threads, job));
  const std::size_t cols = totalSpotCount(req.beams);
  const std::size_t sliceRows = std::size_t(dg.dims[0]) * std::size_t(dg.dims[1]);
  std::vector<SliceEntries> slices(std::size_t(dg.dims[2]));
  std::vector<std::vector<float>> colMaxPerThread(std::size_t(r.threads), std::vector<float>(cols, 0.f));

  parallelFor(slices.size(), r.threads, job, [&](std::size_t k, int thread) {
    SliceEntries& out = slices[k];
    out.rowCount.assign(sliceRows, 0);
    std::vector<float>& colMax = colMaxPerThread[std::size_t(thread)];
    for (int j = 0; j < dg.dims[1]; ++j)
      for (int i = 0; i < dg.dims[0]; ++i) {
        const Vec3 p = dg.indexToWorld(Vec3{double(i), double(j), double(k)});
        std::int32_t n = 0;
        for (std::size_t b = 0; b < r.beams.size(); ++b) {
          const PreparedBeam& beam = r.beams[b];
          if (beam.layout.empty) continue;
          pb::VoxelCorners vc;
          if (!pb::voxelCorners(beam.layout.bev, beam.layout.tilesA, p.x, p.y, p.z, vc)) continue;
          const std::size_t nL = beam.layers.size(), tile = std::size_t(vc.tile);
          for (std::size_t l = 0; l < nL; ++l) {
            const int e0 = beam.tileLayerBegin[tile * nL + l], e1 = beam.tileLayerBegin[tile * nL + l + 1];
            if (e0 == e1) continue;
            const LayerTable& T = *beam.layers[l].table;
            pb::CornerTerms t;
            if (!pb::cornerTerms(T.idd.data(), T.sigmaMm.data(), int(T.idd.size()), 1.0 / T.dzMm,
                                 wepl[b].data(), vc, cut2, normK, t))
              continue;
            for (int e = e0; e < e1; ++e) {
              const int s = beam.tileSpots[std::size_t(e)];
              double r2[4];
              pb::spotDistances(vc, beam.spotA[std::size_t(s)], beam.spotB[std::size_t(s)], r2);
              const double v = pb::spotValue(t, r2);
              if (v > 0) {
                const std::size_t col = beam.firstGlobalSpot + std::size_t(s);
                out.col.push_back(std::int32_t(col));
                out.val.push_back(float(v));
                colMax[col] = std::max(colMax[col], float(v));
                ++n;
              }
            }
          }
        }
        out.rowCount[std::size_t(j) * std::size_t(dg.dims[0]) + std::size_t(i)] = n;
      }
  });

  std::vector<float> colMax(cols, 0.f);
  for (const auto& cm : colMaxPerThread)
    for (std::size_t c = 0; c < cols; ++c) colMax[c] = std::max(colMax[c], cm[c]);
  const float globalMax = cols ? *std::max_element(colMax.begin(), colMax.end()) : 0.f;

  DoseMatrixCsr m;
  m.rows = std::int64_t(dg.voxelCount());
  m.cols = std::int64_t(cols);
  m.relativeCutoff = req.params.doseMatrixRelativeCutoff;
  m.scale = globalMax > 0 ? double(globalMax) / 32768.0 : 1.0;
  const double invScale = 1.0 / m.scale;
  m.rowPtr.assign(std::size_t(m.rows) + 1, 0);
  std::size_t row = 0;
  for (const SliceEntries& s : slices) {
    std::size_t e = 0;
    for (std::int32_t n : s.rowCount) {
      for (std::int32_t q = 0; q < n; ++q, ++e) {
        const float v = s.val[e];
        if (double(v) < m.relativeCutoff * double(colMax[std::size_t(s.col[e])])) {
          ++m.droppedEntries;
          continue;
        }
        m.colIdx.push_back(s.col[e]);
        m.values.push_back(pb::entryHalf(v, invScale));
      }
      m.rowPtr[++row] = std::int64_t(m.colIdx.size());
    }
  }
  return m;
}

}  // namespace penumbra::proton::detail
