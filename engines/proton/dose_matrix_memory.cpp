// Device memory of the GPU dose-matrix build (check, then run): the working arrays are sized
// from the request before anything is computed; the entries only once the GPU has counted them,
// so the CSR is allocated exactly and refused, with sizes, when it cannot fit. Plain arithmetic,
// compiled in every build so that the CPU-only tests check the numbers and the message.
#include <algorithm>
#include <atomic>
#include <sstream>

#include "core/error.hpp"
#include "proton/proton_backend.hpp"

namespace penumbra::proton::detail {

namespace {
std::atomic<std::size_t> testLimit{0};
}  // namespace

double doseMatrixWorkBytes(const DoseMatrixDeviceSizes& s) {
  const double input = s.fromCt ? 2.0 * s.inputVoxels + 4.0 * 65536 + 4.0 * s.inputVoxels
                                : 4.0 * s.inputVoxels;
  const double wepl = 8.0 * s.bevSamples;
  const double tables = 8.0 * s.tableValues;
  // Per tile-list entry the spot's (a, b) in double and its column; per (tile, layer) a begin.
  const double tiles = 4.0 * s.tileBegins + 20.0 * s.tileEntries;
  // Row counts and row offsets (int64, rows + 1 each), the scan's scratch (a few KiB per
  // million rows in CUB; 1 MiB covers it), column maxima and two counters.
  const double rows = 16.0 * (s.rows + 1) + (1 << 20) + 4.0 * s.cols + 16;
  return input + wepl + tables + tiles + rows;
}

void refuseDoseMatrixIfTooBig(double needBytes, double freeBytes, double workBytes,
                              std::int64_t rows, std::int64_t cols, std::int64_t entries,
                              const std::string& device) {
  if (needBytes <= 0.95 * freeBytes) return;  // NaN is refused too
  std::ostringstream m;
  m << "dose matrix on the GPU needs " << formatBytes(needBytes) << " but " << formatBytes(freeBytes)
    << " are free on " << device << " (" << rows << " voxels x " << cols << " spots; working arrays "
    << formatBytes(workBytes);
  if (entries >= 0)
    m << ", " << entries << " entries x 6 B = " << formatBytes(doseMatrixEntryBytes(double(entries)));
  m << "); build it on the CPU, or use a coarser dose grid or a higher matrix cut-off";
  PENUMBRA_THROW(OutOfMemory, m.str());
}

std::size_t doseMatrixFreeBytes(std::size_t actualFree) {
  const std::size_t limit = testLimit.load(std::memory_order_relaxed);
  return limit ? std::min(limit, actualFree) : actualFree;
}

void setDoseMatrixDeviceLimitForTests(std::size_t bytes) {
  testLimit.store(bytes, std::memory_order_relaxed);
}

}  // namespace penumbra::proton::detail
