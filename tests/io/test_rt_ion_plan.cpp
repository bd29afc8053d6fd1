// RT Ion Plan export -> import round trip (energies, spot maps, weights, angles, isocentre),
// dciodvfy on the export when dicom3tools is installed, and the writer's failure contract:
// invalid plans throw InvalidArgument, unwritable paths throw Io and leave the old file alone.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#include "core/error.hpp"
#include "dicom/rt_ion_plan_writer.hpp"
#include "io_test_util.hpp"
#include "test_data.hpp"

using namespace penumbra;
using namespace penumbra::io;
using penumbra::test::joined;
using penumbra::test::runCommand;
using penumbra::test::slurp;
using penumbra::test::TempDir;

namespace fs = std::filesystem;

namespace {

// Two beams with hand-checkable content: 3 and 2 layers, weights spanning four decades (and one
// zero-weight spot), non-integer positions, oblique couch.
std::vector<proton::ProtonBeam> twoBeamPlan() {
  proton::ProtonBeam a;
  a.name = "RAO";
  a.gantryDeg = 270;
  a.couchDeg = 0;
  a.isocenter = {12.5, -30.25, 101.0};
  a.virtualSourceDistanceMm = 2300;
  for (int l = 0; l < 3; ++l) {
    proton::EnergyLayer layer;
    layer.energyMeV = 150.0 - 7.5 * l;
    for (int s = 0; s < 4 + l; ++s)
      layer.spots.push_back({-15.0 + 5.0 * s, 2.5 * l - 4.0, std::pow(10.0, s - 2) * (1 + l)});
    a.layers.push_back(layer);
  }
  a.layers[1].spots[2].weight = 0;  // zero weights are legal and must survive
  proton::ProtonBeam b;
  b.name = "LPO couch 15";
  b.gantryDeg = 135.5;
  b.couchDeg = 15;
  b.isocenter = {-7.0, 0.0, 88.75};
  b.virtualSourceDistanceMm = 1950.5;
  b.layers.push_back({101.25, {{0, 0, 3.25}, {3.3, -6.6, 0.125}}});
  b.layers.push_back({95.0, {{-1.5, 1.5, 42.0}}});
  return {a, b};
}

RtIonPlanWriteOptions planOptions() {
  RtIonPlanWriteOptions o;
  o.patientName = "Penumbra^Test";
  o.frameOfReferenceUid = "1.2.826.0.1.3680043.8.498.1";
  o.referencedStructureSetSopInstanceUid = "1.2.826.0.1.3680043.8.498.3";
  o.planLabel = "PBS 2F";
  o.planName = "Two-field PBS";
  o.targetName = "PTV";
  o.dosePerFractionGy = 2;
  o.fractions = 30;
  o.scanningSpotFwhmMm = 8.5;
  return o;
}


void expectRelNear(double actual, double expected, double rel, const std::string& what) {
  EXPECT_LE(std::abs(actual - expected), rel * std::abs(expected) + 1e-300)
      << what << ": " << actual << " vs " << expected;
}

}  // namespace

