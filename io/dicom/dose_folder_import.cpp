// importDoseAndStructures: the RT Doses and one RT Structure Set of a folder, with or without
// a CT (e.g. RayStation's brain SRS case, whose CT was never distributed).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "core/rasterize.hpp"
#include "dicom/dcmtk_util.hpp"
#include "dicom/rt_dose_reader.hpp"
#include "dicom/rtstruct_reader.hpp"

namespace fs = std::filesystem;

namespace penumbra::io {

Mask rasterizeNearestPlanes(const std::vector<Contour>& contours, const Grid& grid) {
  // Plane of each contour in the grid's continuous slice index; per slice keep the plane
  // nearest its centre. A mix of planes would be wrong under even-odd filling: two copies
  // of one outline on neighbouring 1 mm planes would cancel each other.
  std::map<int, double> bestPlane;  // slice -> continuous index of the chosen plane
  std::vector<double> planeOf(contours.size(), -1e300);
  for (std::size_t c = 0; c < contours.size(); ++c) {
    if (contours[c].points.size() < 3) continue;
    double z = 0;
    for (const Vec3& p : contours[c].points) z += grid.worldToIndex(p).z;
    z /= double(contours[c].points.size());
    planeOf[c] = z;
    // Range check in double: int() of a huge or NaN plane index is undefined (fuzz_rtstruct).
    const double kd = std::floor(z + 0.5);
    if (!(kd >= 0 && kd < grid.dims[2])) continue;
    const int k = int(kd);
    auto it = bestPlane.find(k);
    if (it == bestPlane.end() || std::abs(z - k) < std::abs(it->second - k)) bestPlane[k] = z;
  }
  std::vector<Contour> chosen;
  for (std::size_t c = 0; c < contours.size(); ++c) {
    const double kd = std::floor(planeOf[c] + 0.5);
    if (!(kd >= 0 && kd < grid.dims[2])) continue;
    auto it = bestPlane.find(int(kd));
    if (it != bestPlane.end() && std::abs(planeOf[c] - it->second) < 1e-3) chosen.push_back(contours[c]);
  }
  return rasterizeContours(chosen, grid, nullptr, 0.5);
}

DoseStructuresImport importDoseAndStructures(const std::string& folder,
                                             const std::string& structureSetFile,
                                             const JobControl& job) {
  dcm::initialiseDcmtk();
  DoseStructuresImport out;
  const DicomScan scan = scanDicomFolder(folder, job);
  out.messages.append(scan.messages);
  out.hasCt = std::any_of(scan.series.begin(), scan.series.end(),
                          [](const SeriesInfo& s) { return s.modality == "CT"; });

  // The scan lists RT Doses by name only: find their files with a header read of each file
  // the scan did not place in an image series or structure set.
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file()) files.push_back(it->path().string());
  std::sort(files.begin(), files.end());
  for (std::size_t i = 0; i < files.size(); ++i) {
    job.checkCancel();
    std::string error;
    auto ff = dcm::loadFile(files[i], dcm::LoadDepth::Headers, error);
    if (!ff || dcm::getString(*ff->getDataset(), DCM_Modality) != "RTDOSE") continue;
    job.report(double(i) / double(files.size()), "reading RT Dose");
    RtDoseImport d = readRtDose(files[i]);
    // One bad dose must not hide the others: its errors become warnings of the import.
    for (auto& e : d.messages.errors) out.messages.warn(e);
    for (auto& w : d.messages.warnings) out.messages.warn(w);
    d.messages.errors.clear();
    if (!d.dose.empty()) out.doses.push_back(std::move(d));
  }
  if (out.doses.empty()) out.messages.error("no readable RT Dose in " + folder);

  // Structure set: the one asked for, else the first in the doses' frame of reference, else
  // the only one.
  std::string rsFile = structureSetFile;
  const std::string doseFor = out.doses.empty() ? "" : out.doses[0].info.frameOfReferenceUid;
  if (rsFile.empty()) {
    for (const auto& rs : scan.structureSets)
      if (!doseFor.empty() && rs.frameOfReferenceUid == doseFor) {
        rsFile = rs.file;
        break;
      }
    if (rsFile.empty() && scan.structureSets.size() == 1) rsFile = scan.structureSets[0].file;
  }
  if (!rsFile.empty()) {
    RtStructContents rs;
    ImportMessages local;
    if (readRtStructFile(rsFile, rs, local)) {
      if (!doseFor.empty() && !rs.info.frameOfReferenceUid.empty() &&
          rs.info.frameOfReferenceUid != doseFor)
        out.messages.warn(dcm::shortName(rsFile) + " is in frame of reference " +
                          rs.info.frameOfReferenceUid + ", the dose in " + doseFor +
                          ": the structures may be misplaced");
      out.structureSetInfo = rs.info;
      out.structures = std::move(rs.set);
    }
    for (auto& e : local.errors) out.messages.warn(e + "; structures not loaded");
    for (auto& w : local.warnings) out.messages.warn(w);
  } else if (!out.doses.empty()) {
    out.messages.warn("no RT Structure Set in the doses' frame of reference; doses only");
  }
  if (!out.doses.empty()) {
    const Grid& g = out.doses[0].dose.dose.grid;
    for (auto& s : out.structures.structures) {
      job.checkCancel();
      s.mask = rasterizeNearestPlanes(s.contours, g);
    }
  }
  if (!out.hasCt)
    out.messages.warn("no CT in this folder: structures and dose are shown without anatomy "
                      "(masks on the dose grid; DVHs from the contours are unaffected)");
  job.report(1.0, "import done");
  return out;
}

}  // namespace penumbra::io
