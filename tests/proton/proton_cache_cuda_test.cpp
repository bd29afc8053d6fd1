// The proton engine's GPU cache across calls (proton_dose.hpp "GPU cache across calls"):
// cached and uncached runs give the same bits; a new volume, curve or geometry is not served
// from the cache; a weights-only edit reuses the WEPL; two threads at once get their own doses;
// a cancelled run frees the cache. Skips without a device. The CUDA backend poisons what it
// computes (NaN) first, so every test also checks that every voxel is finite.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>

#include "core/device.hpp"
#include "core/error.hpp"
#include "proton/prepare_cache.hpp"
#include "proton/proton_backend.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_gpu_cache.hpp"
#include "proton/proton_phantoms.hpp"
#include "proton_dose_test_support.hpp"
#include "gpu_test_support.hpp"

namespace penumbra::proton {
namespace {

using namespace proton::test;

ProtonDoseRequest gpuRequest(const ProtonPhantomCase& pc) {
  ProtonDoseRequest r;
  r.ct = std::make_shared<CtVolume>(pc.ct);
  r.beams = pc.beams;
  r.doseGrid = pc.doseGrid;
  r.backend = Backend::Cuda;
  return r;
}

/// Nothing cached on the GPU or the host: what every call did before the cache.
ProtonDoseResult uncached(const ProtonDoseRequest& r) {
  releaseProtonGpuCache();
  detail::clearBeamCache();
  ProtonDoseResult res = computeProtonDose(r);
  EXPECT_FALSE(res.sprCached);
  EXPECT_EQ(res.weplCachedBeams, 0);
  return res;
}

bool sameBits(const ProtonDoseResult& a, const ProtonDoseResult& b) {
  return a.dose.data.size() == b.dose.data.size() &&
         std::memcmp(a.dose.data.data(), b.dose.data.data(), a.dose.data.size() * sizeof(float)) == 0;
}

/// A usable dose: written everywhere (no poison left), not all zero.
void expectWritten(const ProtonDoseResult& r, const std::string& what) {
  EXPECT_EQ(r.backend, Backend::Cuda) << what;
  std::size_t bad = 0;
  for (float d : r.dose.data) bad += !std::isfinite(d);
  EXPECT_EQ(bad, 0u) << what << ": voxels left unwritten";
  EXPECT_GT(maxOf(r.dose.data), 0.0) << what;
}

int activeBeams(const ProtonDoseRequest& r) {
  int n = 0;
  for (const ProtonBeam& b : r.beams) n += b.spotCount() > 0;
  return n;
}

TEST(ProtonGpuCache, CachedAndUncachedDosesAreTheSameBits) {
  REQUIRE_GPU();
  std::vector<ProtonPhantomCase> cases = {makeBoxPhantomCase(), makeWaterPhantomCase(),
                                          makeHeadNeckCase(2.0), makeRandomPhantomCase(7, 41)};
  for (const ProtonPhantomCase& pc : cases) {
    for (bool sprInput : {false, true}) {
      ProtonDoseRequest r = gpuRequest(pc);
      if (sprInput) {
        r.spr = std::make_shared<Volume<float>>(sprOfCt(pc.ct));
        r.ct.reset();
      }
      const std::string what = pc.name + (sprInput ? " (SPR)" : " (CT)");
      const ProtonDoseResult cold = uncached(r);
      const ProtonDoseResult warm = computeProtonDose(r);
      expectWritten(cold, what);
      expectWritten(warm, what);
      EXPECT_TRUE(warm.sprCached) << what;
      EXPECT_EQ(warm.weplCachedBeams, activeBeams(r)) << what;
      EXPECT_EQ(warm.bevDoseCachedBeams, activeBeams(r)) << what;
      EXPECT_TRUE(sameBits(cold, warm)) << what;
      // Cached on the GPU only (the host's tile lists made afresh): the same bits too.
      detail::clearBeamCache();
      EXPECT_TRUE(sameBits(cold, computeProtonDose(r))) << what;
    }
  }
}

TEST(ProtonGpuCache, ANewVolumeOrCurveIsNotServedFromTheCache) {
  REQUIRE_GPU();
  const ProtonPhantomCase pc = makeRandomPhantomCase(11, 43);
  ProtonDoseRequest r = gpuRequest(pc);
  const ProtonDoseResult first = uncached(r);
  expectWritten(first, "first");
  EXPECT_TRUE(computeProtonDose(r).sprCached);

  // The same voxels in a new volume (another owner): uploaded again, the same bits.
  ProtonDoseRequest copy = r;
  copy.ct = std::make_shared<CtVolume>(*r.ct);
  const ProtonDoseResult fromCopy = computeProtonDose(copy);
  EXPECT_FALSE(fromCopy.sprCached);
  EXPECT_EQ(fromCopy.weplCachedBeams, 0);
  EXPECT_TRUE(sameBits(first, fromCopy));

  // Other voxels: a bone slab across the middle. The new dose, as an uncached run gives it.
  auto bone = std::make_shared<CtVolume>(*r.ct);
  const Grid& g = bone->grid;
  for (int k = 0; k < g.dims[2]; ++k)
    for (int j = 0; j < g.dims[1]; ++j)
      for (int i = g.dims[0] / 3; i < g.dims[0] / 2; ++i) bone->at(i, j, k) = 1200;
  ProtonDoseRequest other = r;
  other.ct = bone;
  const ProtonDoseResult slab = computeProtonDose(other);
  EXPECT_FALSE(slab.sprCached);
  EXPECT_EQ(slab.weplCachedBeams, 0);
  EXPECT_EQ(slab.bevDoseCachedBeams, 0);
  expectWritten(slab, "bone slab");
  EXPECT_FALSE(sameBits(first, slab));
  EXPECT_TRUE(sameBits(slab, uncached(other)));

  // Another HU -> SPR curve on the same CT: converted again.
  (void)computeProtonDose(other);
  ProtonDoseRequest curve = other;
  curve.hlut = CalibrationCurve("test", {{-1000.0, 0.0}, {0.0, 1.0}, {3000.0, 2.2}});
  const ProtonDoseResult curved = computeProtonDose(curve);
  EXPECT_FALSE(curved.sprCached);
  EXPECT_FALSE(sameBits(slab, curved));
  EXPECT_TRUE(sameBits(curved, uncached(curve)));

  // The invalidation rule for a volume changed in place: releaseProtonGpuCache() makes the next
  // call read the new voxels.
  (void)computeProtonDose(other);  // the cache holds the other curve's SPR: converted again
  EXPECT_TRUE(computeProtonDose(other).sprCached);
  std::fill(bone->data.begin(), bone->data.end(), std::int16_t(0));  // water
  releaseProtonGpuCache();
  const ProtonDoseResult water = computeProtonDose(other);
  EXPECT_FALSE(water.sprCached);
  ProtonDoseRequest waterReq = r;
  waterReq.ct = std::make_shared<CtVolume>(g, std::int16_t(0));
  EXPECT_TRUE(sameBits(water, uncached(waterReq)));
}

TEST(ProtonGpuCache, AWeightsOnlyEditReusesTheWeplAndEqualsAnUncachedRun) {
  REQUIRE_GPU();
  for (const ProtonPhantomCase& pc : {makeHeadNeckCase(2.0), makeRandomPhantomCase(12, 45)}) {
    ProtonDoseRequest r = gpuRequest(pc);
    ASSERT_GE(r.beams.size(), 2u);
    const ProtonDoseResult before = uncached(r);
    (void)computeProtonDose(r);
    ProtonDoseRequest edit = r;
    for (ProtonSpot& s : edit.beams[0].layers[1].spots) s.weight *= 1.37;  // one layer of beam 0
    const ProtonDoseResult after = computeProtonDose(edit);
    expectWritten(after, pc.name);
    EXPECT_TRUE(after.sprCached) << pc.name;
    EXPECT_EQ(after.weplCachedBeams, activeBeams(r)) << pc.name;         // no ray tracing
    EXPECT_EQ(after.bevDoseCachedBeams, activeBeams(r) - 1) << pc.name;  // beam 0 superposed only
    EXPECT_FALSE(sameBits(before, after)) << pc.name;
    EXPECT_TRUE(sameBits(after, uncached(edit))) << pc.name;
  }
}

TEST(ProtonGpuCache, AGeometryEditTracesTheMovedBeamsAgain) {
  REQUIRE_GPU();
  const ProtonPhantomCase pc = makeRandomPhantomCase(13, 47);
  ProtonDoseRequest r = gpuRequest(pc);
  ASSERT_EQ(activeBeams(r), 2);
  (void)uncached(r);
  ProtonDoseRequest gantry = r;
  gantry.beams[0].gantryDeg += 2;
  const ProtonDoseResult g = computeProtonDose(gantry);
  expectWritten(g, "gantry");
  EXPECT_EQ(g.weplCachedBeams, 1);  // beam 1 only
  EXPECT_EQ(g.bevDoseCachedBeams, 1);
  EXPECT_TRUE(sameBits(g, uncached(gantry)));

  ProtonDoseRequest iso = gantry;
  for (ProtonBeam& b : iso.beams) b.isocenter.x += 1.0;
  const ProtonDoseResult i = computeProtonDose(iso);
  expectWritten(i, "isocentre");
  EXPECT_EQ(i.weplCachedBeams, 0);
  EXPECT_EQ(i.bevDoseCachedBeams, 0);
  EXPECT_TRUE(sameBits(i, uncached(iso)));

  // Another DDA variant traces again (the dose may differ in the last bits: see
  // ClassicAndDdaNcAgreeOnTheGpu), and is not mixed up with the other's WEPL afterwards.
  ProtonDoseRequest classic = iso;
  classic.variant = DdaVariant::Classic;
  (void)computeProtonDose(iso);
  const ProtonDoseResult c = computeProtonDose(classic);
  EXPECT_EQ(c.weplCachedBeams, 0);
  EXPECT_TRUE(sameBits(c, uncached(classic)));
}

TEST(ProtonGpuTileLists, ListsBuiltOnTheGpuAreTheHostListsBitForBit) {
  REQUIRE_GPU();
  // Phantoms of every shape we have, hn-2field at 1 mm (its interactive case) with isocentres
  // off the grid in every direction: the GPU build (poisoned buffers, proton_workspace.cu)
  // against prepareBeam()'s host lists, offsets and entries.
  std::vector<std::pair<ProtonPhantomCase, std::vector<double>>> cases;
  cases.push_back({makeBoxPhantomCase(), {0.0, 0.7}});
  cases.push_back({makeWaterPhantomCase(), {0.0}});
  for (std::uint32_t seed : {31u, 32u, 33u, 34u}) cases.push_back({makeRandomPhantomCase(seed, 41), {0.0}});
  cases.push_back({makeHeadNeckCase(1.0), {0.0, 0.25, -1.13, 2.71}});
  std::size_t compared = 0;
  for (const auto& [pc, shifts] : cases) {
    for (double shift : shifts) {
      for (ProtonBeam b : pc.beams) {
        b.isocenter.x += shift;
        b.isocenter.y -= 0.5 * shift;
        b.isocenter.z += 0.31 * shift;
        const std::string what = pc.name + " " + b.name + " shift " + std::to_string(shift);
        const PreparedBeam host = prepareBeam(b, pc.doseGrid, *ProtonMachine::generic(), BevSampling{}, 0);
        if (host.layout.empty) continue;
        const PreparedBeam light = prepareBeam(b, pc.doseGrid, *ProtonMachine::generic(),
                                               BevSampling{}, 0, TileLists::OnDevice);
        const auto [begin, spots] = detail::deviceTileListsForTests(light);
        ASSERT_EQ(begin.size(), host.tileLayerBegin.size()) << what;
        EXPECT_EQ(0, std::memcmp(begin.data(), host.tileLayerBegin.data(), begin.size() * sizeof(int)))
            << what << ": offsets differ";
        ASSERT_EQ(spots.size(), host.tileSpots.size()) << what;
        EXPECT_EQ(0, std::memcmp(spots.data(), host.tileSpots.data(), spots.size() * sizeof(int)))
            << what << ": entries differ";
        ++compared;
      }
    }
  }
  EXPECT_GE(compared, 18u);
}

TEST(ProtonGpuTileLists, TheDoseIsTheSameBitsWithListsFromTheGpuOrTheHost) {
  REQUIRE_GPU();
  // A dose request with a dose matrix prepares its beams with host lists (the matrix builds read
  // them) and uploads them; without, the lists are built on the GPU. Same lists, same dose.
  for (std::uint32_t seed : {41u, 42u}) {
    const ProtonPhantomCase pc = makeRandomPhantomCase(seed, 39);
    ProtonDoseRequest device = gpuRequest(pc);
    ProtonDoseRequest host = device;
    host.params.computeDoseMatrix = true;
    const ProtonDoseResult a = uncached(device);
    const ProtonDoseResult b = uncached(host);
    expectWritten(a, pc.name);
    bool built = false;
    for (const KernelProfile& p : a.profiles) built |= p.kernel == "tile_lists";
    EXPECT_TRUE(built) << pc.name << ": no tile lists were built on the GPU";
    for (const KernelProfile& p : b.profiles)
      EXPECT_NE(p.kernel, "tile_lists") << pc.name << ": the matrix run built lists on the GPU";
    EXPECT_TRUE(sameBits(a, b)) << pc.name;
  }
}

TEST(ProtonGpuCache, TwoThreadsComputingAtOnceGetTheirOwnDoses) {
  REQUIRE_GPU();
  ProtonDoseRequest a = gpuRequest(makeRandomPhantomCase(21, 39));
  ProtonDoseRequest b = gpuRequest(makeRandomPhantomCase(22, 51));
  ProtonDoseRequest b2 = b;  // b with new weights: the threads also edit
  for (ProtonSpot& s : b2.beams[1].layers[0].spots) s.weight *= 0.5;
  const ProtonDoseResult refA = uncached(a), refB = uncached(b), refB2 = uncached(b2);
  expectWritten(refA, "a");
  expectWritten(refB, "b");
  std::atomic<int> wrong{0}, runs{0};
  auto work = [&](int which) {
    for (int i = 0; i < 8; ++i) {
      const bool second = which == 1 && i % 2 == 1;
      const ProtonDoseRequest& q = which == 0 ? a : second ? b2 : b;
      const ProtonDoseResult& ref = which == 0 ? refA : second ? refB2 : refB;
      const ProtonDoseResult res = computeProtonDose(q);
      wrong += sameBits(res, ref) ? 0 : 1;
      ++runs;
    }
  };
  std::thread t0(work, 0), t1(work, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(runs.load(), 16);
  EXPECT_EQ(wrong.load(), 0);
  // The cache is usable afterwards.
  EXPECT_TRUE(sameBits(computeProtonDose(a), refA));
  EXPECT_TRUE(computeProtonDose(a).sprCached);
}

class CancelAtSecondBeam : public ProgressSink {
 public:
  void report(double, std::string_view stage) override {
    if (stage.find("beam 2") != std::string_view::npos) token.requestCancel();
  }
  CancelToken token;
};

TEST(ProtonGpuCache, ACancelledRunFreesTheCacheAndReleaseFreesTheGpuMemory) {
  REQUIRE_GPU();
  ProtonDoseRequest r = gpuRequest(makeRandomPhantomCase(31, 41));
  const ProtonDoseResult ref = uncached(r);
  EXPECT_GT(detail::gpuCacheBytes(), 0.0);
  CancelAtSecondBeam sink;
  JobControl job;
  job.progress = &sink;
  job.cancel = &sink.token;
  EXPECT_THROW((void)computeProtonDose(r, job), CancelledError);
  EXPECT_EQ(detail::gpuCacheBytes(), 0.0);
  const ProtonDoseResult after = computeProtonDose(r);
  EXPECT_FALSE(after.sprCached);
  EXPECT_TRUE(sameBits(ref, after));
  EXPECT_GT(detail::gpuCacheBytes(), 0.0);
  releaseProtonGpuCache();
  EXPECT_EQ(detail::gpuCacheBytes(), 0.0);
}

TEST(ProtonGpuCache, TheLowMemoryWaySharesOneSetOfBeamBuffersAndGivesTheSameBits) {
  REQUIRE_GPU();
  ProtonDoseRequest r = gpuRequest(makeRandomPhantomCase(41, 45));
  const ProtonDoseResult perBeam = uncached(r);
  detail::setPerBeamBuffersForTests(false);
  const ProtonDoseResult shared1 = uncached(r);
  const ProtonDoseResult shared2 = computeProtonDose(r);
  detail::setPerBeamBuffersForTests(true);
  expectWritten(shared1, "shared buffers");
  EXPECT_TRUE(sameBits(perBeam, shared1));
  EXPECT_TRUE(sameBits(perBeam, shared2));
  EXPECT_TRUE(shared2.sprCached);  // the SPR is still kept ...
  EXPECT_EQ(shared2.weplCachedBeams, 0);  // ... but nothing per beam
  EXPECT_EQ(shared2.bevDoseCachedBeams, 0);
  bool said = false;
  for (const std::string& m : shared2.messages) said |= m.find("GPU memory is short") != std::string::npos;
  EXPECT_TRUE(said);
  // Back to buffers per beam: the next call fills them, the one after reuses them.
  (void)computeProtonDose(r);
  const ProtonDoseResult again = computeProtonDose(r);
  EXPECT_EQ(again.weplCachedBeams, activeBeams(r));
  EXPECT_TRUE(sameBits(perBeam, again));
}

}  // namespace
}  // namespace penumbra::proton
