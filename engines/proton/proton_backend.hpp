#pragma once
/// Internal interface between computeProtonDose() (validation, estimate, dispatch) and the
/// backends. Not part of the public API; tests use it to reach single stages.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/progress.hpp"
#include "proton/proton_dose.hpp"

namespace penumbra::proton::detail {

/// Everything resolved from a request before a backend runs.
struct ResolvedRequest {
  const ProtonDoseRequest* request = nullptr;
  Grid doseGrid;
  std::vector<PreparedBeam> beams;
  /// 65536 entries, SPR of HU = index - 32768 (null with SPR input). Shared with makeSprLut()'s
  /// cache: a repeated call neither copies nor compares the 256 KB when the curve is the same.
  std::shared_ptr<const std::vector<float>> sprLut;
  /// Set when the preparation of the beams is deferred (the CUDA dose backend with tile lists
  /// on the GPU): `beams` then holds each beam's layout only, and this fills them in full. The
  /// backend calls it once its WEPL traces, which need the layouts only, are on their way, so
  /// that the host prepares while the GPU traces.
  std::function<void(std::vector<PreparedBeam>&)> prepareBeams;
  int threads = 1;
};

/// workspaceBytes(), and the beams' layouts it made (cached) when `layouts` is not null.
WorkspaceEstimate estimate(const ProtonDoseRequest& request, std::vector<BeamLayout>* layouts);

/// Throws Internal unless every beam that reaches the dose grid carries its tile lists on the
/// host (PreparedBeam::tileListsOnHost): the CPU backend and the dose-matrix builds read them.
inline void requireHostTileLists(const ResolvedRequest& r, const char* who) {
  for (const PreparedBeam& b : r.beams)
    PENUMBRA_REQUIRE(b.layout.empty || b.tileListsOnHost, Internal,
                     std::string(who) + ": a beam was prepared without its tile lists");
}

/// SPR of every int16 HU through the calibration curve, as float (the same table on both
/// backends, so they convert bit for bit). The last curve's table is kept and shared.
std::shared_ptr<const std::vector<float>> makeSprLut(const CalibrationCurve& hlut);
/// SPR volume of the request (the given one, or the CT converted through the LUT).
Volume<float> resolveSpr(const ResolvedRequest& r);

// ---- CPU reference (cpu/proton_dose_cpu.cpp) ------------------------------------------------

/// WEPL [mm] at every BEV sample of a beam, layout (k nB + j) nA + i.
std::vector<double> traceBevWeplCpu(const Volume<float>& spr, const PreparedBeam& beam,
                                    DdaVariant variant, int threads, const JobControl& job);
/// BEV dose [Gy] of a beam from its WEPL; adds the evaluated contributions to *contributions.
std::vector<double> superposeBevCpu(const PreparedBeam& beam, const std::vector<double>& wepl,
                                    double cutoffSigmas, int threads, const JobControl& job,
                                    std::uint64_t* contributions);
/// dose[v] += trilinear BEV dose at dose-grid voxel v.
void addBevToPatientCpu(const PreparedBeam& beam, const std::vector<double>& bevDose,
                        const Grid& doseGrid, std::vector<double>& dose, int threads);
void computeCpu(const ResolvedRequest& r, ProtonDoseResult& result, const JobControl& job);

// ---- dose-deposition matrix (cpu/dose_matrix.cpp) -------------------------------------------

DoseMatrixCsr buildDoseMatrixCpu(const ResolvedRequest& r, const Volume<float>& spr,
                                 const JobControl& job);

// ---- CUDA (cuda/proton_dose_cuda.cu; proton_dose_nocuda.cpp throws Unsupported) -------------

/// Calls r.prepareBeams (when set) itself: hence the non-const request.
void computeCuda(ResolvedRequest& r, ProtonDoseResult& result, const JobControl& job);

/// A beam's tile lists as the CUDA backend builds them on the GPU (TileLists::OnDevice),
/// downloaded: {tileLayerBegin, tileSpots} in PreparedBeam's layout. For the tests that hold
/// them against prepareBeam()'s host lists; the output buffers are poisoned first.
std::pair<std::vector<int>, std::vector<int>> deviceTileListsForTests(const PreparedBeam& beam);

// ---- dose-deposition matrix on the GPU (cuda/dose_matrix_cuda.cu; nocuda: Unsupported) ------

/// The same matrix as buildDoseMatrixCpu (structure exact; values equal but where CUDA's and
/// glibc's exp() differ in the last bit), built on the GPU and downloaded; appends its kernel
/// and stage profiles to `profiles`. Refuses (OutOfMemory) before allocating what does not fit.
DoseMatrixCsr buildDoseMatrixCuda(const ResolvedRequest& r, const JobControl& job,
                                  std::vector<KernelProfile>& profiles);
/// The same matrix left on the GPU (ProtonDoseParameters::doseMatrixOnDevice).
std::shared_ptr<spmv::DeviceHalfCsr> buildDoseMatrixCudaOnDevice(const ResolvedRequest& r,
                                                                 const JobControl& job,
                                                                 std::vector<KernelProfile>& profiles);

// ---- the GPU build's memory (dose_matrix_memory.cpp: pure arithmetic, tested without a GPU) --

/// Sizes that fix the GPU build's working arrays (known before anything is computed).
struct DoseMatrixDeviceSizes {
  double inputVoxels = 0;  ///< CT or SPR voxels
  bool fromCt = false;     ///< the CT (int16) and the HU LUT are uploaded and converted
  double rows = 0, cols = 0;
  double bevSamples = 0;   ///< all beams together (each beam's WEPL is kept, in double)
  double tileBegins = 0, tileEntries = 0;  ///< all beams' tile lists
  double tableValues = 0;  ///< IDD + sigma values of the distinct energies
};
/// Device bytes of the working arrays: SPR (+ CT and LUT), double WEPL of every beam, double
/// tables, tile lists (spot positions in double), row counts and offsets, column maxima.
double doseMatrixWorkBytes(const DoseMatrixDeviceSizes& s);
/// Device bytes of the finished CSR's entries: int32 column + fp16 value each (the int64 row
/// offsets are part of the working arrays).
inline double doseMatrixEntryBytes(double entries) { return 6.0 * entries; }
/// Throws OutOfMemory when `needBytes` (what is about to be allocated) exceed 95 % of
/// `freeBytes`, naming the matrix size, the working arrays, the entries (once counted,
/// entries >= 0) and the device: "dose matrix on the GPU needs ...".
void refuseDoseMatrixIfTooBig(double needBytes, double freeBytes, double workBytes,
                              std::int64_t rows, std::int64_t cols, std::int64_t entries,
                              const std::string& device);
/// Free device memory as the GPU build sees it: `actualFree`, or less where a test has set a
/// limit (0: no limit). The hook exists so that the refusal can be tested on any GPU.
std::size_t doseMatrixFreeBytes(std::size_t actualFree);
void setDoseMatrixDeviceLimitForTests(std::size_t bytes);

}  // namespace penumbra::proton::detail
