// CPU reference of the collapsed-cone superposition (double precision, std::threads): for every
// cone direction, every line of the direction's transport lattice carries the radiant energy
// of each exponential kernel component along the line (Ahnesjo 1989's recursion, with the
// energy released inside a segment spread over it analytically), depositing in each segment.
//
// Deposit strategies on the CPU (both deterministic):
//  - Atomic: the directions are split statically over the workers (worker t takes directions
//    t, t + T, ...); each worker adds into its own accumulator, and the accumulators are summed
//    in worker order. Bits depend on the thread count.
//  - AtomicFree: directions one after another in ConeSet order; the lines of a direction run in
//    parallel and each writes its segments into slot buffer [sliceSlot][voxel] (one writer per
//    entry); then slots 0, 1, 2 are added into the dose in that order. Bits do not depend on
//    the thread count.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <string_view>

#include "core/cpu_stage.hpp"
#include "core/error.hpp"
#include "core/parallel_for.hpp"
#include "photon/photon_backend.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra::photon::detail {

namespace {

/// Index box [lo, hi] of the voxels with TERMA > 0; false when there are none.
bool termaBox(const Grid& g, const std::vector<double>& terma, int lo[3], int hi[3]) {
  for (int a = 0; a < 3; ++a) lo[a] = g.dims[a], hi[a] = -1;
  for (int k = 0; k < g.dims[2]; ++k)
    for (int j = 0; j < g.dims[1]; ++j) {
      const double* row = terma.data() + g.linearIndex(0, j, k);
      for (int i = 0; i < g.dims[0]; ++i) {
        if (!(row[i] > 0)) continue;
        lo[0] = std::min(lo[0], i), hi[0] = std::max(hi[0], i);
        lo[1] = std::min(lo[1], j), hi[1] = std::max(hi[1], j);
        lo[2] = std::min(lo[2], k), hi[2] = std::max(hi[2], k);
      }
    }
  return hi[0] >= 0;
}

/// Offsets of the lines that can meet the TERMA box (a superset: per lateral axis, the range of
/// the pattern's lateral indices over the box's dominant slices, shifted onto the box). Lines
/// outside it carry no energy (their TERMA is 0 all along), so skipping them changes no bit.
void cullLines(const TransportLattice& L, DdaVariant variant, const int lo[3], const int hi[3],
               int& o0Lo, int& o0Hi, int& o1Lo, int& o1Hi) {
  int min0 = 1 << 30, max0 = -(1 << 30), min1 = 1 << 30, max1 = -(1 << 30);
  for (const LatticeSegment& s : latticePattern<double>(L, variant)) {
    if (s.a < lo[L.dominant] || s.a > hi[L.dominant]) continue;
    min0 = std::min(min0, s.l0), max0 = std::max(max0, s.l0);
    min1 = std::min(min1, s.l1), max1 = std::max(max1, s.l1);
  }
  if (max0 < min0) {  // no slice of the box: nothing to walk
    o0Lo = o0Hi = o1Lo = o1Hi = 0;
    return;
  }
  // Real lateral = virtual + o must reach [lo, hi]: o in [lo - max, hi - min].
  o0Lo = std::max(L.off0Lo, lo[L.lateral0] - max0);
  o0Hi = std::min(L.off0Hi, hi[L.lateral0] - min0 + 1);
  o1Lo = std::max(L.off1Lo, lo[L.lateral1] - max1);
  o1Hi = std::min(L.off1Hi, hi[L.lateral1] - min1 + 1);
}

/// Energy bookkeeping of a set of lines, per unit tube cross-section [MeV/cm^2].
struct LineEnergy {
  double released = 0, deposited = 0, escaped = 0;
  std::uint64_t segments = 0;
};

/// The recursion along one line for the two exponential components of a cone; `put` receives
/// (voxel, slot, dose contribution [MeV/g]) for every segment from the first one with TERMA > 0,
/// and those segments are the ones counted (as the CUDA backend counts them: the segments
/// walked before carry and deposit nothing).
///
/// Per component (amplitude A w, attenuation a [cm^-1]), segment of radiological length
/// x = a rho ds, e = exp(-x): the energy released in the segment is q = T rho ds A w, of which
/// q g leaves it (g = (1 - e) / x, the mean escape probability of a release spread evenly over
/// the segment); q g = T (A w / a)(1 - e) needs no division. The segment deposits
/// R (1 - e) + q - q g and passes R e + q g on.
template <typename Put>
void transportLine(const TransportLattice& L, const dda::Start<double>& s, DdaVariant variant,
                   int o0, int o1, const double* terma, const float* rho, const double comp[4],
                   double weight, double chordCm, LineEnergy& e, Put&& put) {
  const double amp0 = comp[0] * weight, mu0 = comp[1], amp1 = comp[2] * weight, mu1 = comp[3];
  const double escape0 = amp0 / mu0, escape1 = amp1 / mu1;  // A w / a [cm]
  double R0 = 0, R1 = 0;
  bool started = false;
  auto visit = [&](long long lin, double lenMm, int slot) {
    const double T = terma[lin];
    if (!started) {
      if (!(T > 0)) return;  // nothing released yet: R = 0, nothing deposited
      started = true;
    }
    const double density = double(rho[lin]);
    const double rhoDs = density * (lenMm / 10.0);  // g/cm^2
    const double e0 = std::exp(-mu0 * rhoDs), e1 = std::exp(-mu1 * rhoDs);
    const double q0 = T * rhoDs * amp0, q1 = T * rhoDs * amp1;
    const double qg0 = T * escape0 * (1 - e0), qg1 = T * escape1 * (1 - e1);
    const double dep = (R0 * (1 - e0) + (q0 - qg0)) + (R1 * (1 - e1) + (q1 - qg1));
    R0 = R0 * e0 + qg0;
    R1 = R1 * e1 + qg1;
    e.released += q0 + q1;
    e.deposited += dep;
    ++e.segments;
    put(lin, slot, dep / (density * chordCm));
  };
  (void)walkLine(variant, L, s, o0, o1, visit);
  e.escaped += R0 + R1;
}

}  // namespace

