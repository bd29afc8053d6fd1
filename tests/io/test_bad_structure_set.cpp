// Item 9 of issue 12: an RT Structure Set whose ROI numbers repeat is refused (naming the
// number and both ROIs; before, the target took the BODY's contours), and an ROI without
// contours is warned about by name (before, it gave 0 cc in silence).
#include <dcmtk/dcmdata/dctk.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "bad_input_util.hpp"
#include "core/error.hpp"
#include "test_data.hpp"

using namespace penumbra;
using namespace penumbra::io;
using namespace penumbra::test;
namespace fs = std::filesystem;

TEST(IoBadStructureSet, DuplicateRoiNumbersRefuseTheStructureSet) {
  TempDir dir("duproi");
  const auto files = writeSyntheticPhantom(dir.str(), smallSpec());  // 1 BODY, 2 PTV
  {
    DcmFileFormat ff = load(files.structureSetFile);
    DcmDataset& ds = *ff.getDataset();
    // PTV renumbered to 1 everywhere: the file now has two ROIs numbered 1. Before the fix
    // BODY's contours and type went to PTV, so the target was the whole body.
    for (const DcmTagKey& seq :
         {DCM_StructureSetROISequence, DCM_ROIContourSequence, DCM_RTROIObservationsSequence}) {
      DcmItem* item = nullptr;
      ASSERT_TRUE(ds.findAndGetSequenceItem(seq, item, 1).good() && item);
      const DcmTagKey number =
          seq == DCM_StructureSetROISequence ? DCM_ROINumber : DCM_ReferencedROINumber;
      ASSERT_TRUE(item->putAndInsertString(number, "1").good());
    }
    save(ff, files.structureSetFile);
  }
  const Outcome o = scanAndImport(dir.str());
  for (const std::string n : {"RS.dcm", "ROI number 1", "'BODY'", "'PTV'"}) {
    EXPECT_NE(o.report.find(n), std::string::npos) << n << "\n" << o.report;
    EXPECT_TRUE(anyContains(o.result.messages.errors, n))
        << n << "\n"
        << joined(o.result.messages.errors) << joined(o.result.messages.warnings);
  }
  EXPECT_NE(o.report.find("NOT usable"), std::string::npos) << o.report;
  ASSERT_EQ(o.scan.series.size(), 1u);
  EXPECT_FALSE(o.scan.series[0].importable) << "the doctor must say what the import does";
  EXPECT_FALSE(anyContains(o.result.messages.warnings, "no contours"))
      << "the refusal is the message, not a side effect of it: "
      << joined(o.result.messages.warnings);
  EXPECT_FALSE(o.result.ok());
  EXPECT_TRUE(o.result.patient.structures.structures.empty());
  EXPECT_TRUE(o.result.patient.ct.empty()) << "a refused import must not return a CT";
}

TEST(IoBadStructureSet, RoiWithoutContoursIsWarnedAbout) {
  TempDir dir("emptyroi");
  SyntheticPhantomSpec spec = smallSpec();
  spec.structures = defaultSyntheticStructures(spec);
  SyntheticStructureSpec empty = spec.structures.back();
  empty.name = "GTV_EMPTY";
  empty.center.z = 1000;  // no slice crosses it: an ROIContourSequence item without contours
  spec.structures.push_back(empty);
  writeSyntheticPhantom(dir.str(), spec);
  const Outcome o = scanAndImport(dir.str());
  ASSERT_TRUE(o.result.ok()) << joined(o.result.messages.errors);
  EXPECT_TRUE(anyContains(o.result.messages.warnings, "'GTV_EMPTY'"))
      << joined(o.result.messages.warnings);
  EXPECT_TRUE(anyContains(o.result.messages.warnings, "no contours"))
      << joined(o.result.messages.warnings);
  EXPECT_FALSE(anyContains(o.result.messages.warnings, "'PTV'"))
      << joined(o.result.messages.warnings);
  EXPECT_NE(o.report.find("'GTV_EMPTY'"), std::string::npos) << o.report;
}

TEST(IoBadStructureSet, EmptyRoiContourSequenceIsWarnedAboutPerRoi) {
  TempDir dir("emptyseq");
  const auto files = writeSyntheticPhantom(dir.str(), smallSpec());
  {
    DcmFileFormat ff = load(files.structureSetFile);
    DcmDataset& ds = *ff.getDataset();
    ASSERT_TRUE(ds.findAndDeleteElement(DCM_ROIContourSequence).good());
    ASSERT_TRUE(ds.insertEmptyElement(DCM_ROIContourSequence).good());
    save(ff, files.structureSetFile);
  }
  const Outcome o = scanAndImport(dir.str());
  ASSERT_TRUE(o.result.ok()) << joined(o.result.messages.errors);
  ASSERT_EQ(o.result.patient.structures.structures.size(), 2u);
  for (const std::string n : {"'BODY'", "'PTV'"})
    EXPECT_TRUE(anyContains(o.result.messages.warnings, n + " (ROI number"))
        << n << "\n"
        << joined(o.result.messages.warnings);
}
