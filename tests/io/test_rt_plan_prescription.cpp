// Prescription of an RT Plan (io/dicom/rt_plan_prescription.hpp) on real plans from three
// systems and on our own exports:
//  - RayStation 6.1 brain SRS (imrt, vmat): no Dose Reference Sequence, so no prescription;
//    5 fractions; the beam doses at the specification points (three isocentre groups in the
//    IMRT plan: 27.0, 23.4, 19.6 Gy over 5 fractions; one point in the VMAT plan: 10.8 Gy)
//    are reported and not used;
//  - Eclipse (dicompyler-core example): SITE 'Breast' 14 Gy chosen over the 11.3 Gy
//    COORDINATES 'CALC POINT', 7 fractions;
//  - pydicom's rtplan.dcm: TARGET COORDINATES 'PTV' 30.83 Gy over 30 fractions; the
//    ORGAN_AT_RISK 'iso' delivery maximum of 75 Gy is reported as a limit, not used;
//  - our RT Plan and RT Ion Plan exports (2 Gy x 30 to 'PTV' -> 60 Gy) and a plan whose only
//    prescription is in its fraction group (Referenced Dose Reference Sequence);
//  - the plan of an RT Dose found in its folder by the dose's reference, the dose's summation
//    type (PLAN: total, FRACTION: per fraction), and files that are not plans.
#include <dcmtk/dcmrt/drtplan.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "dicom/rt_dose_reader.hpp"
#include "dicom/rt_dose_writer.hpp"
#include "dicom/rt_ion_plan_writer.hpp"
#include "dicom/rt_plan_prescription.hpp"
#include "dicom/rt_plan_writer.hpp"
#include "io_test_util.hpp"
#include "test_data.hpp"

using namespace penumbra;
using namespace penumbra::io;
using penumbra::test::joined;
using penumbra::test::TempDir;

namespace fs = std::filesystem;

