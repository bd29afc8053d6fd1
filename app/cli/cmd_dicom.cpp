// inspect / import: DICOM subcommands (need PENUMBRA_DICOM).
#include <iostream>

#include "cli_commands.hpp"

#ifdef PENUMBRA_HAVE_DICOM
#include <chrono>
#include <iomanip>
#include <numeric>

#include "dicom/dicom_import.hpp"
#include "dicom/synthetic_phantom.hpp"
#endif

namespace penumbra::cli {

#ifdef PENUMBRA_HAVE_DICOM
namespace {
void printMessages(const io::ImportMessages& m) {
  for (const auto& w : m.warnings) std::cout << "warning: " << w << "\n";
  for (const auto& e : m.errors) std::cout << "error: " << e << "\n";
}
}  // namespace

int cmdInspect(Args args) {
  if (args.empty()) {
    std::cerr << "usage: penumbra-cli inspect DIR\n";
    return 2;
  }
  const auto scan = io::scanDicomFolder(args[0]);
  std::cout << io::dicomDoctorReport(scan);
  // Non-zero when `import` would fail for every series (the report says why).
  for (const auto& s : scan.series)
    if (s.importable) return 0;
  return 1;
}

int cmdImport(Args args) {
  const std::string series = takeOption(args, "--series");
  if (args.empty()) {
    std::cerr << "usage: penumbra-cli import DIR [--series KEY]\n";
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto scan = io::scanDicomFolder(args[0]);
  auto result = io::importPatient(scan, series);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  printMessages(scan.messages);
  printMessages(result.messages);
  if (!result.ok()) return 1;
  const auto& p = result.patient;
  const auto& g = p.ct.grid;
  std::cout << std::fixed << std::setprecision(3) << "patient " << p.name << " (" << p.id
            << ")\nCT " << g.dims[0] << " x " << g.dims[1] << " x " << g.dims[2] << " voxels of "
            << g.spacing.x << " x " << g.spacing.y << " x " << g.spacing.z
            << " mm, first voxel centre (" << g.origin.x << ", " << g.origin.y << ", "
            << g.origin.z << ") mm\n";
  for (const auto& s : p.structures.structures) {
    const std::size_t n =
        std::accumulate(s.mask.data.begin(), s.mask.data.end(), std::size_t(0));
    std::cout << "structure " << std::setw(20) << std::left << s.name << std::right
              << " type " << std::setw(10) << (s.interpretedType.empty() ? "-" : s.interpretedType)
              << " voxels " << std::setw(9) << n << "  volume " << std::setprecision(2)
              << double(n) * g.voxelVolumeMm3() / 1000.0 << " cc (voxel count)\n"
              << std::setprecision(3);
  }
  std::cout << "imported in " << std::setprecision(0) << ms << " ms\n";
  return 0;
}
int cmdMakeDemo(Args args) {
  if (args.empty()) {
    std::cerr << "usage: penumbra-cli make-demo DIR\n";
    return 2;
  }
  io::SyntheticPhantomSpec spec;  // water box with a central PTV, 2 mm voxels
  spec.rows = spec.columns = 128;
  spec.slices = 64;
  spec.origin = {-127, -127, -63};
  const auto files = io::writeSyntheticPhantom(args[0], spec);
  std::cout << "wrote " << files.ctFiles.size() << " CT slices and "
            << (files.structureSetFile.empty() ? "no structure set" : files.structureSetFile)
            << " to " << args[0] << "\n";
  return 0;
}
#else
int cmdMakeDemo(Args args) { return cmdInspect(args); }
int cmdInspect(Args) {
  std::cerr << "penumbra-cli: this build has no DICOM support (PENUMBRA_DICOM=OFF)\n";
  return 1;
}
int cmdImport(Args args) { return cmdInspect(args); }
#endif

}  // namespace penumbra::cli
