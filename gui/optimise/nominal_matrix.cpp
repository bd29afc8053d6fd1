#include "gui/optimise/nominal_matrix.hpp"

#include <chrono>

#include <QWidget>  // optimise_controller.hpp keeps a QPointer<QWidget>

#include "core/device.hpp"
#include "core/error.hpp"
#include "gui/optimise/robust_optimise_run.hpp"

namespace penumbra::gui {

namespace {

std::unique_ptr<spmv::SpmvEngine> engineOnGpu(proton::ProtonDoseRequest req, const optimise::PlanObjective& objective,
                                              const spmv::SpmvOptions& so, const JobControl& jc,
                                              OptimiseOutcome& outcome, Grid& doseGrid) {
  req.backend = Backend::Cuda;
  req.params.doseMatrixOnDevice = true;
  ScaledSink sink(jc, 0.0, 0.3);
  proton::ProtonDoseResult built = proton::computeProtonDose(req, JobControl{&sink, jc.cancel});
  if (!built.deviceMatrix) throw Error(ErrorCode::Internal, "the proton engine returned no dose matrix on the GPU");
  doseGrid = built.dose.grid;
  outcome.rows = built.deviceMatrix->rows;
  outcome.cols = built.deviceMatrix->cols;
  outcome.nnz = built.deviceMatrix->nnz;
  objective.validate(outcome.rows);
  jc.report(0.3, "optimise: SpMV engine (D^T and layouts on the GPU)");
  auto engine = std::make_unique<spmv::SpmvEngine>(std::move(*built.deviceMatrix), so, jc);
  outcome.backend = QString::fromStdString(engine->deviceName() + ", D kept on the GPU");
  return engine;
}

std::unique_ptr<spmv::SpmvEngine> engineOnHost(proton::ProtonDoseRequest req, const optimise::PlanObjective& objective,
                                               const spmv::SpmvOptions& so, const JobControl& jc,
                                               OptimiseOutcome& outcome, Grid& doseGrid) {
  req.backend = Backend::Cpu;
  req.params.doseMatrixOnDevice = false;
  ScaledSink sink(jc, 0.0, 0.3);
  proton::ProtonDoseResult built = proton::computeProtonDose(req, JobControl{&sink, jc.cancel});
  if (!built.matrix) throw Error(ErrorCode::Internal, "the proton engine returned no dose matrix");
  doseGrid = built.dose.grid;
  outcome.rows = built.matrix->rows;
  outcome.cols = built.matrix->cols;
  outcome.nnz = built.matrix->nnz();
  objective.validate(outcome.rows);
  jc.report(0.3, "optimise: SpMV engine (D and its transpose)");
  auto engine = std::make_unique<spmv::SpmvEngine>(std::move(static_cast<spmv::HalfCsr&>(*built.matrix)), so, jc);
  outcome.backend =
      QString::fromStdString(engine->deviceName().empty() ? toString(engine->backend()) : engine->deviceName());
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
      engine = engineOnGpu(req, objective, so, jc, outcome, doseGrid);
    } catch (const Error& e) {
      // Under Auto a matrix too large for the GPU is built and multiplied on the CPU instead.
      if (e.code() != ErrorCode::OutOfMemory || settings.spmvBackend == Backend::Cuda) throw;
      note = QString::fromStdString(" (the dose matrix did not fit the GPU: " + e.message() + ")");
      so.backend = Backend::Cpu;
    }
  }
  if (!engine) {
    engine = engineOnHost(req, objective, so, jc, outcome, doseGrid);
    outcome.backend += note;
  }
  jc.report(0.4, "optimise: dose matrix ready");
  outcome.matrixSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return engine;
}

}  // namespace penumbra::gui
