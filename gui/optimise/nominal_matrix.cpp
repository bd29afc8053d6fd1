#include "gui/optimise/nominal_matrix.hpp"

#include <chrono>

#include <QWidget>  // optimise_controller.hpp keeps a QPointer<QWidget>

#include "core/device.hpp"
#include "core/error.hpp"
#include "gui/optimise/robust_optimise_run.hpp"

namespace penumbra::gui {

namespace {

/// D on the GPU, kept there (onGpu), or on the CPU; then the SpMV engine.
std::unique_ptr<spmv::SpmvEngine> buildEngine(proton::ProtonDoseRequest req, bool onGpu,
                                              const optimise::PlanObjective& objective, const spmv::SpmvOptions& so,
                                              const JobControl& jc, OptimiseOutcome& outcome, Grid& doseGrid) {
  req.backend = onGpu ? Backend::Cuda : Backend::Cpu;
  req.params.doseMatrixOnDevice = onGpu;
  ScaledSink sink(jc, 0.0, 0.3);
  proton::ProtonDoseResult built = proton::computeProtonDose(req, JobControl{&sink, jc.cancel});
  if (onGpu ? !built.deviceMatrix : !built.matrix)
    throw Error(ErrorCode::Internal, "the proton engine returned no dose matrix");
  doseGrid = built.dose.grid;
  outcome.rows = onGpu ? built.deviceMatrix->rows : built.matrix->rows;
  outcome.cols = onGpu ? built.deviceMatrix->cols : built.matrix->cols;
  outcome.nnz = onGpu ? built.deviceMatrix->nnz : built.matrix->nnz();
  objective.validate(outcome.rows);
  jc.report(0.3, onGpu ? "optimise: SpMV engine (D^T and layouts on the GPU)" : "optimise: SpMV engine (D and its transpose)");
  auto engine = onGpu ? std::make_unique<spmv::SpmvEngine>(std::move(*built.deviceMatrix), so, jc)
                      : std::make_unique<spmv::SpmvEngine>(std::move(static_cast<spmv::HalfCsr&>(*built.matrix)), so, jc);
  const std::string where = engine->deviceName().empty() ? toString(engine->backend()) : engine->deviceName();
  outcome.backend = QString::fromStdString(where + (onGpu ? ", D kept on the GPU" : ""));
  return engine;
}

}  // namespace

std::unique_ptr<spmv::SpmvEngine> makeNominalEngine(const proton::ProtonDoseRequest& plan,
                                                   const optimise::PlanObjective& objective,
                                                   const OptimiseSettings& settings, int cpuThreads,
                                                   const JobControl& jc, OptimiseOutcome& outcome,
                                                   Grid& doseGrid) {
  const auto t0 = std::chrono::steady_clock::now();
  proton::ProtonDoseRequest req = plan;
  req.params.computeDoseMatrix = true;
  req.params.doseMatrixRelativeCutoff = settings.relativeCutoff;
  spmv::SpmvOptions so;
  so.backend = settings.spmvBackend;
  so.cpuThreads = cpuThreads;
  req.params.cpuThreads = cpuThreads;
  std::unique_ptr<spmv::SpmvEngine> engine;
  QString note;
  if (settings.spmvBackend != Backend::Cpu && selectBackend(settings.spmvBackend).backend == Backend::Cuda) {
    try {
      engine = buildEngine(req, true, objective, so, jc, outcome, doseGrid);
    } catch (const Error& e) {
      // Under Auto a matrix too large for the GPU is built and multiplied on the CPU instead.
      if (e.code() != ErrorCode::OutOfMemory || settings.spmvBackend == Backend::Cuda) throw;
      note = QString::fromStdString(" (the dose matrix did not fit the GPU: " + e.message() + ")");
      so.backend = Backend::Cpu;
    }
  }
  if (!engine) {
    engine = buildEngine(req, false, objective, so, jc, outcome, doseGrid);
    outcome.backend += note;
  }
  jc.report(0.4, "optimise: dose matrix ready");
  outcome.matrixSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return engine;
}

}  // namespace penumbra::gui
