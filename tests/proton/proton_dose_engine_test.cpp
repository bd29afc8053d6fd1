// The proton dose engine's contract on the CPU reference: variants, validation, memory refusal,
// cancel, the BOXPHANTOM plan, and the dose-deposition matrix.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_phantoms.hpp"
#include "proton_dose_test_support.hpp"

namespace penumbra::proton {
namespace {

using namespace proton::test;

ProtonDoseRequest caseRequest(const ProtonPhantomCase& pc, Backend backend = Backend::Cpu) {
  return phantomRequest(pc, backend);
}

TEST(ProtonDoseEngine, ClassicAndDdaNcGiveBitwiseIdenticalDoseOnCpu) {
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    const ProtonPhantomCase pc = makeRandomPhantomCase(seed, 40);
    ProtonDoseRequest r = caseRequest(pc);
    r.variant = DdaVariant::Classic;
    const ProtonDoseResult a = computeProtonDose(r);
    r.variant = DdaVariant::BranchFree;
    const ProtonDoseResult b = computeProtonDose(r);
    ASSERT_GT(maxOf(a.dose.data), 0.0) << "seed " << seed;
    ASSERT_EQ(a.dose.data.size(), b.dose.data.size());
    EXPECT_EQ(0, std::memcmp(a.dose.data.data(), b.dose.data.data(), a.dose.data.size() * 4))
        << "seed " << seed;
  }
}

TEST(ProtonDoseEngine, BoxPhantomDoseCoversTheTargetAndSparesBeyondRange) {
  const ProtonPhantomCase pc = makeBoxPhantomCase();
  ASSERT_EQ(pc.ct.grid.dims[0], 160);
  std::size_t body = 0;
  for (auto hu : pc.ct.data) body += hu == 0;
  ASSERT_EQ(body, 531441u);  // the BODY of matRad's BOXPHANTOM
  const ProtonDoseResult res = computeProtonDose(caseRequest(pc));
  const double dmax = maxOf(res.dose.data);
  ASSERT_GT(dmax, 0.0);
  EXPECT_GT(res.gaussianContributions, 0u);
  // Target centre (voxel 79) gets a substantial dose; a voxel 30 mm beyond the distal edge of the
  // gantry-0 beam (and outside the gantry-90 beam's path) gets almost none.
  const double centre = res.dose.at(79, 79, 79);
  EXPECT_GT(centre, 0.3 * dmax);
  const double beyond = res.dose.at(79, 89 + 10, 89 + 10);
  EXPECT_LT(beyond, 0.01 * dmax);
  // Nothing upstream of the source's side is NaN, nothing negative.
  for (float d : res.dose.data) ASSERT_TRUE(std::isfinite(d) && d >= 0);
}

TEST(ProtonDoseEngine, RefusesAPlanThatDoesNotFitBeforeAllocating) {
  ProtonDoseRequest r;
  r.spr = slabPhantom();
  r.beams = {singleSpotBeam(150)};
  // 4000^3 voxels of 0.25 mm: a 1-m cube, 6.4e10 voxels, 256 GB of float dose.
  r.doseGrid = makeAxisGrid({4000, 4000, 4000}, {0.25, 0.25, 0.25}, {-500, -500, -500});
  r.backend = Backend::Cpu;
  const WorkspaceEstimate est = workspaceBytes(r);
  EXPECT_GT(est.hostBytes, std::size_t(256e9));
  EXPECT_GT(est.deviceBytes, std::size_t(256e9));
  try {
    (void)computeProtonDose(r);
    FAIL() << "an absurd dose grid was not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfMemory);
    EXPECT_NE(e.message().find("GiB"), std::string::npos) << e.message();
    std::printf("refusal: %s\n", e.message().c_str());
  }
}

TEST(ProtonDoseEngine, CancelledTokenThrowsCancelledError) {
  CancelToken token;
  token.requestCancel();
  JobControl job;
  job.cancel = &token;
  const ProtonDoseRequest r = physicsRequest(slabPhantom(), singleSpotBeam(120));
  EXPECT_THROW((void)computeProtonDose(r, job), CancelledError);
}

TEST(ProtonDoseEngine, InvalidRequestsAreRefusedWithReasons) {
  ProtonDoseRequest r = physicsRequest(slabPhantom(), singleSpotBeam(150));
  r.beams[0].layers[0].energyMeV = 400;  // outside the beam model
  EXPECT_THROW((void)computeProtonDose(r), Error);
  r = physicsRequest(slabPhantom(), singleSpotBeam(150));
  r.beams[0].layers[0].spots[0].weight = -1;
  EXPECT_THROW((void)validate(r), Error);
  r = physicsRequest(slabPhantom(), singleSpotBeam(150));
  r.beams.clear();
  EXPECT_THROW((void)validate(r), Error);
  r = physicsRequest(slabPhantom(), singleSpotBeam(150));
  r.spr.reset();
  EXPECT_THROW((void)validate(r), Error);
  r = physicsRequest(slabPhantom(), singleSpotBeam(150));
  r.beams[0].virtualSourceDistanceMm = 50;  // source inside the dose grid
  EXPECT_THROW((void)computeProtonDose(r), Error);
}

/// The message of validate(r), or "" when it accepts r.
std::string validationError(const ProtonDoseRequest& r) {
  try {
    validate(r);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    return e.message();
  }
  return "";
}

TEST(ProtonDoseEngine, UnphysicalValuesAreRefusedNamingThem) {
  // Each of these used to run to an inf/NaN dose.
  ProtonDoseRequest r = physicsRequest(slabPhantom(), singleSpotBeam(150));
  r.beams[0].layers[0].spots[0].weight = 1e308;
  EXPECT_NE(validationError(r).find("spot weight 1e+308 outside [0, 1e+06]"), std::string::npos)
      << validationError(r);
  r = physicsRequest(slabPhantom(), singleSpotBeam(150));
  r.beams[0].virtualSourceDistanceMm = 1e-9;
  EXPECT_NE(validationError(r).find("virtual source distance 1e-09 mm outside [500, 100000] mm"),
            std::string::npos)
      << validationError(r);
  r = physicsRequest(slabPhantom(), singleSpotBeam(150));
  r.doseGrid.spacing.x = 1e-300;
  EXPECT_NE(
      validationError(r).find("dose grid spacing 1e-300 mm (axis 1) is outside [0.01, 100] mm"),
      std::string::npos)
      << validationError(r);
  r = physicsRequest(slabPhantom(), singleSpotBeam(150, kMaxSpotWeight));
  EXPECT_EQ(validationError(r), "");
}

TEST(ProtonDoseEngine, DoseIsLinearInSpotWeights) {
  ProtonDoseRequest r = physicsRequest(slabPhantom(), singleSpotBeam(120, 1.0));
  r.beams[0].layers[0].spots.push_back({8, -5, 0.5});
  const ProtonDoseResult a = computeProtonDose(r);
  for (auto& s : r.beams[0].layers[0].spots) s.weight *= 3;
  const ProtonDoseResult b = computeProtonDose(r);
  double maxA = maxOf(a.dose.data), worst = 0;
  for (std::size_t v = 0; v < a.dose.data.size(); ++v)
    worst = std::max(worst, std::fabs(3.0 * a.dose.data[v] - b.dose.data[v]));
  EXPECT_LT(worst, 1e-6 * 3 * maxA);
}

TEST(ProtonDoseMatrix, TimesWeightsReproducesTheEngineDose) {
  ProtonPhantomCase pc = makeRandomPhantomCase(11, 32);
  ProtonDoseRequest r = caseRequest(pc);
  r.params.computeDoseMatrix = true;
  r.params.doseMatrixRelativeCutoff = 1e-4;
  const ProtonDoseResult res = computeProtonDose(r);
  ASSERT_TRUE(res.matrix.has_value());
  const DoseMatrixCsr& m = *res.matrix;
  ASSERT_EQ(m.rows, std::int64_t(res.dose.data.size()));
  ASSERT_EQ(m.cols, std::int64_t(totalSpotCount(r.beams)));
  ASSERT_GT(m.nnz(), 0);
  for (std::int64_t row = 0; row < m.rows; ++row)
    for (std::int64_t e = m.rowPtr[std::size_t(row)] + 1; e < m.rowPtr[std::size_t(row) + 1]; ++e)
      ASSERT_LT(m.colIdx[std::size_t(e) - 1], m.colIdx[std::size_t(e)]) << "row " << row;
  std::vector<double> w;
  for (const auto& b : r.beams)
    for (const auto& l : b.layers)
      for (const auto& s : l.spots) w.push_back(s.weight);
  const std::vector<double> dw = m.multiply(w);
  const double dmax = maxOf(res.dose.data);
  ASSERT_GT(dmax, 0.0);
  double worst = 0;
  for (std::size_t v = 0; v < dw.size(); ++v)
    worst = std::max(worst, std::fabs(dw[v] - double(res.dose.data[v])));
  std::printf("matrix: %lld x %lld, nnz %lld, dropped %lld, max |Dw - dose| = %.3g of max\n",
              (long long)m.rows, (long long)m.cols, (long long)m.nnz(), (long long)m.droppedEntries,
              worst / dmax);
  EXPECT_LT(worst, 1e-2 * dmax);
  // Without the cut-off only fp16 rounding remains: 2^-11 relative per entry.
  r.params.doseMatrixRelativeCutoff = 0;
  const ProtonDoseResult exact = computeProtonDose(r);
  const std::vector<double> dw0 = exact.matrix->multiply(w);
  worst = 0;
  for (std::size_t v = 0; v < dw0.size(); ++v)
    worst = std::max(worst, std::fabs(dw0[v] - double(exact.dose.data[v])));
  EXPECT_LT(worst, 1e-3 * dmax);
  EXPECT_EQ(exact.matrix->droppedEntries, 0);
}

}  // namespace
}  // namespace penumbra::proton
