// "DICOM doctor": a plain-text diagnosis of a scan for `penumbra-cli inspect` and the GUI
// import dialog. Everything it says is derived from the scan; it reads no files.
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "dicom/dcmtk_util.hpp"
#include "dicom/dicom_import.hpp"

namespace penumbra::io {

namespace {

std::string orientationText(const std::vector<double>& o) {
  if (o.size() != 6) return "?";
  char buf[128];
  std::snprintf(buf, sizeof buf, "[%g %g %g / %g %g %g]", o[0], o[1], o[2], o[3], o[4], o[5]);
  return buf;
}

}  // namespace

std::string dicomDoctorReport(const DicomScan& scan) {
  std::ostringstream out;
  out << "DICOM doctor report for " << (scan.folder.empty() ? "(file list)" : scan.folder) << "\n";
  out << "files seen: " << scan.filesSeen << ", image series: " << scan.series.size()
      << ", structure sets: " << scan.structureSets.size()
      << ", other objects: " << scan.otherObjects.size() << ", unreadable: " << scan.unreadableFiles
      << "\n";

  std::map<std::string, const SeriesInfo*> bySop;
  std::map<std::string, std::vector<const SeriesInfo*>> byUid;
  for (const auto& s : scan.series) {
    for (const auto& u : s.sopInstanceUids) bySop[u] = &s;
    byUid[s.seriesInstanceUid].push_back(&s);
  }

  out << "\nImage series\n";
  if (scan.series.empty()) out << "  (none)\n";
  for (const auto& s : scan.series) {
    out << "  [" << s.key << "] " << s.description << "\n"
        << "    modality " << s.modality << ", " << s.slices << " slice(s) of " << s.columns
        << " x " << s.rows << " px, pixel spacing row " << s.rowSpacing << " mm / column "
        << s.columnSpacing << " mm, slice spacing " << s.sliceSpacing << " mm\n"
        << "    orientation " << orientationText(s.orientation) << "\n"
        << "    series UID " << s.seriesInstanceUid << "\n"
        << "    frame of reference "
        << (s.frameOfReferenceUid.empty() ? "(none)" : s.frameOfReferenceUid) << "\n    patient "
        << s.patientName << " (" << s.patientId << ")\n"
        << "    folder " << s.folder << "\n"
        << "    " << (s.importable ? "importable" : "NOT importable") << "\n";
    for (const auto& p : s.problems) out << "    ! " << p << "\n";
  }

  out << "\nRT Structure Sets\n";
  if (scan.structureSets.empty()) out << "  (none)\n";
  for (const auto& rs : scan.structureSets) {
    out << "  " << dcm::shortName(rs.file) << ": label '" << rs.label << "', " << rs.roiCount
        << " ROI(s)";
    if (!rs.roiNames.empty()) {
      out << ":";
      for (std::size_t i = 0; i < rs.roiNames.size() && i < 12; ++i) out << " " << rs.roiNames[i];
      if (rs.roiNames.size() > 12) out << " ...";
    }
    out << "\n";
    if (!rs.usable) out << "    NOT usable: the import refuses it\n";
    for (const auto& p : rs.problems) out << "    ! " << p << "\n";
    out << "    frame of reference "
        << (rs.frameOfReferenceUid.empty() ? "(none)" : rs.frameOfReferenceUid);
    bool forKnown = false;
    for (const auto& s : scan.series) forKnown |= s.frameOfReferenceUid == rs.frameOfReferenceUid;
    out << (forKnown ? " (matches a scanned series)" : " (NO scanned series in it)") << "\n";
    for (const auto& uid : rs.referencedSeriesUids) {
      auto it = byUid.find(uid);
      out << "    references series " << uid;
      if (it == byUid.end())
        out << ": NOT FOUND in the scan\n";
      else {
        out << ": found as";
        for (const auto* s : it->second) out << " [" << s->key << "]";
        out << "\n";
      }
    }
    std::map<const SeriesInfo*, int> hits;
    int missing = 0;
    for (const auto& u : rs.referencedSopInstanceUids) {
      auto it = bySop.find(u);
      if (it == bySop.end())
        ++missing;
      else
        ++hits[it->second];
    }
    out << "    references " << rs.referencedSopInstanceUids.size() << " image(s)";
    for (const auto& [s, n] : hits) out << ", " << n << " in [" << s->key << "]";
    if (missing > 0) out << ", " << missing << " MISSING";
    out << "\n";
  }

  out << "\nOther objects (listed, not imported)\n";
  if (scan.otherObjects.empty()) out << "  (none)\n";
  for (const auto& o : scan.otherObjects) out << "  " << o << "\n";

  out << "\nVerdict\n";
  int importable = 0;
  for (const auto& s : scan.series)
    if (s.importable) {
      ++importable;
      out << "  importable: [" << s.key << "] " << s.description << "\n";
    }
  if (importable == 0)
    out << "  no importable image series"
        << (scan.series.empty() ? "" : " (see the problems above)") << "\n";

  out << "\nMessages\n";
  if (scan.messages.errors.empty() && scan.messages.warnings.empty()) out << "  (none)\n";
  for (const auto& e : scan.messages.errors) out << "  error: " << e << "\n";
  // Unreadable files can be many (a folder of non-DICOM files): show the first few.
  const std::size_t shown = 10;
  for (std::size_t i = 0; i < scan.messages.warnings.size() && i < shown; ++i)
    out << "  warning: " << scan.messages.warnings[i] << "\n";
  if (scan.messages.warnings.size() > shown)
    out << "  ... and " << scan.messages.warnings.size() - shown << " more warning(s)\n";
  return out.str();
}

}  // namespace penumbra::io
