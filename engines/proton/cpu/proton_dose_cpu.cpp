// CPU reference of the proton pencil-beam engine: the same algorithm as the CUDA kernels, in
// double precision, on std::threads. Readability first, but organised like the GPU code (tile
// spot lists, per-layer folded terms, depth chunks) so that the speed-up the benchmark reports
// is against a fair CPU implementation, not a naive one.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "core/cpu_stage.hpp"
#include "core/error.hpp"
#include "core/parallel_for.hpp"
#include "proton/bev_wepl.hpp"
#include "proton/proton_backend.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra::proton::detail {

namespace {
constexpr int kDepthChunk = 8;  // planes per work item, as in the CUDA superposition kernel
}  // namespace

std::vector<double> traceBevWeplCpu(const Volume<float>& spr, const PreparedBeam& beam,
                                    DdaVariant variant, int threads, const JobControl& job) {
  const pb::BevGeometry& g = beam.layout.bev;
  std::vector<double> wepl(beam.layout.bevSamples(), 0.0);
  if (beam.layout.empty) return wepl;
  const dda::Geometry geo = makeDdaGeometry(spr.grid);
  const long long stride = (long long)g.nA * g.nB;
  // One item per row of rays: a few hundred rays, ~0.1-1 ms each.
  parallelFor(std::size_t(g.nB), threads, job, [&](std::size_t j, int thread) {
    if (thread == 0) job.report(double(j) / double(g.nB), {});
    for (int i = 0; i < g.nA; ++i) {
      double* out = wepl.data() + j * std::size_t(g.nA) + std::size_t(i);
      if (variant == DdaVariant::Classic)
        pb::traceBevRay<DdaVariant::Classic>(geo, spr.data.data(), g, i, int(j), out, stride);
      else
        pb::traceBevRay<DdaVariant::BranchFree>(geo, spr.data.data(), g, i, int(j), out, stride);
    }
  });
  return wepl;
}

std::vector<double> superposeBevCpu(const PreparedBeam& beam, const std::vector<double>& wepl,
                                    double cutoffSigmas, int threads, const JobControl& job,
                                    std::uint64_t* contributions) {
  const BeamLayout& L = beam.layout;
  const pb::BevGeometry& g = L.bev;
  std::vector<double> dose(L.bevSamples(), 0.0);
  if (L.empty) return dose;
  const std::size_t nLayers = beam.layers.size();
  const std::size_t chunks = std::size_t((g.nD + kDepthChunk - 1) / kDepthChunk);
  const std::size_t items = L.tileCount() * chunks;
  const double cut2 = cutoffSigmas * cutoffSigmas;
  const double normK = gaussianNormalisation(cutoffSigmas);
  std::vector<std::uint64_t> counts(std::size_t(std::max(1, threads)), 0);

  parallelFor(items, threads, job, [&](std::size_t item, int thread) {
    if (thread == 0) job.report(double(item) / double(items), {});
    const std::size_t tile = item / chunks;
    const int kc = int(item % chunks);
    const int ta = int(tile % std::size_t(L.tilesA)), tb = int(tile / std::size_t(L.tilesA));
    const int i0 = ta * pb::kTile, i1 = std::min(g.nA, i0 + pb::kTile);
    const int j0 = tb * pb::kTile, j1 = std::min(g.nB, j0 + pb::kTile);
    const int k0 = kc * kDepthChunk, k1 = std::min(g.nD, k0 + kDepthChunk);
    std::vector<double> sa, sb, sw;
    std::uint64_t n = 0;
    for (std::size_t l = 0; l < nLayers; ++l) {
      // An item near the Bragg peaks of many layers costs up to ~100 ms on one core: poll the
      // cancel per layer too (the partial result is thrown away by parallelFor's final check).
      if (job.cancelled()) return;
      const int b0 = beam.tileLayerBegin[tile * nLayers + l];
      const int b1 = beam.tileLayerBegin[tile * nLayers + l + 1];
      if (b0 == b1) continue;  // empty tile: no spot of this layer reaches it
      sa.clear(); sb.clear(); sw.clear();
      for (int e = b0; e < b1; ++e) {
        const int s = beam.tileSpots[std::size_t(e)];
        sa.push_back(beam.spotA[std::size_t(s)]);
        sb.push_back(beam.spotB[std::size_t(s)]);
        sw.push_back(beam.spotW[std::size_t(s)]);
      }
      const LayerTable& T = *beam.layers[l].table;
      const int nT = int(T.idd.size());
      const double invDz = 1.0 / T.dzMm;
      for (int k = k0; k < k1; ++k) {
        const double d = g.d0 + double(k) * g.dd;
        const double scale2 = (d / g.sad) * (d / g.sad);
        for (int j = j0; j < j1; ++j) {
          const double b = g.b0 + double(j) * g.db;
          const std::size_t row = (std::size_t(k) * std::size_t(g.nB) + std::size_t(j)) *
                                  std::size_t(g.nA);
          for (int i = i0; i < i1; ++i) {
            pb::DepthTerms<double> t;
            if (!pb::depthTerms(T.idd.data(), T.sigmaMm.data(), nT, invDz, wepl[row + std::size_t(i)],
                                scale2, cut2, normK, t))
              continue;  // beyond this layer's range
            const double a = g.a0 + double(i) * g.da;
            double acc = 0;
            for (std::size_t s = 0; s < sa.size(); ++s) {
              const double dx = a - sa[s], dy = b - sb[s];
              const double r2 = dx * dx + dy * dy;
              if (r2 < t.cutIso2) {
                acc += sw[s] * std::exp(-r2 * t.expo);
                ++n;
              }
            }
            dose[row + std::size_t(i)] += t.amp * acc;
          }
        }
      }
    }
    counts[std::size_t(thread)] += n;
  });
  if (contributions)
    for (auto c : counts) *contributions += c;
  return dose;
}