std::uint64_t superposeCpu(const ResolvedRequest& r, const PreparedBeam& beam,
                           const std::vector<double>& terma, DdaVariant variant, int threads,
                           const JobControl& job, std::vector<double>& dose,
                           EnergyBalance& energy) {
  const Grid& g = r.grid;
  const std::size_t n = g.voxelCount();
  const double voxelCm3 = g.voxelVolumeMm3() / 1000.0;
  const float* rho = r.density.data();
  for (std::size_t v = 0; v < n; ++v) energy.termaEnergy += terma[v] * double(rho[v]) * voxelCm3;
  int lo[3], hi[3];
  if (!termaBox(g, terma, lo, hi)) return 0;
  const ConeSet& cones = r.cones;
  const std::size_t nDir = cones.directions.size();
  const bool atomicFree = r.request->params.deposit == DepositStrategy::AtomicFree;

  // One direction's lines, rows [row0, row1) of the culled line rectangle, with `put`.
  struct DirectionWork {
    const TransportLattice* L;
    dda::Start<double> start;
    double comp[4];
    double weight, chordCm, crossCm2;
    int o0Lo, o0Hi, o1Lo, o1Hi;
  };
  auto prepare = [&](std::size_t d) {
    DirectionWork w{};
    w.L = &beam.lattices[d];
    lineStart(*w.L, w.start);
    const ConeDirection& cd = cones.directions[d];
    const ConeBand& band = cones.bands[std::size_t(cd.band)];
    w.comp[0] = band.A, w.comp[1] = band.a, w.comp[2] = band.B, w.comp[3] = band.b;
    PENUMBRA_REQUIRE(band.a > 0 && band.b > 0 && band.A >= 0 && band.B >= 0, InvalidArgument,
                     "photon dose: a cone band of the kernel has a non-positive attenuation or a "
                     "negative amplitude");
    w.weight = cd.weight;
    w.chordCm = w.L->sliceChordMm / 10.0;
    w.crossCm2 = w.L->crossSectionMm2 / 100.0;
    cullLines(*w.L, variant, lo, hi, w.o0Lo, w.o0Hi, w.o1Lo, w.o1Hi);
    return w;
  };
  auto addEnergy = [&](const LineEnergy& e, double crossCm2) {
    energy.released += e.released * crossCm2;
    energy.deposited += e.deposited * crossCm2;
    energy.escaped += e.escaped * crossCm2;
  };
  std::uint64_t segments = 0;

  if (atomicFree) {
    std::vector<double> slots(3 * n, 0.0);  // zero between directions (the gather clears it)
    for (std::size_t d = 0; d < nDir; ++d) {
      job.report(double(d) / double(nDir), {});
      const DirectionWork w = prepare(d);
      if (w.o0Lo >= w.o0Hi || w.o1Lo >= w.o1Hi) continue;
      const std::size_t rows = std::size_t(w.o1Hi - w.o1Lo);
      std::vector<LineEnergy> rowEnergy(rows);
      parallelFor(rows, threads, job, [&](std::size_t row, int) {
        const int o1 = w.o1Lo + int(row);
        LineEnergy& e = rowEnergy[row];
        for (int o0 = w.o0Lo; o0 < w.o0Hi; ++o0)
          transportLine(*w.L, w.start, variant, o0, o1, terma.data(), rho, w.comp, w.weight,
                        w.chordCm, e, [&](long long lin, int slot, double value) {
                          // Never true for makeLattice()'s lattices in double (1..3 segments
                          // per slice); guards the buffer if a lattice is ever built otherwise.
                          if (slot >= kMaxSliceSlots)
                            PENUMBRA_THROW(Internal,
                                           "photon dose: a transport line has more "
                                           "than 3 segments in one slice");
                          slots[std::size_t(slot) * n + std::size_t(lin)] = value;
                        });
      });
      LineEnergy sum;
      for (const LineEnergy& e : rowEnergy) {
        sum.released += e.released, sum.deposited += e.deposited, sum.escaped += e.escaped;
        segments += e.segments;
      }
      addEnergy(sum, w.crossCm2);
      // Gather in fixed slot order, clearing the slots for the next direction.
      double* s0 = slots.data();
      double* s1 = s0 + n;
      double* s2 = s1 + n;
      const std::size_t chunk = 1 << 16;
      parallelFor((n + chunk - 1) / chunk, threads, job, [&](std::size_t c, int) {
        for (std::size_t v = c * chunk; v < std::min(n, (c + 1) * chunk); ++v) {
          dose[v] += (s0[v] + s1[v]) + s2[v];
          s0[v] = s1[v] = s2[v] = 0;
        }
      });
    }
  } else {
    const int workers = std::max(1, std::min(threads, int(nDir)));
    const std::size_t nw = static_cast<std::size_t>(workers);
    std::vector<std::vector<double>> acc(nw);
    std::vector<LineEnergy> workerEnergy(nw);
    std::vector<double> released(nw, 0.0), deposited(nw, 0.0), escaped(nw, 0.0);
    parallelFor(nw, workers, job, [&](std::size_t t, int thread) {
      std::vector<double>& a = acc[t];
      a.assign(n, 0.0);
      for (std::size_t d = t; d < nDir; d += std::size_t(workers)) {
        if (thread == 0) job.report(double(d) / double(nDir), {});  // the job's thread
        if (job.cancelled()) return;
        const DirectionWork w = prepare(d);
        LineEnergy e;
        for (int o1 = w.o1Lo; o1 < w.o1Hi; ++o1)
          for (int o0 = w.o0Lo; o0 < w.o0Hi; ++o0)
            transportLine(*w.L, w.start, variant, o0, o1, terma.data(), rho, w.comp, w.weight,
                          w.chordCm, e,
                          [&](long long lin, int, double value) { a[std::size_t(lin)] += value; });
        released[t] += e.released * w.crossCm2;
        deposited[t] += e.deposited * w.crossCm2;
        escaped[t] += e.escaped * w.crossCm2;
        workerEnergy[t].segments += e.segments;
      }
    });
    job.checkCancel();
    for (int t = 0; t < workers; ++t) {
      const std::vector<double>& a = acc[std::size_t(t)];
      for (std::size_t v = 0; v < n; ++v) dose[v] += a[v];
      energy.released += released[std::size_t(t)];
      energy.deposited += deposited[std::size_t(t)];
      energy.escaped += escaped[std::size_t(t)];
      segments += workerEnergy[std::size_t(t)].segments;
    }
  }
  return segments;
}