TEST(RtIonPlanIo, RoundTripKeepsBeamsLayersSpotsAndWeights) {
  TempDir dir("ionplan");
  const auto plan = twoBeamPlan();
  const std::string path = dir.sub("RN.dcm");
  const RtIonPlanWriteResult w = writeRtIonPlan(path, plan, planOptions());
  EXPECT_TRUE(w.warnings.empty()) << joined(w.warnings);
  EXPECT_FALSE(w.sopInstanceUid.empty());
  EXPECT_EQ(w.frameOfReferenceUid, "1.2.826.0.1.3680043.8.498.1");

  std::vector<std::string> warnings;
  const auto back = readRtIonPlan(path, &warnings);
  EXPECT_TRUE(warnings.empty()) << joined(warnings);
  ASSERT_EQ(back.size(), plan.size());
  std::size_t spots = 0;
  for (std::size_t b = 0; b < plan.size(); ++b) {
    const auto &in = plan[b], &out = back[b];
    SCOPED_TRACE("beam " + in.name);
    EXPECT_EQ(out.name, in.name);
    EXPECT_NEAR(out.gantryDeg, in.gantryDeg, 1e-9);
    EXPECT_NEAR(out.couchDeg, in.couchDeg, 1e-9);
    EXPECT_NEAR(out.isocenter.x, in.isocenter.x, 1e-9);
    EXPECT_NEAR(out.isocenter.y, in.isocenter.y, 1e-9);
    EXPECT_NEAR(out.isocenter.z, in.isocenter.z, 1e-9);
    EXPECT_NEAR(out.virtualSourceDistanceMm, in.virtualSourceDistanceMm, 1e-3);
    ASSERT_EQ(out.layers.size(), in.layers.size());
    for (std::size_t l = 0; l < in.layers.size(); ++l) {
      EXPECT_NEAR(out.layers[l].energyMeV, in.layers[l].energyMeV, 1e-9);
      ASSERT_EQ(out.layers[l].spots.size(), in.layers[l].spots.size());
      for (std::size_t s = 0; s < in.layers[l].spots.size(); ++s, ++spots) {
        const auto &a = in.layers[l].spots[s], &c = out.layers[l].spots[s];
        EXPECT_NEAR(c.x, a.x, 1e-5);  // FL (float32) in mm
        EXPECT_NEAR(c.y, a.y, 1e-5);
        expectRelNear(c.weight, a.weight, 1e-6, "weight of spot " + std::to_string(s));
      }
    }
  }
  EXPECT_EQ(spots, proton::totalSpotCount(plan));
  EXPECT_EQ(back[0].layers[1].spots[2].weight, 0.0);
  EXPECT_GT(back[1].layers[1].spots[0].weight, 41.9);  // not all zero
  // Only the plan is left in the folder (the temporary file was renamed).
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.str()), fs::directory_iterator()), 1);
}

TEST(RtIonPlanIo, ProtonsPerWeightUnitScalesTheMetersetNotTheReadBackProtons) {
  TempDir dir("ionplan-np");
  auto plan = twoBeamPlan();
  RtIonPlanWriteOptions o = planOptions();
  o.protonsPerWeightUnit = 2e9;  // a weight of 1 is 2e9 protons: 2 engine weight units
  writeRtIonPlan(dir.sub("RN.dcm"), plan, o);
  const auto back = readRtIonPlan(dir.sub("RN.dcm"));
  ASSERT_EQ(back.size(), 2u);
  expectRelNear(back[1].layers[1].spots[0].weight, 2 * 42.0, 1e-6, "rescaled weight");
}

TEST(RtIonPlanIo, NoStructureSetWritesTreatmentDeviceGeometryWithWarning) {
  TempDir dir("ionplan-noss");
  RtIonPlanWriteOptions o;
  const RtIonPlanWriteResult w = writeRtIonPlan(dir.sub("RN.dcm"), twoBeamPlan(), o);
  EXPECT_TRUE(test::anyContains(w.warnings, "TREATMENT_DEVICE")) << joined(w.warnings);
  EXPECT_TRUE(test::anyContains(w.warnings, "frame of reference")) << joined(w.warnings);
  EXPECT_EQ(readRtIonPlan(dir.sub("RN.dcm")).size(), 2u);
}

