#pragma once
/// Internal interface between computeProtonDose() (validation, estimate, dispatch) and the
/// backends. Not part of the public API; tests use it to reach single stages.
#include <cstdint>
#include <vector>

#include "core/progress.hpp"
#include "proton/proton_dose.hpp"

namespace penumbra::proton::detail {

/// Everything resolved from a request before a backend runs.
struct ResolvedRequest {
  const ProtonDoseRequest* request = nullptr;
  Grid doseGrid;
  std::vector<PreparedBeam> beams;
  std::vector<float> sprLut;  ///< 65536 entries, SPR of HU = index - 32768 (empty with SPR input)
  int threads = 1;
};

/// SPR of every int16 HU through the calibration curve, as float (the same table on both
/// backends, so they convert bit for bit).
std::vector<float> makeSprLut(const CalibrationCurve& hlut);
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

void computeCuda(const ResolvedRequest& r, ProtonDoseResult& result, const JobControl& job);

}  // namespace penumbra::proton::detail
