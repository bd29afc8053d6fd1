// Import benchmark: scan + CT + structure import of BOXPHANTOM and of the largest CT series
// among the DICOM samples, on this machine's CPU.
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

  // Largest importable CT series among the samples (by voxels); the timing includes the scan
  // of the whole samples folder, as in the GUI.
  const auto scan = io::scanDicomFolder(data + "/dicom-samples");
  const io::SeriesInfo* best = nullptr;
  for (const auto& s : scan.series)
    if (s.modality == "CT" && s.importable &&
        (!best || double(s.slices) * s.rows * s.columns >
                      double(best->slices) * best->rows * best->columns))
      best = &s;
  if (best) {
    BenchRow r = timeImport("samples-largest-ct", data + "/dicom-samples", best->key,
                            best->slices, reps);
    r.note += ", " + best->description;
    rows.push_back(r);
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
