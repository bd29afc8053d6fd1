// Import benchmark: scan + CT + structure import of BOXPHANTOM and of the largest CT series
// among the DICOM samples, on this machine's CPU.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "bench_table.hpp"
#include "cli_commands.hpp"

#ifdef PENUMBRA_HAVE_DICOM
#include "dicom/dicom_import.hpp"
#endif

namespace penumbra::cli {

#ifdef PENUMBRA_HAVE_DICOM
namespace {

BenchRow timeImport(const std::string& caseName, const std::string& folder,
                    const std::string& seriesKey, int slices, int reps) {
  std::string error;
  KernelProfile p = timeHost(
      "scan+import", "dcmtk",
      [&] {
        const auto scan = io::scanDicomFolder(folder);
        const auto r = io::importPatient(scan, seriesKey);
        if (!r.ok() && error.empty())
          error = r.messages.errors.empty() ? "import failed" : r.messages.errors.front();
      },
      reps, 1);
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.0f slices/s", slices / (p.medianMs / 1000.0));
  return BenchRow{"import", caseName, p, rate,
                  error.empty() ? std::to_string(slices) + " slices" : "FAILED: " + error};
}

}  // namespace

std::vector<BenchRow> benchImport(int reps) {
  std::vector<BenchRow> rows;
  const std::string data = dataDir();
  const std::string box = data + "/phantoms/BOXPHANTOM";
  if (!std::filesystem::exists(box)) {
    std::cout << "import: skipped, " << box << " not found (set PENUMBRA_TEST_DATA)\n";
    return rows;
  }
  rows.push_back(timeImport("boxphantom", box, "", 160, reps));

  // Largest CT series among the samples (by voxels) that imports: some sample series use
  // transfer syntaxes we cannot decode (JPEG 2000), which the scan alone cannot tell. The
  // timing includes the scan of the whole samples folder, as in the GUI.
  const std::string samples = data + "/dicom-samples";
  const auto scan = io::scanDicomFolder(samples);
  std::vector<const io::SeriesInfo*> ct;
  for (const auto& s : scan.series)
    if (s.modality == "CT" && s.importable) ct.push_back(&s);
  std::sort(ct.begin(), ct.end(), [](const io::SeriesInfo* a, const io::SeriesInfo* b) {
    return double(a->slices) * a->rows * a->columns > double(b->slices) * b->rows * b->columns;
  });
  for (const io::SeriesInfo* s : ct) {
    if (!io::importPatient(scan, s->key).ok()) continue;
    BenchRow r = timeImport("samples-largest-ct", samples, s->key, s->slices, reps);
    r.note += ", " + s->description;
    rows.push_back(r);
    break;
  }
  return rows;
}
#else
std::vector<BenchRow> benchImport(int) {
  std::cout << "import: skipped, this build has no DICOM support\n";
  return {};
}
#endif

}  // namespace penumbra::cli