TEST(RtIonPlanIo, ReadingOtherObjectsThrowsFormatOrIo) {
  const auto code = [](const std::string& path) {
    try {
      readRtIonPlan(path);
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::Internal;  // did not throw
  };
  EXPECT_EQ(code("/nonexistent/RN.dcm"), ErrorCode::Io);
  TempDir dir("ionplan-other");
  std::ofstream(dir.sub("text.dcm")) << "not DICOM";
  EXPECT_EQ(code(dir.sub("text.dcm")), ErrorCode::Io);
  const std::string photonPlan = "dicom-samples/rtplan.dcm";  // pydicom's RT (photon) Plan
  if (fs::exists(test::dataPath(photonPlan))) {
    EXPECT_EQ(code(test::dataPath(photonPlan)), ErrorCode::Format);
  }
  // pydicom's XiO RT Ion Plan header without beams (big and little endian): empty, explained.
  for (const char* rel :
       {"dicom-samples/ExplVR_LitEndNoMeta.dcm", "dicom-samples/ExplVR_BigEndNoMeta.dcm"}) {
    if (!fs::exists(test::dataPath(rel))) continue;
    std::vector<std::string> warnings;
    EXPECT_TRUE(readRtIonPlan(test::dataPath(rel), &warnings).empty()) << rel;
    EXPECT_TRUE(test::anyContains(warnings, "no usable ion beams")) << rel << joined(warnings);
  }
}

TEST(RtIonPlanIo, InvalidPlansThrowInvalidArgument) {
  TempDir dir("ionplan-invalid");
  const auto code = [&](const std::vector<proton::ProtonBeam>& beams,
                        const RtIonPlanWriteOptions& o = {}) {
    try {
      writeRtIonPlan(dir.sub("RN.dcm"), beams, o);
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::Internal;  // did not throw
  };
  EXPECT_EQ(code({}), ErrorCode::InvalidArgument);
  auto negative = twoBeamPlan();
  negative[1].layers[0].spots[1].weight = -0.5;
  EXPECT_EQ(code(negative), ErrorCode::InvalidArgument);
  auto noLayers = twoBeamPlan();
  noLayers[0].layers.clear();
  EXPECT_EQ(code(noLayers), ErrorCode::InvalidArgument);
  RtIonPlanWriteOptions longLabel;
  longLabel.planLabel = "seventeen chars!!";  // RTPlanLabel is SH: 16 characters at most
  EXPECT_EQ(code(twoBeamPlan(), longLabel), ErrorCode::InvalidArgument);
  EXPECT_FALSE(fs::exists(dir.sub("RN.dcm")));
}

TEST(RtIonPlanIo, FailedWriteThrowsIoAndLeavesExistingFileUntouched) {
  TempDir dir("ionplan-fail");
  try {
    writeRtIonPlan(dir.sub("no-such-folder/RN.dcm"), twoBeamPlan());
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Io) << e.what();
  }
  // An existing plan survives a failed replace (a non-empty folder where the file would go
  // cannot be renamed over), and no temporary file is left behind.
  const std::string good = dir.sub("RN.dcm");
  writeRtIonPlan(good, twoBeamPlan(), planOptions());
  const std::string before = slurp(good);
  fs::create_directories(dir.sub("blocked.dcm/inside"));
  try {
    writeRtIonPlan(dir.sub("blocked.dcm"), twoBeamPlan());
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Io) << e.what();
  }
  auto invalid = twoBeamPlan();
  invalid[0].layers[0].spots[0].weight = -1;
  EXPECT_THROW(writeRtIonPlan(good, invalid), Error);
  EXPECT_EQ(slurp(good), before);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.str()), fs::directory_iterator()), 2);
}

TEST(RtIonPlanIo, ExportPassesDciodvfy) {
  if (std::system("command -v dciodvfy > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "dciodvfy not installed (Debian package dicom3tools)";
  TempDir dir("ionplan-vfy");
  for (const bool withStructureSet : {true, false}) {
    RtIonPlanWriteOptions o = planOptions();
    if (!withStructureSet) o.referencedStructureSetSopInstanceUid.clear();
    const std::string path = dir.sub(withStructureSet ? "RN.dcm" : "RN-noss.dcm");
    writeRtIonPlan(path, twoBeamPlan(), o);
    const std::string out = runCommand("dciodvfy '" + path + "' 2>&1");
    std::printf("dciodvfy (%s structure set):\n%s", withStructureSet ? "with" : "without",
                out.c_str());
    EXPECT_NE(out.find("RTIonPlan"), std::string::npos) << out;  // it recognised the IOD
    EXPECT_EQ(out.find("Error"), std::string::npos) << out;
  }
}