namespace {

const char* kRaystation = "patients/brain-srs-raystation";
const char* kImrtPlan = "patients/brain-srs-raystation/imrt/RP1.2.752.243.1.1.20180405114728127.3000.13138.dcm";
const char* kVmatPlan = "patients/brain-srs-raystation/vmat/RP1.2.752.243.1.1.20180405120828292.3000.83684.dcm";

bool anyContains(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

photon::PhotonBeam openField() {
  photon::PhotonBeam b;
  b.name = "AP";
  b.isocenter = {0, 0, 0};
  b.monitorUnits = 100;
  return b;
}

}  // namespace

TEST(RtPlanPrescription, RaystationPlansHaveNoPrescriptionAndBeamDosesAreNotUsed) {
  PENUMBRA_REQUIRE_DATA(kRaystation);
  const PlanPrescription imrt = readPlanPrescription(test::dataPath(kImrtPlan));
  ASSERT_TRUE(imrt.messages.ok()) << joined(imrt.messages.errors);
  EXPECT_FALSE(imrt.found());
  EXPECT_EQ(imrt.source, PrescriptionSource::None);
  EXPECT_EQ(imrt.totalGy, 0.0);
  EXPECT_EQ(imrt.fractions, 5);
  EXPECT_EQ(imrt.planLabel, "imrt 4");
  EXPECT_EQ(imrt.sopInstanceUid, "1.2.752.243.1.1.20180405114728127.3000.13138");
  const std::string w = joined(imrt.messages.warnings);
  EXPECT_TRUE(anyContains(imrt.messages.warnings, "no Dose Reference Sequence")) << w;
  // Three isocentre groups: 5.404, 4.677 and 3.924 Gy per fraction at their own points.
  EXPECT_TRUE(anyContains(imrt.messages.warnings, "27.0 Gy from 5 beams over 5 fractions")) << w;
  EXPECT_TRUE(anyContains(imrt.messages.warnings, "23.4 Gy from 4 beams")) << w;
  EXPECT_TRUE(anyContains(imrt.messages.warnings, "19.6 Gy from 4 beams")) << w;
  EXPECT_TRUE(anyContains(imrt.messages.warnings, "not a prescription")) << w;

  const PlanPrescription vmat = readPlanPrescription(test::dataPath(kVmatPlan));
  ASSERT_TRUE(vmat.messages.ok()) << joined(vmat.messages.errors);
  EXPECT_FALSE(vmat.found());
  EXPECT_EQ(vmat.fractions, 5);
  EXPECT_TRUE(anyContains(vmat.messages.warnings, "10.8 Gy from 8 beams over 5 fractions"))
      << joined(vmat.messages.warnings);
}

TEST(RtPlanPrescription, EclipseSitePrescriptionWinsOverCalculationPoint) {
  const std::string rel = "dicom-samples/dicompyler-core-example/rtplan.dcm";
  PENUMBRA_REQUIRE_DATA(rel);
  const PlanPrescription p = readPlanPrescription(test::dataPath(rel));
  ASSERT_TRUE(p.messages.ok()) << joined(p.messages.errors);
  ASSERT_TRUE(p.found());
  EXPECT_EQ(p.source, PrescriptionSource::DoseReference);
  EXPECT_DOUBLE_EQ(p.totalGy, 14.0);
  EXPECT_EQ(p.fractions, 7);
  EXPECT_DOUBLE_EQ(p.perFractionGy(), 2.0);
  EXPECT_EQ(p.sourceText, "DoseReference 'Breast'");
  EXPECT_TRUE(anyContains(p.messages.warnings, "'CALC POINT' COORDINATES prescribes 11.3 Gy"))
      << joined(p.messages.warnings);
}

TEST(RtPlanPrescription, PointPrescriptionAndDeliveryMaximumIsNotAPrescription) {
  const std::string rel = "dicom-samples/rtplan.dcm";
  PENUMBRA_REQUIRE_DATA(rel);
  const PlanPrescription p = readPlanPrescription(test::dataPath(rel));
  ASSERT_TRUE(p.messages.ok()) << joined(p.messages.errors);
  ASSERT_TRUE(p.found());
  EXPECT_NEAR(p.totalGy, 30.826203, 1e-9);
  EXPECT_EQ(p.fractions, 30);
  EXPECT_EQ(p.sourceText, "DoseReference 'PTV' (COORDINATES)");
  EXPECT_TRUE(anyContains(p.messages.warnings, "'iso' (ORGAN_AT_RISK) has a delivery maximum of 75.0 Gy"))
      << joined(p.messages.warnings);
}

TEST(RtPlanPrescription, OurPhotonAndIonPlanExportsReadBack) {
  TempDir dir("rx-export");
  RtPlanWriteOptions o;
  o.targetName = "PTV";
  o.dosePerFractionGy = 2;
  o.fractions = 30;
  writeRtPlan(dir.sub("RP_photons.dcm"), {openField()}, o);
  const PlanPrescription p = readPlanPrescription(dir.sub("RP_photons.dcm"));
  ASSERT_TRUE(p.found()) << joined(p.messages.warnings) << joined(p.messages.errors);
  EXPECT_DOUBLE_EQ(p.totalGy, 60.0);
  EXPECT_EQ(p.fractions, 30);
  EXPECT_EQ(p.sourceText, "DoseReference 'PTV'");

  proton::ProtonBeam beam;
  beam.name = "G90";
  beam.gantryDeg = 90;
  beam.layers.push_back({120.0, {{0, 0, 1.0}, {5, 0, 2.0}}});
  RtIonPlanWriteOptions io;
  io.targetName = "CTV";
  io.dosePerFractionGy = 1.8;
  io.fractions = 28;
  writeRtIonPlan(dir.sub("RP_ion.dcm"), {beam}, io);
  const PlanPrescription q = readPlanPrescription(dir.sub("RP_ion.dcm"));
  ASSERT_TRUE(q.found()) << joined(q.messages.warnings) << joined(q.messages.errors);
  EXPECT_NEAR(q.totalGy, 50.4, 1e-9);
  EXPECT_EQ(q.fractions, 28);
  EXPECT_EQ(q.sourceText, "DoseReference 'CTV'");

  // Without a prescription in the export there is none to read.
  RtPlanWriteOptions bare;
  writeRtPlan(dir.sub("RP_bare.dcm"), {openField()}, bare);
  EXPECT_FALSE(readPlanPrescription(dir.sub("RP_bare.dcm")).found());
}

TEST(RtPlanPrescription, FractionGroupDoseReferenceIsTheFallback) {
  // Our export, then the prescription moved from the Dose Reference to the fraction group.
  TempDir dir("rx-fraction-group");
  RtPlanWriteOptions o;
  o.targetName = "PTV";
  o.dosePerFractionGy = 3;
  o.fractions = 10;
  const std::string path = dir.sub("RP.dcm");
  writeRtPlan(path, {openField()}, o);
  DcmFileFormat file;
  ASSERT_TRUE(file.loadFile(path.c_str()).good());
  DRTPlanIOD rt;
  ASSERT_TRUE(rt.read(*file.getDataset()).good());
  ASSERT_EQ(rt.getDoseReferenceSequence().getNumberOfItems(), 1u);
  ASSERT_TRUE(rt.getDoseReferenceSequence().getItem(0).setTargetPrescriptionDose("").good());
  ASSERT_EQ(rt.getFractionGroupSequence().getNumberOfItems(), 1u);
  DRTReferencedDoseReferenceSequenceInRTFractionSchemeModule::Item* ref = nullptr;
  ASSERT_TRUE(rt.getFractionGroupSequence().getItem(0).getReferencedDoseReferenceSequence().addItem(ref).good());
  ASSERT_TRUE(ref->setReferencedDoseReferenceNumber("1").good());
  ASSERT_TRUE(ref->setTargetPrescriptionDose("30").good());
  DcmFileFormat out;
  ASSERT_TRUE(rt.write(*out.getDataset()).good());
  ASSERT_TRUE(out.saveFile(path.c_str(), EXS_LittleEndianExplicit).good());

  const PlanPrescription p = readPlanPrescription(path);
  ASSERT_TRUE(p.found()) << joined(p.messages.warnings) << joined(p.messages.errors);
  EXPECT_EQ(p.source, PrescriptionSource::FractionGroup);
  EXPECT_DOUBLE_EQ(p.totalGy, 30.0);
  EXPECT_EQ(p.fractions, 10);
  EXPECT_EQ(p.sourceText, "FractionGroup 1, DoseReference 'PTV'");
}

TEST(RtPlanPrescription, PlanOfADoseIsFoundInItsFolder) {
  PENUMBRA_REQUIRE_DATA(kRaystation);
  const std::string imrt = test::dataPath(std::string(kRaystation) + "/imrt");
  const std::string uid = "1.2.752.243.1.1.20180405114728127.3000.13138";
  // The dose's own reference.
  const PlanPrescription byRef = findPlanPrescription(imrt, uid, false);
  EXPECT_EQ(fs::path(byRef.file).filename().string(), "RP" + uid + ".dcm");
  EXPECT_EQ(byRef.fractions, 5);
  // A reference to a plan that is not there: none, and the warning says so.
  const PlanPrescription missing = findPlanPrescription(imrt, "1.2.3.4", false);
  EXPECT_TRUE(missing.file.empty());
  EXPECT_TRUE(anyContains(missing.messages.warnings, "which is not in")) << joined(missing.messages.warnings);
  // No reference: the only plan of the folder, with a warning.
  const PlanPrescription only = findPlanPrescription(imrt, "", false);
  EXPECT_EQ(only.sopInstanceUid, uid);
  EXPECT_TRUE(anyContains(only.messages.warnings, "is assumed to be its plan"));
  // Both plans (recursive from the case folder) and no reference: ambiguous.
  const PlanPrescription two = findPlanPrescription(test::dataPath(kRaystation), "", true);
  EXPECT_TRUE(two.file.empty());
  EXPECT_TRUE(anyContains(two.messages.warnings, "holds 2 plans")) << joined(two.messages.warnings);
  // Our plan + dose pair: the dose's reference leads to the plan's prescription.
  TempDir dir("rx-folder");
  RtPlanWriteOptions o;
  o.targetName = "PTV_ALL";
  o.dosePerFractionGy = 8;
  o.fractions = 5;
  const RtPlanWriteResult plan = writeRtPlan(dir.sub("RP.dcm"), {openField()}, o);
  EXPECT_TRUE(anyContains(findPlanPrescription(dir.str(), "", false).messages.warnings, "assumed"));
  const PlanPrescription ours = findPlanPrescription(dir.str(), plan.sopInstanceUid, false);
  ASSERT_TRUE(ours.found());
  EXPECT_DOUBLE_EQ(ours.totalGy, 40.0);
  EXPECT_TRUE(ours.messages.warnings.empty()) << joined(ours.messages.warnings);
  // A folder without plans.
  TempDir empty("rx-empty");
  EXPECT_TRUE(anyContains(findPlanPrescription(empty.str(), "", true).messages.warnings, "no RT Plan"));
  EXPECT_THROW(findPlanPrescription(empty.sub("absent"), "", true), Error);
}

TEST(RtPlanPrescription, DoseSummationTypeDecidesTotalOrPerFraction) {
  PlanPrescription p;
  p.source = PrescriptionSource::DoseReference;
  p.totalGy = 62;
  p.fractions = 5;
  std::string note;
  EXPECT_DOUBLE_EQ(prescriptionForDose(p, "PLAN", &note), 62.0);
  EXPECT_EQ(note, "62.0 Gy over 5 fractions");
  EXPECT_DOUBLE_EQ(prescriptionForDose(p, "FRACTION", &note), 12.4);
  EXPECT_EQ(note, "12.4 Gy per fraction (62.0 Gy / 5 fractions)");
  EXPECT_DOUBLE_EQ(prescriptionForDose(p, "BEAM", &note), 62.0);
  EXPECT_NE(note.find("per BEAM"), std::string::npos) << note;
  p.fractions = 0;
  EXPECT_DOUBLE_EQ(prescriptionForDose(p, "FRACTION", &note), 62.0);
  EXPECT_DOUBLE_EQ(prescriptionForDose(PlanPrescription{}, "PLAN"), 0.0);
}

TEST(RtPlanPrescription, OtherFilesGiveAnErrorNotACrash) {
  PENUMBRA_REQUIRE_DATA("dicom-samples");
  for (const char* f : {"CT_small.dcm", "rtplan_truncated.dcm", "rtdose.dcm", "README.md"}) {
    const PlanPrescription p = readPlanPrescription(test::dataPath(std::string("dicom-samples/") + f));
    EXPECT_FALSE(p.found()) << f;
    if (std::string(f) != "rtplan_truncated.dcm") {
      EXPECT_FALSE(p.messages.ok()) << f;
    }
  }
  EXPECT_FALSE(readPlanPrescription("/nonexistent/RP.dcm").messages.ok());
}
