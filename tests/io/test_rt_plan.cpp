// RT Plan (photon) export: the file read back with DCMTK's typed classes (SOP class, references,
// fraction scheme with each beam's MU, per beam the jaws, angles in [0, 360), isocentre, SAD,
// aperture blocks and the two control points), dciodvfy on the export when dicom3tools is
// installed, and the writer's failure contract: invalid plans throw InvalidArgument and write
// nothing, unwritable paths throw Io and leave the old file alone.
#include <dcmtk/dcmrt/drtplan.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>

#include "core/error.hpp"
#include "dicom/rt_ion_plan_writer.hpp"
#include "dicom/rt_plan_writer.hpp"
#include "io_test_util.hpp"

using namespace penumbra;
using namespace penumbra::io;
using penumbra::test::joined;
using penumbra::test::runCommand;
using penumbra::test::slurp;
using penumbra::test::TempDir;

namespace fs = std::filesystem;

namespace {

// An open asymmetric field with the collimator at 15 degrees, and a field with an L-shaped
// aperture at gantry -90 (written 270) and couch -10 (written 350).
std::vector<photon::PhotonBeam> twoBeamPlan() {
  photon::PhotonBeam open;
  open.name = "AP open";
  open.gantryDeg = 0;
  open.couchDeg = 0;
  open.collimatorDeg = 15;
  open.isocenter = {12.5, -30.25, 101.0};
  open.sadMm = 1000;
  open.x1Mm = -40;
  open.x2Mm = 60.5;
  open.y1Mm = -50;
  open.y2Mm = 30;
  open.monitorUnits = 123.4;
  photon::PhotonBeam shaped;
  shaped.name = "LAT aperture";
  shaped.gantryDeg = -90;
  shaped.couchDeg = -10;
  shaped.collimatorDeg = 0;
  shaped.isocenter = {-7.0, 0.0, 88.75};
  shaped.sadMm = 1000;
  shaped.x1Mm = -36;
  shaped.x2Mm = 31;
  shaped.y1Mm = -26;
  shaped.y2Mm = 41;
  shaped.aperture = {
      {{-35.5, -25.25}, {30.75, -25.25}, {30.75, 5.0}, {0.125, 5.0}, {0.125, 40.5}, {-35.5, 40.5}}};
  shaped.monitorUnits = 87.5;
  return {open, shaped};
}

RtPlanWriteOptions planOptions() {
  RtPlanWriteOptions o;
  o.patientName = "Penumbra^Test";
  o.patientId = "RTPLAN-1";
  o.studyInstanceUid = "1.2.826.0.1.3680043.8.498.7";
  o.frameOfReferenceUid = "1.2.826.0.1.3680043.8.498.1";
  o.referencedStructureSetSopInstanceUid = "1.2.826.0.1.3680043.8.498.3";
  o.planLabel = "6MV 2F";
  o.planName = "Two-field photons";
  o.targetName = "PTV";
  o.dosePerFractionGy = 2;
  o.fractions = 30;
  return o;
}


std::size_t filesIn(const std::string& dir) {
  return std::size_t(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

/// The plan as DCMTK reads it (fails the test when it cannot).
void load(const std::string& path, DcmFileFormat& file, DRTPlanIOD& rt) {
  ASSERT_TRUE(file.loadFile(path.c_str()).good()) << path;
  ASSERT_TRUE(rt.read(*file.getDataset()).good()) << path;
}

std::string str(const OFString& s) { return s.c_str(); }

/// The value a DCMTK getter `get(Float64&)` returns (NaN, and a failure, when it fails).
template <class Getter>
double value(Getter get) {
  Float64 v = std::numeric_limits<double>::quiet_NaN();
  const OFCondition c = get(v);
  EXPECT_TRUE(c.good()) << c.text();
  return c.good() ? v : std::numeric_limits<double>::quiet_NaN();
}

std::vector<double> jaws(DRTControlPointSequence::Item& cp, const std::string& type) {
  auto& seq = cp.getBeamLimitingDevicePositionSequence();
  for (std::size_t i = 0; i < seq.getNumberOfItems(); ++i) {
    OFString t;
    seq.getItem(i).getRTBeamLimitingDeviceType(t);
    OFVector<Float64> v;
    if (str(t) == type && seq.getItem(i).getLeafJawPositions(v).good()) return {v.begin(), v.end()};
  }
  return {};
}

}  // namespace

TEST(RtPlanIo, WrittenPlanReadsBackWithDcmtk) {
  TempDir dir("rtplan");
  const auto plan = twoBeamPlan();
  const std::string path = dir.sub("RP.dcm");
  const RtPlanWriteResult w = writeRtPlan(path, plan, planOptions());
  EXPECT_TRUE(w.warnings.empty()) << joined(w.warnings);
  EXPECT_FALSE(w.sopInstanceUid.empty());
  EXPECT_EQ(w.studyInstanceUid, "1.2.826.0.1.3680043.8.498.7");
  EXPECT_EQ(w.frameOfReferenceUid, "1.2.826.0.1.3680043.8.498.1");
  EXPECT_EQ(filesIn(dir.str()), 1u);  // the temporary file was renamed

  DcmFileFormat file;
  DRTPlanIOD rt;
  load(path, file, rt);
  OFString s;
  rt.getSOPClassUID(s);
  EXPECT_EQ(str(s), UID_RTPlanStorage);
  EXPECT_EQ(str(s), "1.2.840.10008.5.1.4.1.1.481.5");
  rt.getSOPInstanceUID(s);
  EXPECT_EQ(str(s), w.sopInstanceUid);
  rt.getModality(s);
  EXPECT_EQ(str(s), "RTPLAN");
  rt.getPatientID(s);
  EXPECT_EQ(str(s), "RTPLAN-1");
  rt.getStudyInstanceUID(s);
  EXPECT_EQ(str(s), "1.2.826.0.1.3680043.8.498.7");
  rt.getFrameOfReferenceUID(s);
  EXPECT_EQ(str(s), "1.2.826.0.1.3680043.8.498.1");
  rt.getRTPlanLabel(s);
  EXPECT_EQ(str(s), "6MV 2F");
  rt.getRTPlanGeometry(s);
  EXPECT_EQ(str(s), "PATIENT");
  ASSERT_EQ(rt.getReferencedStructureSetSequence().getNumberOfItems(), 1u);
  rt.getReferencedStructureSetSequence().getItem(0).getReferencedSOPInstanceUID(s);
  EXPECT_EQ(str(s), "1.2.826.0.1.3680043.8.498.3");
  rt.getReferencedStructureSetSequence().getItem(0).getReferencedSOPClassUID(s);
  EXPECT_EQ(str(s), UID_RTStructureSetStorage);
  // Prescription: 30 x 2 Gy on PTV.
  ASSERT_EQ(rt.getDoseReferenceSequence().getNumberOfItems(), 1u);
  EXPECT_DOUBLE_EQ(value([&](Float64& v) {
                     return rt.getDoseReferenceSequence().getItem(0).getTargetPrescriptionDose(v);
                   }),
                   60.0);
  ASSERT_EQ(rt.getPatientSetupSequence().getNumberOfItems(), 1u);
  rt.getPatientSetupSequence().getItem(0).getPatientPosition(s);
  EXPECT_EQ(str(s), "HFS");

  // Fraction scheme: 30 fractions, the two beams with their MU.
  ASSERT_EQ(rt.getFractionGroupSequence().getNumberOfItems(), 1u);
  auto& fg = rt.getFractionGroupSequence().getItem(0);
  Sint32 n = 0;
  fg.getNumberOfFractionsPlanned(n);
  EXPECT_EQ(n, 30);
  fg.getNumberOfBeams(n);
  EXPECT_EQ(n, 2);
  ASSERT_EQ(fg.getReferencedBeamSequence().getNumberOfItems(), 2u);
  for (std::size_t b = 0; b < 2; ++b) {
    auto& rb = fg.getReferencedBeamSequence().getItem(b);
    rb.getReferencedBeamNumber(n);
    EXPECT_EQ(n, Sint32(b + 1));
    EXPECT_DOUBLE_EQ(value([&](Float64& v) { return rb.getBeamMeterset(v); }),
                     plan[b].monitorUnits);
  }

  // The beams.
  ASSERT_EQ(rt.getBeamSequence().getNumberOfItems(), 2u);
  const double gantry[2] = {0, 270}, couch[2] = {0, 350}, collimator[2] = {15, 0};
  for (std::size_t b = 0; b < 2; ++b) {
    SCOPED_TRACE("beam " + plan[b].name);
    auto& beam = rt.getBeamSequence().getItem(b);
    beam.getBeamNumber(n);
    EXPECT_EQ(n, Sint32(b + 1));
    beam.getBeamName(s);
    EXPECT_EQ(str(s), plan[b].name);
    beam.getBeamType(s);
    EXPECT_EQ(str(s), "STATIC");
    beam.getRadiationType(s);
    EXPECT_EQ(str(s), "PHOTON");
    beam.getTreatmentMachineName(s);
    EXPECT_EQ(str(s), "Penumbra 6 MV");
    beam.getPrimaryDosimeterUnit(s);
    EXPECT_EQ(str(s), "MU");
    EXPECT_DOUBLE_EQ(value([&](Float64& v) { return beam.getSourceAxisDistance(v); }), 1000.0);
    auto& devices = beam.getBeamLimitingDeviceSequence();
    ASSERT_EQ(devices.getNumberOfItems(), 2u);
    devices.getItem(0).getRTBeamLimitingDeviceType(s);
    EXPECT_EQ(str(s), "ASYMX");
    devices.getItem(1).getRTBeamLimitingDeviceType(s);
    EXPECT_EQ(str(s), "ASYMY");
    devices.getItem(1).getNumberOfLeafJawPairs(n);
    EXPECT_EQ(n, 1);

    beam.getNumberOfControlPoints(n);
    EXPECT_EQ(n, 2);
    EXPECT_DOUBLE_EQ(value([&](Float64& v) { return beam.getFinalCumulativeMetersetWeight(v); }),
                     1.0);
    auto& cps = beam.getControlPointSequence();
    ASSERT_EQ(cps.getNumberOfItems(), 2u);
    auto& cp0 = cps.getItem(0);
    cp0.getControlPointIndex(n);
    EXPECT_EQ(n, 0);
    EXPECT_DOUBLE_EQ(value([&](Float64& v) { return cp0.getNominalBeamEnergy(v); }), 6.0);
    EXPECT_DOUBLE_EQ(value([&](Float64& v) { return cp0.getGantryAngle(v); }), gantry[b]);
    EXPECT_DOUBLE_EQ(value([&](Float64& v) { return cp0.getBeamLimitingDeviceAngle(v); }),
                     collimator[b]);
    EXPECT_DOUBLE_EQ(value([&](Float64& v) { return cp0.getPatientSupportAngle(v); }), couch[b]);
    EXPECT_DOUBLE_EQ(value([&](Float64& v) { return cp0.getTableTopEccentricAngle(v); }), 0.0);
    for (auto get : {&DRTControlPointSequence::Item::getGantryRotationDirection,
                     &DRTControlPointSequence::Item::getBeamLimitingDeviceRotationDirection,
                     &DRTControlPointSequence::Item::getPatientSupportRotationDirection,
                     &DRTControlPointSequence::Item::getTableTopEccentricRotationDirection}) {
      s.clear();
      (cp0.*get)(s, 0);
      EXPECT_EQ(str(s), "NONE");
    }
    EXPECT_EQ(jaws(cp0, "ASYMX"), (std::vector<double>{plan[b].x1Mm, plan[b].x2Mm}));
    EXPECT_EQ(jaws(cp0, "ASYMY"), (std::vector<double>{plan[b].y1Mm, plan[b].y2Mm}));
    OFVector<Float64> iso;
    ASSERT_TRUE(cp0.getIsocenterPosition(iso).good());
    ASSERT_EQ(iso.size(), 3u);
    EXPECT_DOUBLE_EQ(iso[0], plan[b].isocenter.x);
    EXPECT_DOUBLE_EQ(iso[1], plan[b].isocenter.y);
    EXPECT_DOUBLE_EQ(iso[2], plan[b].isocenter.z);
    EXPECT_DOUBLE_EQ(value([&](Float64& v) { return cp0.getCumulativeMetersetWeight(v); }), 0.0);
    auto& cp1 = cps.getItem(1);
    cp1.getControlPointIndex(n);
    EXPECT_EQ(n, 1);
    EXPECT_DOUBLE_EQ(value([&](Float64& v) { return cp1.getCumulativeMetersetWeight(v); }), 1.0);
  }

  // Blocks: none on the open field; the aperture's six points on the shaped one.
  auto& open = rt.getBeamSequence().getItem(0);
  open.getNumberOfBlocks(n);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(open.getBlockSequence().getNumberOfItems(), 0u);
  auto& shaped = rt.getBeamSequence().getItem(1);
  shaped.getNumberOfBlocks(n);
  EXPECT_EQ(n, 1);
  ASSERT_EQ(shaped.getBlockSequence().getNumberOfItems(), 1u);
  auto& block = shaped.getBlockSequence().getItem(0);
  block.getBlockType(s);
  EXPECT_EQ(str(s), "APERTURE");
  block.getBlockDivergence(s);
  EXPECT_EQ(str(s), "PRESENT");
  block.getMaterialID(s);
  EXPECT_EQ(str(s), "CERROBEND");
  EXPECT_DOUBLE_EQ(value([&](Float64& v) { return block.getBlockThickness(v); }), 75.0);
  EXPECT_DOUBLE_EQ(value([&](Float64& v) { return block.getSourceToBlockTrayDistance(v); }), 650.0);
  block.getBlockNumberOfPoints(n);
  EXPECT_EQ(n, 6);
  OFVector<Float64> data;
  ASSERT_TRUE(block.getBlockData(data).good());
  const auto& polygon = plan[1].aperture[0];
  ASSERT_EQ(data.size(), 2 * polygon.size());
  for (std::size_t i = 0; i < polygon.size(); ++i) {
    EXPECT_DOUBLE_EQ(data[2 * i], polygon[i][0]) << "point " << i;
    EXPECT_DOUBLE_EQ(data[2 * i + 1], polygon[i][1]) << "point " << i;
  }

  // Not an ion plan: the RT Ion Plan reader refuses it by SOP class.
  try {
    readRtIonPlan(path);
    ADD_FAILURE() << "readRtIonPlan accepted an RT Plan";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Format) << e.what();
  }
}

TEST(RtPlanIo, BlockDataIsRoundedToMicrometresAndOpeningsAreCounted) {
  TempDir dir("rtplan-blocks");
  auto plan = twoBeamPlan();
  // A second opening, with a repeated closing vertex and coordinates finer than 1 um.
  plan[1].aperture.push_back({{10.00049, 10}, {20, 10}, {20, 20.1234567}, {10.00049, 10}});
  RtPlanWriteOptions o = planOptions();
  const RtPlanWriteResult w = writeRtPlan(dir.sub("RP.dcm"), plan, o);
  EXPECT_TRUE(test::anyContains(w.warnings, "2 separate openings")) << joined(w.warnings);
  DcmFileFormat file;
  DRTPlanIOD rt;
  load(dir.sub("RP.dcm"), file, rt);
  auto& shaped = rt.getBeamSequence().getItem(1);
  Sint32 n = 0;
  shaped.getNumberOfBlocks(n);
  EXPECT_EQ(n, 2);
  ASSERT_EQ(shaped.getBlockSequence().getNumberOfItems(), 2u);
  auto& second = shaped.getBlockSequence().getItem(1);
  second.getBlockNumber(n);
  EXPECT_EQ(n, 2);
  second.getBlockNumberOfPoints(n);
  EXPECT_EQ(n, 3);  // the closing vertex is dropped
  OFVector<Float64> data;
  ASSERT_TRUE(second.getBlockData(data).good());
  EXPECT_EQ(std::vector<double>(data.begin(), data.end()),
            (std::vector<double>{10.0, 10, 20, 10, 20, 20.123}));
}

TEST(RtPlanIo, NoStructureSetWritesTreatmentDeviceGeometryWithWarning) {
  TempDir dir("rtplan-noss");
  const RtPlanWriteResult w = writeRtPlan(dir.sub("RP.dcm"), twoBeamPlan());
  EXPECT_TRUE(test::anyContains(w.warnings, "TREATMENT_DEVICE")) << joined(w.warnings);
  EXPECT_TRUE(test::anyContains(w.warnings, "frame of reference")) << joined(w.warnings);
  DcmFileFormat file;
  DRTPlanIOD rt;
  load(dir.sub("RP.dcm"), file, rt);
  OFString s;
  rt.getRTPlanGeometry(s);
  EXPECT_EQ(str(s), "TREATMENT_DEVICE");
  EXPECT_EQ(rt.getReferencedStructureSetSequence().getNumberOfItems(), 0u);
  EXPECT_EQ(rt.getDoseReferenceSequence().getNumberOfItems(), 0u);  // no target, no dose
  EXPECT_EQ(rt.getBeamSequence().getNumberOfItems(), 2u);
}

TEST(RtPlanIo, InvalidPlansThrowInvalidArgumentAndWriteNothing) {
  TempDir dir("rtplan-invalid");
  const std::string path = dir.sub("RP.dcm");
  const auto message = [&](const std::vector<photon::PhotonBeam>& beams,
                           const RtPlanWriteOptions& o = {}) -> std::string {
    try {
      writeRtPlan(path, beams, o);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "no exception";
    return {};
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_NE(message({}).find("no photon beams"), std::string::npos);
  auto bad = twoBeamPlan();
  bad[0].gantryDeg = nan;
  EXPECT_NE(message(bad).find("'AP open': the gantry, couch or collimator angle"),
            std::string::npos);
  bad = twoBeamPlan();
  bad[1].collimatorDeg = inf;
  EXPECT_NE(message(bad).find("angle is not a finite number"), std::string::npos);
  bad = twoBeamPlan();
  bad[1].isocenter.y = nan;
  EXPECT_NE(message(bad).find("isocentre"), std::string::npos);
  bad = twoBeamPlan();
  bad[0].y2Mm = inf;
  EXPECT_NE(message(bad).find("jaw position is not a finite number"), std::string::npos);
  bad = twoBeamPlan();
  bad[0].x1Mm = bad[0].x2Mm;
  EXPECT_NE(message(bad).find("closed or crossed"), std::string::npos);
  bad = twoBeamPlan();
  bad[0].sadMm = 0;
  EXPECT_NE(message(bad).find("source-axis distance"), std::string::npos);
  bad = twoBeamPlan();
  bad[1].monitorUnits = nan;
  EXPECT_NE(message(bad).find("monitor units"), std::string::npos);
  bad = twoBeamPlan();
  bad[1].monitorUnits = 0;
  EXPECT_NE(message(bad).find("monitor units"), std::string::npos);
  bad = twoBeamPlan();
  bad[1].aperture[0][2][1] = nan;
  EXPECT_NE(message(bad).find("aperture polygon 1 has a non-finite point"), std::string::npos);
  bad = twoBeamPlan();
  bad[1].aperture.push_back({{0, 0}, {1, 1}});
  EXPECT_NE(message(bad).find("aperture polygon 2 has fewer than 3 points"), std::string::npos);
  bad = twoBeamPlan();
  bad[1].aperture[0].clear();  // 5 000 distinct points, ~17 characters each: too long for DS
  for (int i = 0; i < 5000; ++i)
    bad[1].aperture[0].push_back({-100.123 + 0.04 * i, 100.456 * std::sin(0.001 * i) - 0.001});
  EXPECT_NE(message(bad).find("too many for one BlockData element"), std::string::npos);
  RtPlanWriteOptions longLabel;
  longLabel.planLabel = "seventeen chars!!";  // RTPlanLabel is SH: 16 characters at most
  EXPECT_NE(message(twoBeamPlan(), longLabel).find("plan label"), std::string::npos);
  RtPlanWriteOptions noFractions;
  noFractions.fractions = 0;
  EXPECT_NE(message(twoBeamPlan(), noFractions).find("fractions"), std::string::npos);
  RtPlanWriteOptions nanDose;
  nanDose.dosePerFractionGy = nan;
  EXPECT_NE(message(twoBeamPlan(), nanDose).find("dose per fraction"), std::string::npos);
  EXPECT_EQ(filesIn(dir.str()), 0u);  // nothing written, no temporary left

  // An existing plan survives an invalid write untouched.
  writeRtPlan(path, twoBeamPlan(), planOptions());
  const std::string before = slurp(path);
  bad = twoBeamPlan();
  bad[0].couchDeg = -inf;
  EXPECT_FALSE(message(bad).empty());
  EXPECT_EQ(slurp(path), before);
  EXPECT_EQ(filesIn(dir.str()), 1u);
}

TEST(RtPlanIo, FailedWriteThrowsIoAndLeavesExistingFileUntouched) {
  TempDir dir("rtplan-fail");
  try {
    writeRtPlan(dir.sub("no-such-folder/RP.dcm"), twoBeamPlan());
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Io) << e.what();
  }
  const std::string good = dir.sub("RP.dcm");
  writeRtPlan(good, twoBeamPlan(), planOptions());
  const std::string before = slurp(good);
  fs::create_directories(dir.sub("blocked.dcm/inside"));  // cannot be renamed over
  try {
    writeRtPlan(dir.sub("blocked.dcm"), twoBeamPlan());
    ADD_FAILURE() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Io) << e.what();
  }
  EXPECT_EQ(slurp(good), before);
  EXPECT_EQ(filesIn(dir.str()), 2u);  // the plan and the blocking folder, no temporary
}

TEST(RtPlanIo, ExportPassesDciodvfy) {
  if (std::system("command -v dciodvfy > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "dciodvfy not installed (Debian package dicom3tools)";
  TempDir dir("rtplan-vfy");
  // With and without a structure set, and with a two-opening aperture (two APERTURE blocks).
  for (const int variant : {0, 1, 2}) {
    RtPlanWriteOptions o = planOptions();
    auto plan = twoBeamPlan();
    if (variant == 1) o.referencedStructureSetSopInstanceUid.clear();
    if (variant == 2) plan[1].aperture.push_back({{40, 40}, {50, 40}, {50, 50}, {40, 50}});
    const std::string path = dir.sub("RP" + std::to_string(variant) + ".dcm");
    writeRtPlan(path, plan, o);
    const std::string out = runCommand("dciodvfy '" + path + "' 2>&1");
    const char* what[] = {"with structure set", "without structure set", "two aperture blocks"};
    std::printf("dciodvfy (%s):\n%s", what[variant], out.c_str());
    EXPECT_NE(out.find("RTPlan"), std::string::npos) << out;  // it recognised the IOD
    EXPECT_EQ(out.find("Error"), std::string::npos) << out;
  }
}
