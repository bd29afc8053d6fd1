// importPatient: the chosen CT series, the structure set that belongs to it, masks on the
// CT grid. Every problem comes back in the result's messages.
#include <algorithm>
#include <filesystem>
#include <set>
#include <tuple>

#include "core/rasterize.hpp"
#include "dicom/ct_series_reader.hpp"
#include "dicom/dcmtk_util.hpp"
#include "dicom/dicom_import.hpp"
#include "dicom/rtstruct_reader.hpp"

namespace fs = std::filesystem;

namespace penumbra::io {

namespace {

const SeriesInfo* chooseSeries(const DicomScan& scan, const std::string& key,
                               ImportMessages& messages) {
  if (!key.empty()) {
    for (const auto& s : scan.series)
      if (s.key == key) return &s;
    messages.error("no image series with key '" + key + "' in the scan of " + scan.folder);
    return nullptr;
  }
  std::vector<const SeriesInfo*> cts;
  for (const auto& s : scan.series)
    if (s.modality == "CT") cts.push_back(&s);
  if (cts.size() == 1) return cts.front();
  if (cts.empty()) {
    std::string found;
    for (const auto& s : scan.series) found += (found.empty() ? "" : ", ") + s.modality;
    messages.error("no CT series found in " +
                   (scan.folder.empty() ? "the scanned files" : scan.folder) +
                   (found.empty() ? std::string()
                                  : " (image series found: " + found +
                                        "; only CT series, in HU, can be imported for planning)"));
    return nullptr;
  }
  std::string list;
  for (const auto* s : cts) list += "\n  " + s->key + ": " + s->description;
  messages.error(std::to_string(cts.size()) + " CT series found; choose one by key:" + list);
  return nullptr;
}

}  // namespace

// Structure set for a series: most referenced images present in the series, then an explicit
// series reference, then a shared frame of reference. Ties go to the first found (sorted
// file names), with a warning since the user may want another.
const StructureSetInfo* chooseStructureSet(const DicomScan& scan, const SeriesInfo& series,
                                           ImportMessages& messages) {
  const std::set<std::string> sops(series.sopInstanceUids.begin(), series.sopInstanceUids.end());
  using Score = std::tuple<int, int, int>;
  const StructureSetInfo* best = nullptr;
  Score bestScore{0, 0, 0};
  int ties = 0;
  for (const auto& rs : scan.structureSets) {
    int matched = 0;
    for (const auto& u : rs.referencedSopInstanceUids) matched += int(sops.count(u));
    const int seriesRef = std::count(rs.referencedSeriesUids.begin(), rs.referencedSeriesUids.end(),
                                     series.seriesInstanceUid) > 0;
    const int forMatch =
        !rs.frameOfReferenceUid.empty() && rs.frameOfReferenceUid == series.frameOfReferenceUid;
    // A series reference by UID alone does not count when the structure set lists images and
    // none of them is here (a shared UID, as in the Nelms phantom's 2 and 3 mm series).
    const int seriesVote = seriesRef && (matched > 0 || rs.referencedSopInstanceUids.empty());
    const Score score{matched, seriesVote, forMatch};
    if (score == Score{0, 0, 0}) continue;
    if (!best || score > bestScore) {
      best = &rs;
      bestScore = score;
      ties = 1;
    } else if (score == bestScore) {
      ++ties;
    }
  }
  if (best && ties > 1)
    messages.warn(std::to_string(ties) + " structure sets match this series equally; using " +
                  dcm::shortName(best->file) + " (choose another in the import options)");
  return best;
}

namespace {

void warnClipped(const Structure& s, const Grid& grid, ImportMessages& messages) {
  int clipped = 0;
  for (const auto& c : s.contours)
    for (const auto& p : c.points) {
      const Vec3 ijk = grid.worldToIndex(p);
      if (ijk.x < -0.5 || ijk.y < -0.5 || ijk.x > grid.dims[0] - 0.5 ||
          ijk.y > grid.dims[1] - 0.5) {
        ++clipped;
        break;
      }
    }
  if (clipped > 0)
    messages.warn("structure '" + s.name + "': " + std::to_string(clipped) +
                  " contour(s) extend beyond the CT field of view and are clipped");
}

void loadStructures(const DicomScan& scan, const SeriesInfo& series, const ImportOptions& options,
                    PatientImportResult& result, const JobControl& job) {
  std::string file = options.structureSetFile;
  if (file.empty()) {
    const StructureSetInfo* info = chooseStructureSet(scan, series, result.messages);
    if (!info) {
      result.messages.warn(scan.structureSets.empty()
                               ? "no RT Structure Set found; the CT is imported without structures"
                               : "no RT Structure Set references this series or shares its frame "
                                 "of reference; the CT is imported without structures");
      return;
    }
    file = info->file;
  }
  RtStructContents rs;
  ImportMessages rsMessages;
  const bool read = readRtStructFile(file, rs, rsMessages);
  // The structure set of this series cannot be used (unreadable, or ambiguous ROI numbers):
  // the import stops rather than hand over the CT without its structures, where a plan
  // could be made with no target, or the wrong one. A user who wants the CT alone imports
  // with ImportOptions::loadStructures = false.
  for (auto& e : rsMessages.errors) result.messages.error(e);
  for (auto& w : rsMessages.warnings) result.messages.warn(w);
  if (!read) {
    if (rsMessages.errors.empty())
      result.messages.error(dcm::shortName(file) + ": the RT Structure Set cannot be read");
    return;
  }
  const std::string name = dcm::shortName(file);
  Patient& patient = result.patient;
  if (!rs.info.frameOfReferenceUid.empty() && !patient.frameOfReferenceUid.empty() &&
      rs.info.frameOfReferenceUid != patient.frameOfReferenceUid) {
    result.messages.warn(name + " is in frame of reference " + rs.info.frameOfReferenceUid +
                         ", the CT in " + patient.frameOfReferenceUid +
                         "; its structures were not loaded (they would be misplaced)");
    return;
  }
  const std::set<std::string> sops(series.sopInstanceUids.begin(), series.sopInstanceUids.end());
  int missing = 0;
  for (const auto& u : rs.info.referencedSopInstanceUids) missing += !sops.count(u);
  if (missing > 0)
    result.messages.warn("structure set " + name + " references " +
                         std::to_string(rs.info.referencedSopInstanceUids.size()) + " CT images, " +
                         std::to_string(missing) + " are missing from the imported series");
  for (std::size_t i = 0; i < rs.set.structures.size(); ++i) {
    job.checkCancel();
    job.report(double(i) / double(rs.set.structures.size()), "rasterising structures");
    Structure& s = rs.set.structures[i];
    RasterReport report;
    s.mask = rasterizeContours(s.contours, patient.ct.grid, &report);
    for (const auto& w : report.warnings) result.messages.warn("structure '" + s.name + "': " + w);
    warnClipped(s, patient.ct.grid, result.messages);
  }
  if (rs.set.frameOfReferenceUid.empty()) rs.set.frameOfReferenceUid = patient.frameOfReferenceUid;
  patient.structures = std::move(rs.set);
}

}  // namespace

PatientImportResult importPatient(const DicomScan& scan, const std::string& seriesKey,
                                  const JobControl& job) {
  return importPatient(scan, seriesKey, ImportOptions{}, job);
}

PatientImportResult importPatient(const DicomScan& scan, const std::string& seriesKey,
                                  const ImportOptions& options, const JobControl& job) {
  dcm::initialiseDcmtk();
  PatientImportResult result;
  const SeriesInfo* series = chooseSeries(scan, seriesKey, result.messages);
  if (!series) return result;
  try {
    result.patient.ct = readCtSeries(*series, result.messages, job);
    if (result.patient.ct.empty()) {
      if (result.messages.ok()) result.messages.error("series " + series->key + " has no slices");
      return result;
    }
    Patient& p = result.patient;
    p.name = series->patientName;
    p.id = series->patientId;
    p.frameOfReferenceUid = series->frameOfReferenceUid;
    p.ctSeriesUid = series->seriesInstanceUid;
    p.ctDescription = series->description;
    if (options.loadStructures) loadStructures(scan, *series, options, result, job);
  } catch (const CancelledError&) {
    throw;
  } catch (const std::exception& e) {
    result.messages.error(std::string("import failed: ") + e.what());
  }
  // Nothing half-way: a refused import hands back no patient.
  if (!result.messages.ok()) result.patient = Patient{};
  job.report(1.0, "import done");
  return result;
}

}  // namespace penumbra::io
