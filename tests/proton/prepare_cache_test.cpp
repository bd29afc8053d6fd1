// The host caches of computeProtonDose() (proton/prepare_cache.hpp): a cached beam is what
// prepareBeam() makes, bit for bit; a weights-only edit reuses the tile lists and takes the new
// weights; geometry, spot positions, the dose grid and the machine are part of the key. Also
// the GPU cache's entry points in a build or on a machine without a device, and the host-stage
// profile rows. CPU only.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "proton/prepare_cache.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_gpu_cache.hpp"
#include "proton/proton_phantoms.hpp"
#include "proton/tile_hits.hpp"
#include "proton_dose_test_support.hpp"

namespace penumbra::proton {
namespace {

using namespace proton::test;

template <typename T>
bool sameVector(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

bool sameBev(const pb::BevGeometry& a, const pb::BevGeometry& b) {
  return std::memcmp(a.source, b.source, sizeof a.source) == 0 && std::memcmp(a.u, b.u, sizeof a.u) == 0 &&
         std::memcmp(a.v, b.v, sizeof a.v) == 0 && std::memcmp(a.w, b.w, sizeof a.w) == 0 &&
         a.sad == b.sad && a.nA == b.nA && a.nB == b.nB && a.nD == b.nD && a.a0 == b.a0 &&
         a.b0 == b.b0 && a.da == b.da && a.db == b.db && a.d0 == b.d0 && a.dd == b.dd;
}

/// Every field of two prepared beams, bit for bit (tables compared as the machine's objects).
void expectSamePrepared(const PreparedBeam& a, const PreparedBeam& b, const std::string& what) {
  EXPECT_EQ(a.layout.empty, b.layout.empty) << what;
  EXPECT_TRUE(sameBev(a.layout.bev, b.layout.bev)) << what;
  EXPECT_EQ(a.layout.tilesA, b.layout.tilesA) << what;
  EXPECT_EQ(a.layout.tilesB, b.layout.tilesB) << what;
  EXPECT_EQ(a.layout.tileListBound, b.layout.tileListBound) << what;
  EXPECT_TRUE(sameVector(a.layout.cullRadiusIsoMm, b.layout.cullRadiusIsoMm)) << what;
  EXPECT_TRUE(sameVector(a.spotA, b.spotA)) << what;
  EXPECT_TRUE(sameVector(a.spotB, b.spotB)) << what;
  EXPECT_TRUE(sameVector(a.spotW, b.spotW)) << what;
  EXPECT_TRUE(sameVector(a.tileLayerBegin, b.tileLayerBegin)) << what;
  EXPECT_TRUE(sameVector(a.tileSpots, b.tileSpots)) << what;
  EXPECT_EQ(a.tileListsOnHost, b.tileListsOnHost) << what;
  EXPECT_EQ(a.firstGlobalSpot, b.firstGlobalSpot) << what;
  ASSERT_EQ(a.layers.size(), b.layers.size()) << what;
  for (std::size_t l = 0; l < a.layers.size(); ++l) {
    EXPECT_EQ(a.layers[l].table, b.layers[l].table) << what;
    EXPECT_EQ(a.layers[l].spotBegin, b.layers[l].spotBegin) << what;
    EXPECT_EQ(a.layers[l].spotEnd, b.layers[l].spotEnd) << what;
  }
}

std::shared_ptr<const ProtonMachine> generic() { return ProtonMachine::generic(); }

TEST(ProtonPrepareCache, CachedBeamsAreWhatPrepareBeamMakes) {
  detail::clearBeamCache();
  BevSampling sampling;
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    const ProtonPhantomCase pc = makeRandomPhantomCase(seed, 33 + int(seed) * 4);
    std::size_t first = 0;
    for (const ProtonBeam& b : pc.beams) {
      const std::string what = pc.name + " " + b.name;
      const PreparedBeam direct = prepareBeam(b, pc.doseGrid, *generic(), sampling, first);
      bool reused = true;
      const BeamLayout layout = detail::cachedLayoutBeam(b, pc.doseGrid, generic(), sampling);
      EXPECT_TRUE(sameBev(layout.bev, direct.layout.bev)) << what;
      EXPECT_EQ(layout.tileListBound, direct.layout.tileListBound) << what;
      const PreparedBeam cold =
          detail::cachedPrepareBeam(b, pc.doseGrid, generic(), sampling, first, &reused);
      EXPECT_FALSE(reused) << what;
      const PreparedBeam warm =
          detail::cachedPrepareBeam(b, pc.doseGrid, generic(), sampling, first, &reused);
      EXPECT_TRUE(reused) << what;
      ASSERT_FALSE(direct.tileSpots.empty()) << what;
      expectSamePrepared(cold, direct, what + " (cold)");
      expectSamePrepared(warm, direct, what + " (warm)");
      first += b.spotCount();
    }
  }
  EXPECT_LE(detail::beamCacheSize(), detail::kBeamCacheEntries);
}

TEST(ProtonPrepareCache, AWeightsOnlyEditReusesTheTileListsWithTheNewWeights) {
  detail::clearBeamCache();
  const ProtonPhantomCase pc = makeRandomPhantomCase(5, 41);
  BevSampling sampling;
  ProtonBeam beam = pc.beams[0];
  bool reused = false;
  (void)detail::cachedPrepareBeam(beam, pc.doseGrid, generic(), sampling, 0, &reused);
  for (ProtonSpot& s : beam.layers[1].spots) s.weight *= 1.75;
  beam.name = "renamed";  // names are not part of the key either
  const PreparedBeam edited = detail::cachedPrepareBeam(beam, pc.doseGrid, generic(), sampling, 17, &reused);
  EXPECT_TRUE(reused);
  expectSamePrepared(edited, prepareBeam(beam, pc.doseGrid, *generic(), sampling, 17), "weights edit");
}

TEST(ProtonPrepareCache, GeometrySpotsGridSamplingAndMachineArePartOfTheKey) {
  detail::clearBeamCache();
  const ProtonPhantomCase pc = makeRandomPhantomCase(6, 39);
  const BevSampling sampling;
  const ProtonBeam beam = pc.beams[0];
  bool reused = false;
  (void)detail::cachedPrepareBeam(beam, pc.doseGrid, generic(), sampling, 0, &reused);
  auto expectMiss = [&](const ProtonBeam& b, const Grid& g, std::shared_ptr<const ProtonMachine> m,
                        const BevSampling& s, const char* what) {
    bool hit = true;
    const PreparedBeam p = detail::cachedPrepareBeam(b, g, m, s, 0, &hit);
    EXPECT_FALSE(hit) << what;
    expectSamePrepared(p, prepareBeam(b, g, *m, s, 0), what);
  };
  ProtonBeam gantry = beam;
  gantry.gantryDeg += 2;
  expectMiss(gantry, pc.doseGrid, generic(), sampling, "gantry + 2 deg");
  ProtonBeam iso = beam;
  iso.isocenter.x += 1;
  expectMiss(iso, pc.doseGrid, generic(), sampling, "isocentre + 1 mm");
  ProtonBeam moved = beam;
  moved.layers[0].spots[0].x += 0.5;
  expectMiss(moved, pc.doseGrid, generic(), sampling, "one spot moved");
  Grid grid = pc.doseGrid;
  grid.origin.z += 0.25;
  expectMiss(beam, grid, generic(), sampling, "dose grid shifted");
  BevSampling coarse = sampling;
  coarse.cutoffSigmas = 2.5;
  expectMiss(beam, pc.doseGrid, generic(), coarse, "cut-off");
  // A machine with the same beam model is another machine (its tables are its own objects).
  expectMiss(beam, pc.doseGrid, std::make_shared<const ProtonMachine>(generic()->beamModel()),
             sampling, "another machine");
  // And the original is still there.
  bool hit = false;
  (void)detail::cachedPrepareBeam(beam, pc.doseGrid, generic(), sampling, 0, &hit);
  EXPECT_TRUE(hit);
}

/// The lists by their definition: every (tile, layer, spot) the brute-force disc test accepts
/// over all tiles, not only those of the spot's ray box (tile_hits.hpp) - the box must not lose
/// a hit.
std::size_t bruteForceHits(const ProtonBeam& beam, const BeamLayout& L) {
  std::size_t n = 0;
  for (std::size_t l = 0; l < beam.layers.size(); ++l) {
    const double R = L.cullRadiusIsoMm[l];
    for (const ProtonSpot& s : beam.layers[l].spots)
      for (int tb = 0; tb < L.tilesB; ++tb)
        for (int ta = 0; ta < L.tilesA; ++ta) {
          const pb::SpotRays box = pb::spotRays(s.x, s.y, R, L.bev);
          const bool inBox = pb::boxHasTile(box, ta, tb);
          const bool disc = pb::discMeetsTile(s.x, s.y, R * R, L.bev, ta, tb);
          n += inBox && disc;
          // A disc that meets a tile outside the box would be a lost hit only where the box is
          // narrower than the disc: never, as the box is the disc's rays widened by one.
          EXPECT_FALSE(disc && !inBox && box.iLo <= box.iHi && box.jLo <= box.jHi)
              << "spot (" << s.x << ", " << s.y << ") tile " << ta << ", " << tb;
        }
  }
  return n;
}

TEST(ProtonPrepareCache, TheListsBoundHoldsTheListsAndStaysClose) {
  // Random phantoms and hn-2field with isocentres off the grid: the bound that sizes the memory
  // estimate and the GPU build's buffer is never below the lists' length, and not far above
  // (hn-2field at 2 mm: 1.9-2.0x; random phantoms 1.0-2.3x).
  std::vector<std::pair<ProtonPhantomCase, double>> cases;
  for (std::uint32_t seed : {11u, 12u, 13u}) cases.emplace_back(makeRandomPhantomCase(seed, 35), 0.0);
  cases.emplace_back(makeHeadNeckCase(2.0), 0.37);
  for (const auto& [pc, shift] : cases) {
    for (ProtonBeam b : pc.beams) {
      b.isocenter.x += shift;
      b.isocenter.z -= shift / 3;
      const PreparedBeam P = prepareBeam(b, pc.doseGrid, *generic(), BevSampling{}, 0);
      const std::string what = pc.name + " " + b.name;
      if (P.layout.empty) continue;
      ASSERT_TRUE(P.tileListsOnHost) << what;
      EXPECT_GT(P.tileSpots.size(), 0u) << what;
      EXPECT_LE(P.tileSpots.size(), P.layout.tileListBound) << what;
      EXPECT_LE(double(P.layout.tileListBound), 3.0 * double(P.tileSpots.size())) << what;
      EXPECT_EQ(P.tileSpots.size(), bruteForceHits(b, P.layout)) << what;
    }
  }
}

TEST(ProtonPrepareCache, ListsLeftToTheGpuAreLeftOutAndCachedApart) {
  detail::clearBeamCache();
  const ProtonPhantomCase pc = makeRandomPhantomCase(9, 37);
  const BevSampling sampling;
  const ProtonBeam& b = pc.beams[0];
  const PreparedBeam host = prepareBeam(b, pc.doseGrid, *generic(), sampling, 3);
  const PreparedBeam device = prepareBeam(b, pc.doseGrid, *generic(), sampling, 3, TileLists::OnDevice);
  ASSERT_TRUE(host.tileListsOnHost);
  EXPECT_FALSE(device.tileListsOnHost);
  EXPECT_TRUE(device.tileLayerBegin.empty() && device.tileSpots.empty());
  PreparedBeam hostWithout = host;
  hostWithout.tileLayerBegin.clear();
  hostWithout.tileSpots.clear();
  hostWithout.tileListsOnHost = false;
  expectSamePrepared(device, hostWithout, "lists on the GPU");
  EXPECT_NE(device.tileListsId, host.tileListsId);  // each preparation its own id

  // The cache: a beam prepared without lists does not serve a call that wants them; one with
  // lists serves both, and hands out the same id (the same lists, wherever they are built).
  bool reused = true;
  const PreparedBeam a = detail::cachedPrepareBeam(b, pc.doseGrid, generic(), sampling, 3, &reused,
                                                   TileLists::OnDevice);
  EXPECT_FALSE(reused);
  expectSamePrepared(a, hostWithout, "cached, lists on the GPU");
  const PreparedBeam c = detail::cachedPrepareBeam(b, pc.doseGrid, generic(), sampling, 3, &reused,
                                                   TileLists::OnHost);
  EXPECT_FALSE(reused);
  expectSamePrepared(c, host, "cached, lists on the host");
  const PreparedBeam d = detail::cachedPrepareBeam(b, pc.doseGrid, generic(), sampling, 3, &reused,
                                                   TileLists::OnDevice);
  EXPECT_TRUE(reused);
  expectSamePrepared(d, hostWithout, "cached with lists, asked without");
  EXPECT_EQ(d.tileListsId, c.tileListsId);
}

TEST(ProtonPrepareCache, TheCacheKeepsABoundedNumberOfBeams) {
  detail::clearBeamCache();
  const ProtonPhantomCase pc = makeRandomPhantomCase(8, 33);
  ProtonBeam beam = pc.beams[0];
  for (std::size_t i = 0; i < detail::kBeamCacheEntries + 5; ++i) {
    beam.gantryDeg += 1;
    (void)detail::cachedPrepareBeam(beam, pc.doseGrid, generic(), BevSampling{}, 0);
  }
  EXPECT_EQ(detail::beamCacheSize(), detail::kBeamCacheEntries);
  detail::clearBeamCache();
  EXPECT_EQ(detail::beamCacheSize(), 0u);
}

TEST(ProtonPrepareCache, CpuDoseIsTheSameWithAndWithoutTheCacheAndReportsHostStages) {
  const ProtonPhantomCase pc = makeRandomPhantomCase(4, 37);
  ProtonDoseRequest r = phantomRequest(pc, Backend::Cpu);
  detail::clearBeamCache();
  const ProtonDoseResult cold = computeProtonDose(r);
  const ProtonDoseResult warm = computeProtonDose(r);
  ASSERT_GT(maxOf(cold.dose.data), 0.0);
  ASSERT_EQ(cold.dose.data.size(), warm.dose.data.size());
  EXPECT_EQ(0, std::memcmp(cold.dose.data.data(), warm.dose.data.data(), cold.dose.data.size() * 4));
  int hostRows = 0;
  for (const KernelProfile& p : warm.profiles)
    if (p.kernel == "host_check" || p.kernel == "host_prepare") {
      ++hostRows;
      EXPECT_GE(p.medianMs, 0.0);
      EXPECT_EQ(p.device, "host");
    }
  EXPECT_EQ(hostRows, 2);
  EXPECT_FALSE(warm.sprCached);  // the CPU backend has no GPU cache
}

TEST(ProtonGpuCacheSlot, ReleaseIsANoOpWithoutACache) {
  releaseProtonGpuCache();
  EXPECT_EQ(detail::gpuCacheBytes(), 0.0);
  releaseProtonGpuCache();  // twice is fine
  EXPECT_EQ(detail::gpuCacheBytes(), 0.0);
}

TEST(ProtonPrepareCache, DefaultCurveIsReadOnce) {
  const CalibrationCurve& a = detail::defaultHuToSprCurve();
  const CalibrationCurve& b = detail::defaultHuToSprCurve();
  EXPECT_EQ(&a, &b);
  EXPECT_FALSE(a.points().empty());
  EXPECT_NEAR(a(0.0), 1.0, 0.05);  // water
}

}  // namespace
}  // namespace penumbra::proton