void addBevToPatientCpu(const PreparedBeam& beam, const std::vector<double>& bevDose,
                        const Grid& dg, std::vector<double>& dose, int threads) {
  if (beam.layout.empty) return;
  const pb::BevGeometry& g = beam.layout.bev;
  parallelFor(std::size_t(dg.dims[2]), threads, JobControl{}, [&](std::size_t k, int) {
    for (int j = 0; j < dg.dims[1]; ++j)
      for (int i = 0; i < dg.dims[0]; ++i) {
        const Vec3 p = dg.indexToWorld(Vec3{double(i), double(j), double(k)});
        dose[dg.linearIndex(i, j, int(k))] += pb::sampleBev(bevDose.data(), g, p.x, p.y, p.z);
      }
  });
}

void computeCpu(const ResolvedRequest& r, ProtonDoseResult& result, const JobControl& job) {
  requireHostTileLists(r, "proton dose (CPU)");
  const ProtonDoseRequest& req = *r.request;
  auto t0 = std::chrono::steady_clock::now();
  const Volume<float> spr = resolveSpr(r);
  result.profiles.push_back(cpuProfile("hu_to_spr", "lut", msSince(t0), 1));
  std::vector<double> dose(r.doseGrid.voxelCount(), 0.0);
  const char* variant = toString(req.variant);
  double weplMs = 0, superMs = 0, resampleMs = 0;
  for (std::size_t b = 0; b < r.beams.size(); ++b) {
    job.checkCancel();
    job.report(double(b) / double(r.beams.size()), "proton dose: beam " + std::to_string(b + 1));
    const PreparedBeam& beam = r.beams[b];
    if (beam.layout.empty) continue;
    // Shares of a beam's time measured on BOXPHANTOM (one field, 25 layers, 6131 spots, 2
    // cores): ray tracing 35 ms, superposition 2.6 s, resampling 110 ms.
    const double base = double(b) / double(r.beams.size()), span = 1.0 / double(r.beams.size());
    SubRangeProgress weplProgress(job, base, base + 0.02 * span, "proton dose: ray tracing (WEPL)");
    SubRangeProgress superProgress(job, base + 0.02 * span, base + 0.95 * span,
                                   "proton dose: kernel superposition");
    t0 = std::chrono::steady_clock::now();
    const std::vector<double> wepl =
        traceBevWeplCpu(spr, beam, req.variant, r.threads, JobControl{&weplProgress, job.cancel});
    weplMs += msSince(t0);
    t0 = std::chrono::steady_clock::now();
    const std::vector<double> bev =
        superposeBevCpu(beam, wepl, req.params.sampling.cutoffSigmas, r.threads,
                        JobControl{&superProgress, job.cancel}, &result.gaussianContributions);
    job.checkCancel();
    job.report(base + 0.95 * span, "proton dose: resampling to the dose grid");
    superMs += msSince(t0);
    t0 = std::chrono::steady_clock::now();
    addBevToPatientCpu(beam, bev, r.doseGrid, dose, r.threads);
    resampleMs += msSince(t0);
  }
  result.profiles.push_back(cpuProfile("bev_wepl_dda", variant, weplMs, r.threads));
  result.profiles.push_back(cpuProfile("gaussian_superposition", "tile-gather", superMs, r.threads));
  result.profiles.push_back(cpuProfile("bev_to_patient_trilinear", "sum-beams", resampleMs, r.threads));
  result.dose = Volume<float>(r.doseGrid);
  for (std::size_t v = 0; v < dose.size(); ++v) result.dose.data[v] = float(dose[v]);
  result.backend = Backend::Cpu;
  result.device = "cpu (" + std::to_string(r.threads) + " threads)";
  job.report(1.0, "proton dose: done");
}

}  // namespace penumbra::proton::detail
