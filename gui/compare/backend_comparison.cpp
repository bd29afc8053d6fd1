// CompareController::compareOtherBackend (issue 13, item 3, "Compare backends"): the same plan
// on the other backend or engine variant, then the comparison of the two dose sets. The engines
// promise that their CUDA backend matches the CPU reference within their tests' tolerances;
// this puts that promise in front of the user on their own plan, as a gamma pass rate.
#include <string>

#include <QWidget>

#include "gui/compare/compare_controller.hpp"
#include "gui/jobs/job_runner.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/plan/plan_controller.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra::gui {

namespace {
/// The "variant=" line of a dose set's provenance ("classic" or "dda-nc"), or empty.
std::string variantOf(const DoseSet& set) {
  const std::string& p = set.dose.parameters;
  const auto at = p.find("variant=");
  if (at == std::string::npos) return {};
  const auto end = p.find('\n', at);
  return p.substr(at + 8, end == std::string::npos ? std::string::npos : end - at - 8);
}
}  // namespace

DoseRunOptions CompareController::otherBackendOptions(const DoseSet& set, const DoseRunOptions& last, bool gpuUsable,
                                                      QString* what) {
  DoseRunOptions o = last;
  if (set.dose.backend == "cuda") {
    o.backend = Backend::Cpu;
    if (what) *what = tr("CPU");
  } else if (gpuUsable) {
    o.backend = Backend::Cuda;
    if (what) *what = tr("CUDA");
  } else {
    // No GPU: the engine variant is what can differ. Same backend, the other DDA traversal
    // (bit-identical voxel sequences are promised: a 100 % pass is the expected answer).
    o.backend = Backend::Cpu;
    o.variant = variantOf(set) == toString(DdaVariant::Classic) ? DdaVariant::BranchFree : DdaVariant::Classic;
    if (what) *what = tr("CPU, %1 ray tracing (no usable GPU)").arg(toString(o.variant));
  }
  return o;
}

bool CompareController::compareOtherBackend(PlanController* plan, CompareSettings settings) {
  const auto a = doseSets_->current();
  if (!a || a->dose.engine.empty() || a->dose.engine == "import") {
    emit finished(false, tr("Compare backends needs a dose computed from this plan as the current dose set."));
    return false;
  }
  if (isRunning()) {
    emit finished(false, tr("a comparison is already running"));
    return false;
  }
  QString what;
  const DoseRunOptions options = otherBackendOptions(*a, plan->lastDoseOptions(), !queryCudaDevices().empty(), &what);
  const std::string engine = a->dose.engine;
  Job* job = engine.rfind("photon", 0) == 0 ? plan->computePhotonDose(options) : plan->computeProtonDose(options);
  if (!job) {
    emit finished(false, tr("The plan could not be recomputed (see the messages)."));
    return false;
  }
  emit message(tr("Compare backends: %1 (A) against the same plan on %2 (B)").arg(a->name, what));
  // One answer per request: the new dose set, or the dose job's failure.
  auto* once = new QObject(this);
  const int aId = a->id;
  connect(plan, &PlanController::doseComputed, once, [this, once, aId, settings](int index) mutable {
    once->deleteLater();
    const auto b = doseSets_->at(index);
    if (doseSets_->indexOfId(aId) < 0 || !b) return emit finished(false, tr("The dose set to compare is gone."));
    settings.referenceId = aId;
    settings.evaluatedId = b->id;
    compute(settings);
  });
  connect(job, &Job::failed, once, [this, once](const QString& error) {
    once->deleteLater();
    emit finished(false, tr("Recomputing the plan failed: %1").arg(error));
  });
  connect(job, &Job::cancelled, once, [this, once] {
    once->deleteLater();
    emit finished(false, tr("Recomputing the plan was cancelled."));
  });
  return true;
}

}  // namespace penumbra::gui
