// Fuzz target: RT Structure Set import, as the app does it next to a CT: the folder scan's
// header pass (scanDicomFiles), then importPatient() with the input as the chosen structure set
// (contours read through dcmrt, rasterised with the even-odd rule onto the CT grid), and the
// nearest-plane rasterisation of a dose folder without CT (rasterizeNearestPlanes). The CT is
// a tiny synthetic series (fuzz_phantom.hpp) written once at start-up; its frame of reference is
// set to the input's so that contours reach the rasteriser instead of being refused as misplaced.
#include <cstddef>
#include <cstdint>
#include <string>

#include "dicom/dicom_import.hpp"
#include "dicom/rt_dose_reader.hpp"
#include "fuzz_phantom.hpp"
#include "fuzz_support.hpp"

using namespace penumbra;

namespace {

const io::DicomScan& ctScan() {
  static const io::DicomScan scan = [] {
    // Two planes of the seeds' CT: every execution reads them again (4 of its 6 file loads).
    io::SyntheticPhantomSpec spec = fuzz::tinyCtSpec(2);
    spec.writeStructureSet = false;
    const std::string dir = (fuzz::scratchDir() / "ct").string();
    io::writeSyntheticPhantom(dir, spec);
    io::DicomScan s = io::scanDicomFolder(dir);
    fuzz::require(s.series.size() == 1 && s.series[0].importable,
                  "the synthetic CT series imports");
    return s;
  }();
  return scan;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)ctScan();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string file = fuzz::writeInput("RS.dcm", {reinterpret_cast<const char*>(data), size});
  fuzz::runReader([&] {
    const io::DicomScan rs = io::scanDicomFiles({file});
    io::DicomScan scan = ctScan();
    scan.structureSets = rs.structureSets;
    if (!rs.structureSets.empty() && !rs.structureSets[0].frameOfReferenceUid.empty())
      scan.series[0].frameOfReferenceUid = rs.structureSets[0].frameOfReferenceUid;
    io::ImportOptions options;
    options.structureSetFile = file;
    const io::PatientImportResult patient = io::importPatient(scan, "", options);
    // A dose folder without CT rasterises the same contours plane by plane onto the dose grid.
    for (const Structure& s : patient.patient.structures.structures)
      (void)io::rasterizeNearestPlanes(s.contours, patient.patient.ct.grid);
  });
  return 0;
}