void computeCpu(const ResolvedRequest& r, PhotonDoseResult& result, const JobControl& job) {
  const PhotonDoseRequest& req = *r.request;
  const std::size_t n = r.grid.voxelCount();
  std::vector<double> dose(n, 0.0), termaSum;
  if (req.params.keepTerma) termaSum.assign(n, 0.0);
  const DdaVariant variant = req.params.variant;
  double termaMs = 0, transportMs = 0;
  for (std::size_t b = 0; b < r.beams.size(); ++b) {
    job.checkCancel();
    const PreparedBeam& beam = r.beams[b];
    const std::string stage =
        "photon dose: beam " + std::to_string(b + 1) + " of " + std::to_string(r.beams.size());
    // Shares of a beam's time on the 30 cm water box (2 cores): TERMA ~5 %, transport ~95 %.
    const double base = double(b) / double(r.beams.size()), span = 1.0 / double(r.beams.size());
    SubRangeProgress termaProgress(job, base, base + 0.05 * span, stage + ": TERMA");
    SubRangeProgress coneProgress(job, base + 0.05 * span, base + span,
                                  stage + ": collapsed cones");
    auto t0 = std::chrono::steady_clock::now();
    const std::vector<double> terma =
        computeTermaCpu(r, beam, variant, r.threads, JobControl{&termaProgress, job.cancel});
    termaMs += msSince(t0);
    t0 = std::chrono::steady_clock::now();
    std::vector<double> raw(n, 0.0);
    result.voxelDirectionSteps +=
        superposeCpu(r, beam, terma, variant, r.threads, JobControl{&coneProgress, job.cancel}, raw,
                     result.energy);
    transportMs += msSince(t0);
    for (std::size_t v = 0; v < n; ++v) dose[v] += raw[v] * beam.gyPerRawDose;
    if (req.params.keepTerma)
      for (std::size_t v = 0; v < n; ++v) termaSum[v] += terma[v];
  }
  const std::string deposit =
      req.params.deposit == DepositStrategy::AtomicFree ? "atomic-free" : "atomic";
  result.profiles.push_back(cpuProfile("terma_dda", toString(variant), termaMs, r.threads));
  result.profiles.push_back(cpuProfile(
      "cccs_transport", std::string(toString(variant)) + " " + deposit, transportMs, r.threads));
  result.dose = Volume<float>(r.grid);
  for (std::size_t v = 0; v < n; ++v) result.dose.data[v] = float(dose[v]);
  if (req.params.keepTerma) {
    result.terma = Volume<float>(r.grid);
    for (std::size_t v = 0; v < n; ++v) result.terma.data[v] = float(termaSum[v]);
  }
  result.backend = Backend::Cpu;
  result.device = "cpu (" + std::to_string(r.threads) + " threads)";
  job.report(1.0, "photon dose: done");
}

}  // namespace penumbra::photon::detail
