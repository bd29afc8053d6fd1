#pragma once
/// The nominal branch's dose-deposition matrix and SpMV engine (on the optimisation job's worker
/// thread; no Qt objects). Where the products go to a GPU, D is built there and stays there: the
/// proton engine's GPU build hands it to the SpMV engine, which transposes it and lays it out on
/// the device (hn-2field at 1 mm: 0.33 s instead of ~14 s through the host; docs/benchmarks.md).
/// Otherwise, or when D does not fit the GPU under Backend::Auto (a note in the outcome's
/// backend says so), D is built and multiplied on the CPU.
#include <memory>

#include "core/progress.hpp"
#include "gui/optimise/optimise_controller.hpp"
#include "optimise/objective.hpp"
#include "proton/proton_dose.hpp"
#include "spmv/spmv.hpp"

namespace penumbra::gui {

/// Builds D for `plan` at settings.relativeCutoff, validates `objective` against its rows and
/// makes the SpMV engine (settings.spmvBackend). Progress 0..0.4 of the job. Fills `outcome`'s
/// rows, spots, non-zeros, backend and matrixSeconds, and `doseGrid`.
std::unique_ptr<spmv::SpmvEngine> makeNominalEngine(const proton::ProtonDoseRequest& plan,
                                                   const optimise::PlanObjective& objective,
                                                   const OptimiseSettings& settings, int cpuThreads,
                                                   const JobControl& jc, OptimiseOutcome& outcome,
                                                   Grid& doseGrid);

}  // namespace penumbra::gui
