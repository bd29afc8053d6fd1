// Acceptance: matRad's BOXPHANTOM in a uniform dose. Its contours are exact voxel-edge
// outlines, one per 3 mm CT slice, so both DVH methods must give voxel count x 27 mm^3
// exactly: the mask method by construction, the contour method through its half-slab end
// caps (+-1.5 mm beyond the first and last plane) and its lattice aligned with voxel faces.
#include <gtest/gtest.h>

#include <cstdio>

#include "dicom/dicom_import.hpp"
#include "dvh/dvh.hpp"
#include "test_data.hpp"

using namespace penumbra;

TEST(DvhBoxPhantom, UniformDoseVolumesEqualVoxelCountTimes27) {
  PENUMBRA_REQUIRE_DATA("phantoms/BOXPHANTOM");
  const io::DicomScan scan = io::scanDicomFolder(test::dataPath("phantoms/BOXPHANTOM"));
  const io::PatientImportResult imp = io::importPatient(scan, "");
  ASSERT_TRUE(imp.ok());
  DoseVolume dose;
  dose.dose = Volume<float>(imp.patient.ct.grid, 2.0f);  // 2 Gy everywhere, on the CT grid
  const std::pair<const char*, double> expected[] = {{"BODY", 531441}, {"OuterTarget", 9261}};
  dvh::DvhOptions options;
  options.prescriptionGy = 2.0;
  for (const auto& [name, voxels] : expected) {
    const Structure* s = imp.patient.structures.find(name);
    ASSERT_NE(s, nullptr) << name;
    const double cc = voxels * 27.0 / 1000.0;
    const dvh::DvhResult mask = dvh::computeMaskDvh(s->mask, dose, options, {}, name);
    const dvh::DvhResult cont = dvh::computeContourDvh(*s, dose, options);
    EXPECT_NEAR(mask.stats.volumeCc, cc, 1e-9 * cc) << name;
    EXPECT_NEAR(cont.stats.volumeCc, cc, 1e-9 * cc) << name;
    for (const auto* r : {&mask, &cont}) {
      EXPECT_NEAR(r->stats.meanGy, 2.0, 1e-6) << name;
      EXPECT_NEAR(r->stats.d98Gy, 2.0, 1e-6) << name;
      EXPECT_NEAR(r->stats.d2Gy, 2.0, 1e-6) << name;
      EXPECT_NEAR(r->stats.v95Percent, 100.0, 1e-6) << name;
      EXPECT_NEAR(r->stats.v107Percent, 0.0, 1e-6) << name;
      EXPECT_TRUE(r->warnings.empty()) << r->warnings.front();
    }
    std::printf("BOXPHANTOM %-12s %.0f voxels: mask %.6f cc (%.0f ms), contours %.6f cc "
                "(%.0f ms, %zu samples, step %.2f x %.2f x %.2f mm), exact %.6f cc\n",
                name, voxels, mask.stats.volumeCc, 1000 * mask.seconds, cont.stats.volumeCc,
                1000 * cont.seconds, cont.samples, cont.stepMm[0], cont.stepMm[1], cont.stepMm[2],
                cc);
  }
}
